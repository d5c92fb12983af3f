"""The layers of docs/architecture.md ("Layers"), checked against every import in the code.

The table in the document is the rule: each top-level folder of the installed namespace and the
folders it may import. A lazy import inside a function counts like one at the top; a folder the
table does not name fails, so a new folder has to be placed in it.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
PURE_EXTRAS = {"ujson"}  # protocol/'s one dependency beyond the standard library (fast JSON)


def documented_rules() -> dict[str, set[str]]:
    section = DOC.read_text().split("### Layers", 1)[1].split("\n## ", 1)[0]
    rules: dict[str, set[str]] = {}
    for folder, allowed in re.findall(r"^\| `(\w+)/` \| (.+?) \|$", section, flags=re.M):
        rules[folder] = set(re.findall(r"`(\w+)`", allowed))
    return rules


def installed_folders() -> set[str]:
    """The folders installed under ``zcode_acp``: each is linked into zcode_acp/ (docs/architecture.md, Layout)."""
    return {link.name for link in (ROOT / "zcode_acp").iterdir() if link.is_symlink()}


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every import in the file, absolute names, wherever it sits."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
            if node.module == "zcode_acp":  # from zcode_acp import protocol → the folder it names
                found += [(node.lineno, f"zcode_acp.{alias.name}") for alias in node.names]
    return found


def violations(folder: str, allowed: set[str], known: set[str], root: Path = ROOT) -> list[str]:
    wrong = []
    for path in sorted((root / folder).rglob("*.py")):
        for line, module in imports_of(path):
            parts = module.split(".")
            if parts[0] in known and parts[0] != folder:
                wrong.append(f"{path.relative_to(root)}:{line} imports {module} without the zcode_acp namespace")
            if parts[0] != "zcode_acp" or len(parts) < 2 or parts[1] not in known:
                continue
            target = parts[1]
            if target != folder and target not in allowed:
                wrong.append(f"{path.relative_to(root)}:{line} imports {module}: {folder}/ may not import {target}/")
    return wrong


def test_the_document_places_every_installed_folder():
    rules = documented_rules()
    assert rules, "docs/architecture.md has no Layers table: the scan is broken"
    assert set(rules) == installed_folders(), "the Layers table and the folders linked into zcode_acp/ differ"


@pytest.mark.parametrize("folder", sorted(documented_rules()))
def test_each_folder_imports_only_what_its_layer_allows(folder: str):
    rules = documented_rules()
    assert (ROOT / folder).is_dir(), f"docs/architecture.md names {folder}/, which does not exist"
    assert not violations(folder, rules[folder], set(rules)), "\n".join(violations(folder, rules[folder], set(rules)))


def test_protocol_imports_nothing_but_the_standard_library():
    wrong = []
    for path in sorted((ROOT / "protocol").rglob("*.py")):
        for line, module in imports_of(path):
            top = module.split(".")[0]
            if top not in sys.stdlib_module_names and top not in PURE_EXTRAS and top != "zcode_acp":
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert not wrong, "protocol/ must stay pure (no gevent, pykka or I/O libraries):\n" + "\n".join(wrong)


def test_the_scan_sees_a_forbidden_import(tmp_path: Path):
    """The checker itself: a lazy import of the command line in an actor module is caught."""
    (tmp_path / "actors").mkdir()
    (tmp_path / "actors" / "sample.py").write_text("def later():\n    from zcode_acp.cli.main import main\n")
    rules = documented_rules()
    assert violations("actors", rules["actors"], set(rules), root=tmp_path) == [
        "actors/sample.py:2 imports zcode_acp.cli.main: actors/ may not import cli/"]


# -- the simulator's own layers (docs/simulator.md, "Layers") ---------------------------------------

SIM = ROOT / "sim"
SIM_DOC = ROOT / "docs" / "simulator.md"


def sim_layers() -> dict[str, int]:
    """Module (or ``v4``, the folder) → its layer, lowest 1, from the table in docs/simulator.md."""
    section = SIM_DOC.read_text().split("### Layers", 1)[1].split("\n## ", 1)[0]
    layers: dict[str, int] = {}
    for number, modules in re.findall(r"^\| (\d+) [^|]*\| (.+?) \|$", section, flags=re.M):
        layers.update(dict.fromkeys(re.findall(r"`(\w+)`", modules), int(number)))
    return layers


def sim_unit(path: Path, root: Path) -> str:
    """The table's name for a simulator file: its module, or ``v4`` for anything in sim/v4/."""
    parts = path.relative_to(root).with_suffix("").parts
    return parts[0]


def sim_imports(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, table name) for every import of another simulator unit in the file, relative or absolute."""
    here = path.relative_to(root).parent.parts  # () for sim/x.py, ("v4",) for sim/v4/x.py
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[tuple[str, ...]] = []
        if isinstance(node, ast.Import):
            names = [tuple(alias.name.split("."))[2:] for alias in node.names if alias.name.startswith("zcode_acp.sim.")]
        elif isinstance(node, ast.ImportFrom):
            module = tuple(node.module.split(".")) if node.module else ()
            if node.level:  # from . import x, from .x import y, from ..x import y (in sim/v4/)
                module = here[: len(here) - node.level + 1] + module
            elif module[:2] == ("zcode_acp", "sim"):
                module = module[2:]
            else:
                continue
            names = [module or (alias.name,) for alias in node.names]
        found += [(node.lineno, name[0]) for name in names
                  if name and (name[0] == "v4" or (root / f"{name[0]}.py").exists())]
    return found


def sim_violations(root: Path = SIM) -> list[str]:
    layers = sim_layers()
    graph: dict[str, set[str]] = {}
    wrong = []
    for path in sorted(root.rglob("*.py")):
        unit = sim_unit(path, root)
        if unit not in layers:
            wrong.append(f"sim/{path.relative_to(root)} is in no layer of docs/simulator.md")
            continue
        for line, target in sim_imports(path, root):
            if target == unit:
                continue
            graph.setdefault(unit, set()).add(target)
            if layers.get(target, 0) > layers[unit]:
                wrong.append(f"sim/{path.relative_to(root)}:{line} imports {target} (layer {layers[target]}) "
                             f"from layer {layers[unit]}")
    wrong += [f"a circle of imports: {' → '.join(circle)}" for circle in circles(graph)]
    return wrong


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each unit that can reach itself (depth-first, in name order)."""
    found: list[list[str]] = []
    seen: set[str] = set()
    for start in sorted(graph):
        stack = [(start, [start])]
        visited: set[str] = set()
        while stack:
            unit, trail = stack.pop()
            for target in sorted(graph.get(unit, ())):
                if target == start:
                    if not set(trail) & seen:
                        found.append([*trail, start])
                        seen.update(trail)
                elif target not in visited:
                    visited.add(target)
                    stack.append((target, [*trail, target]))
    return found


def test_the_simulator_imports_only_downward_and_never_in_a_circle():
    assert sim_layers(), "docs/simulator.md has no Layers table: the scan is broken"
    wrong = sim_violations()
    assert not wrong, "the simulator's layers (docs/simulator.md, Layers):\n" + "\n".join(wrong)


def test_the_simulator_scan_sees_an_upward_import_and_a_circle(tmp_path: Path):
    """The checker itself: a type-only import of the server from the runner is upward and closes a circle."""
    (tmp_path / "runner.py").write_text("if TYPE_CHECKING:\n    from .server import SimServer\n")
    (tmp_path / "server.py").write_text("def later():\n    from zcode_acp.sim import runner\n")
    assert sim_violations(tmp_path) == ["sim/runner.py:2 imports server (layer 4) from layer 3",
                                        "a circle of imports: runner → server → runner"]
# -- the Session and its engine paths (docs/architecture.md, "The Session's engine paths") -------------

SESSION = ROOT / "actors" / "session"
SESSION_PACKAGE = "zcode_acp.actors.session"
# The Session actor: its layers (core.py → … → actor.py) and the package that exports it.
SESSION_ACTOR = ("__init__", "core", "prompting", "stream", "loading", "actor")
# Each path's code: a module or subpackage of actors/session/ whose name starts so.
PATHS = {"legacy": "legacy", "v4": "v4"}
# The chooser (paths.py) may import each path's one entry: the class the Session holds.
PATH_ENTRIES = {"zcode_acp.actors.session.legacy.path", "zcode_acp.actors.session.v4.engine",
                "zcode_acp.actors.session.legacy", "zcode_acp.actors.session.v4"}


def session_module(path: Path) -> str:
    """``core``, ``v4path``, ``v4.feed``: the module's name under actors/session/."""
    return ".".join(path.relative_to(SESSION).with_suffix("").parts)


def path_of(module: str) -> str | None:
    """Which engine path the module under actors/session/ belongs to, if any."""
    top = module.split(".")[0]
    return next((name for name, prefix in PATHS.items() if top.startswith(prefix)), None)


def session_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module under actors/session/) for each import of the Session's package, ``from
    zcode_acp.actors.session import x`` naming the module ``x``."""
    found = []
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
            if node.module == SESSION_PACKAGE:  # a module of the package, or a name its __init__ exports
                names = [f"{SESSION_PACKAGE}.{alias.name}" if alias.name.islower() else SESSION_PACKAGE
                         for alias in node.names]
        for name in names:
            if name == SESSION_PACKAGE:
                found.append((node.lineno, "__init__"))
            elif name.startswith(SESSION_PACKAGE + "."):
                found.append((node.lineno, name[len(SESSION_PACKAGE) + 1:]))
    return found


def seam_violations(root: Path = ROOT) -> list[str]:
    session = root / "actors" / "session"
    wrong = []
    for path in sorted(session.rglob("*.py")):
        here = ".".join(path.relative_to(session).with_suffix("").parts)
        here_path = path_of(here)
        if here_path is not None and "." not in here:
            # The Session's rooms: a path's code in its subpackage; what is not a Session's (the
            # Supervisor's sessions-index watch) outside actors/session/ (docs/architecture.md, Layout).
            wrong.append(f"{path.relative_to(root)}: a {here_path} module outside actors/session/{PATHS[here_path]}/")
        for line, target in session_imports(path):
            where = f"{path.relative_to(root)}:{line} imports {SESSION_PACKAGE}.{target}"
            target_path = path_of(target)
            if here.split(".")[0] in SESSION_ACTOR and target_path is not None:
                wrong.append(f"{where}: the Session reaches a path only through path.py and paths.py")
            if here == "paths" and target_path is not None and f"{SESSION_PACKAGE}.{target}" not in PATH_ENTRIES:
                wrong.append(f"{where}: the chooser imports a path's entry only")
            if here_path is not None and target.split(".")[0] in SESSION_ACTOR:
                wrong.append(f"{where}: a path reaches its Session only through its SessionPort")
            if here_path is not None and target_path is not None and target_path != here_path:
                wrong.append(f"{where}: one engine path never imports the other")
    return wrong


def test_the_session_and_its_engine_paths_meet_only_at_the_seam():
    assert any(path_of(session_module(p)) == "v4" for p in SESSION.rglob("*.py")), "no v4 path found: the scan is broken"
    assert any(path_of(session_module(p)) == "legacy" for p in SESSION.rglob("*.py")), "no legacy path found"
    assert not seam_violations(), "\n".join(seam_violations())


@pytest.mark.parametrize("module,source,expected", [
    ("core", "from zcode_acp.actors.session.v4.feed import V4Feed\n", "the Session reaches a path only"),
    ("actor", "def later():\n    from zcode_acp.actors.session.legacy.path import LegacyPath\n",
     "the Session reaches a path only"),
    ("v4.feed", "from zcode_acp.actors.session import core\n", "a path reaches its Session only"),
    ("v4.path", "from zcode_acp.actors.session import Session\n", "a path reaches its Session only"),
    ("legacy.path", "from zcode_acp.actors.session.prompting import SessionPrompts\n",
     "a path reaches its Session only"),
    ("legacy.path", "from zcode_acp.actors.session.v4.path import V4Path\n", "one engine path never imports"),
    # The sessions-index watch was here once: the Supervisor's actor, now actors/v4_sessions_index.py.
    ("v4index", "import functools\n", "a v4 module outside actors/session/v4/"),
    ("paths", "from zcode_acp.actors.session.v4.path import V4Path\n", "the chooser imports a path's entry only"),
])
def test_the_seam_scan_sees_a_forbidden_import(tmp_path: Path, module: str, source: str, expected: str):
    target = tmp_path / "actors" / "session" / f"{module.replace('.', '/')}.py"
    target.parent.mkdir(parents=True)
    target.write_text(source)
    found = seam_violations(root=tmp_path)
    assert len(found) == 1 and expected in found[0], found


def v4_branches(root: Path = ROOT) -> list[str]:
    """Every ``x.v4`` and ``getattr(x, "v4", …)`` in the Session's modules: the Session asking which path it holds."""
    found = []
    for path in sorted((root / "actors" / "session").rglob("*.py")):
        if path_of(".".join(path.relative_to(root / "actors" / "session").with_suffix("").parts)) is not None:
            continue  # a path may name its own parts
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Attribute) and node.attr == "v4":
                found.append(f"{path.relative_to(root)}:{node.lineno} reads .v4")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                    and any(isinstance(arg, ast.Constant) and arg.value == "v4" for arg in node.args):
                found.append(f"{path.relative_to(root)}:{node.lineno} looks up v4")
    return found


def test_the_session_never_asks_which_engine_path_it_holds(tmp_path: Path):
    assert not v4_branches(), "\n".join(v4_branches())
    (tmp_path / "actors" / "session").mkdir(parents=True)
    (tmp_path / "actors" / "session" / "core.py").write_text(
        "def f(self):\n    if self.v4 is not None:\n        return getattr(self.port, 'v4', None)\n")
    assert v4_branches(root=tmp_path) == ["actors/session/core.py:2 reads .v4", "actors/session/core.py:3 looks up v4"]

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

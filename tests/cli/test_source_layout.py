"""The source tree is the installed layout (docs/architecture.md, Layout).

Each top-level package folder (``actors/``, ``protocol/``, ``hub/``…) is a committed relative
symlink inside ``zcode_acp/``, so a tool that reads the checkout without installing it (mypy,
``python -m zcode_acp`` run from the repository root) sees the same ``zcode_acp.*`` modules an
installed bridge imports.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli.helpers import ROOT, clean_env, run, wheel_venv

NOT_SHIPPED = {"tests", "bench", "build", "zcode_acp"}  # top-level folders that are not part of the namespace


def top_level_packages() -> set[str]:
    return {entry.name for entry in ROOT.iterdir()
            if entry.is_dir() and not entry.is_symlink() and (entry / "__init__.py").is_file()
            and entry.name not in NOT_SHIPPED and not entry.name.startswith(".")}


def modules_under(root: Path) -> list[str]:
    """The ``zcode_acp/**.py`` files under ``root``, through the links (``Path.glob`` does not follow them)."""
    found = []
    for folder, dirs, files in os.walk(root / "zcode_acp", followlinks=True):
        dirs[:] = [name for name in dirs if name != "__pycache__"]
        found += [Path(folder, name).relative_to(root).as_posix() for name in files if name.endswith(".py")]
    return sorted(found)


def test_every_top_level_package_is_linked_into_the_namespace():
    # One rule for every folder (today's and the ones issue 23 adds): a relative link, so a clone works anywhere.
    packages = top_level_packages()
    assert {"actors", "protocol", "sim", "hub"} <= packages
    for name in sorted(packages):
        link = ROOT / "zcode_acp" / name
        assert link.is_symlink(), f"zcode_acp/{name} is missing: add it with `ln -s ../{name} zcode_acp/{name}`"
        assert os.readlink(link) == f"../{name}", f"zcode_acp/{name} must point at ../{name} (relative)"
    linked = {entry.name for entry in (ROOT / "zcode_acp").iterdir() if entry.is_symlink()}
    assert linked == packages, f"links to folders that are not top-level packages: {sorted(linked - packages)}"


@pytest.mark.timeout(900)  # a cold pip cache fetches the dependencies
def test_python_m_zcode_acp_from_the_repository_root_with_a_wheel_install(tmp_path):
    # Runs everywhere the suite runs (.ci/run included): it needs only pip and the package index the
    # suite is installed from. From the root, sys.path[0] is the checkout, so its zcode_acp/ shadows the
    # installed one: that folder has to be a whole package, not a stub that only an editable finder completes.
    pytest.importorskip("ensurepip", reason="this Python cannot make a virtual environment with pip "
                        "(Debian: apt-get install python3-venv), so no non-editable install can be tried")
    venv = wheel_venv(tmp_path, "wheel-venv")

    python = str(venv / "bin" / "python")
    helped = run([python, "-m", "zcode_acp", "--help"], clean_env(tmp_path), cwd=ROOT)
    assert helped.returncode == 0, helped.stderr[-3000:]
    assert "Usage: zcode-acp" in helped.stdout
    # The modules came from the checkout (sys.path[0]), and they are the same files the wheel holds.
    where = run([python, "-c", "import zcode_acp.actors.supervisor as m; print(m.__file__)"],
                clean_env(tmp_path), cwd=ROOT)
    assert where.returncode == 0, where.stderr[-3000:]
    assert where.stdout.strip() == str(ROOT / "zcode_acp" / "actors" / "supervisor.py")
    site = next((venv / "lib").glob("python3*/site-packages"))
    assert modules_under(site) == modules_under(ROOT)  # every module through the links, nothing else


def test_an_editable_install_makes_only_zcode_acp_importable(tmp_path):
    """Issue 29: ``pip install -e .`` put the root on ``sys.path``, so ``import config``, ``import tests``…
    resolved to this checkout in every program of that environment."""
    import subprocess
    import sys

    pytest.importorskip("ensurepip", reason="this Python cannot make a virtual environment with pip")
    venv = tmp_path / "editable-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    installed = run([str(venv / "bin" / "pip"), "install", "--disable-pip-version-check", "-q", "--no-deps",
                     "-e", str(ROOT)], clean_env(tmp_path), timeout=600)
    assert installed.returncode == 0, installed.stderr[-3000:]
    elsewhere = tmp_path / "elsewhere"  # not the root: sys.path[0] is then no part of this project
    elsewhere.mkdir()
    names = sorted(top_level_packages() | {"tests", "bench"})
    probe = ("import importlib.util, json; "
             f"print(json.dumps({{n: importlib.util.find_spec(n) is not None for n in {names!r}}}))")
    found = run([str(venv / "bin" / "python"), "-c", probe], clean_env(tmp_path), cwd=elsewhere)
    assert found.returncode == 0, found.stderr[-3000:]
    assert [name for name, present in __import__("json").loads(found.stdout).items() if present] == []
    spec = run([str(venv / "bin" / "python"), "-c", "import importlib.util as u; print(u.find_spec('zcode_acp').origin)"],
               clean_env(tmp_path), cwd=elsewhere)
    assert spec.stdout.strip() == str(ROOT / "importroot" / "zcode_acp" / "__init__.py"), spec.stderr[-3000:]

"""Where the ACP clients installed by ``.ci/clients`` live, and skipping cleanly without them."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.cli.helpers import ROOT

CLIENTS = ROOT / "build" / "clients" / "node_modules"
BIN = CLIENTS / ".bin"
NODE = BIN / "node"


def require(*paths: Path) -> None:
    """Skip (fail in CI, which installs them) when an installed client is missing."""
    missing = [path for path in (NODE, *paths) if not path.exists()]
    if not missing:
        return
    reason = f"{missing[0]} is not installed: run .ci/clients (npm installs tests/clients/package-lock.json)"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def processes_with(marker: str) -> list[int]:
    """Processes whose environment holds ``marker``: what a test started, however detached."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if marker.encode() in environ:
            found.append(int(entry.name))
    return found


@pytest.fixture
def marker(tmp_path):
    """A value in every environment the test starts; what is left with it at the end is killed."""
    value = str(tmp_path / "sim-data")
    yield value
    for pid in processes_with(value):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

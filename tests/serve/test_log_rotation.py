"""``serve --log-file``: a rotating log whose every file is private."""

from __future__ import annotations

import logging
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from zcode_acp.cli.logs import setup_logging


@pytest.fixture
def restored_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    for handler in root.handlers:
        handler.close()
    root.handlers[:], root.level = handlers, level


def test_the_log_rotates_and_every_file_is_0600(tmp_path: Path, restored_logging: None) -> None:
    path = tmp_path / "serve.log"
    setup_logging("info", str(path), rotate_bytes=400, backups=2)
    log = logging.getLogger("zcode_acp.test")
    for n in range(40):
        log.info("session=s-%d turn started", n)
    files = sorted(tmp_path.iterdir())
    assert [f.name for f in files] == ["serve.log", "serve.log.1", "serve.log.2"]
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    assert "session=s-39 turn started" in path.read_text()
    assert all(f.stat().st_size <= 400 for f in files)

"""The rotating log file of ``zcode-acp serve`` (a long-running service), private to its user.

Apart from ``logs.py`` so that ``logging.handlers`` is imported only by a command that rotates
its log: the stdio bridge never does (docs/performance.md, "Time to a first session").
"""

from __future__ import annotations

import io
import logging.handlers
import os


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A RotatingFileHandler whose files (the first and every one a rollover makes) are 0600."""

    def _open(self) -> io.TextIOWrapper:
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        return open(fd, "a", encoding=self.encoding or "utf-8")

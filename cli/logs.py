"""Logging set-up for every command, and the one-line usage error.

Kept apart from ``runtime`` so that commands which never start the actor tree
(``demo``, ``doctor``) validate ``--log-level``/``--log-file`` without
importing gevent or pykka.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import NoReturn

from zcode_acp.cli.serve_options import LOG_LEVELS  # the options' one table
from zcode_acp.protocol.i18n import language_from_env, t


class UsageError(ValueError):
    """A command-line value the bridge cannot use: one line for the user, exit 2."""


def _lang() -> str:
    """The language of a refused option: logging is set up before the Config exists."""
    return language_from_env(os.environ)


def setup_logging(level: str = "info", log_file: str | None = None, rotate_bytes: int = 0,
                  backups: int = 5) -> None:
    """Send logs to stderr or ``log_file`` (created 0600); ``UsageError`` when either is unusable.

    With ``rotate_bytes`` the file is rotated at that size, keeping ``backups`` old files
    (``zcode-acp serve``, a long-running service).
    """
    if level.lower() not in LOG_LEVELS:
        raise UsageError(t(_lang(), "cli.log_level_unknown", level=repr(level), levels=", ".join(LOG_LEVELS)))
    if log_file and rotate_bytes > 0:
        from zcode_acp.cli.log_rotation import PrivateRotatingFileHandler

        try:
            handler: logging.Handler = PrivateRotatingFileHandler(log_file, maxBytes=rotate_bytes,
                                                                  backupCount=backups, encoding="utf-8")
        except OSError as exc:
            raise UsageError(t(_lang(), "cli.log_file_unwritable", path=repr(log_file), reason=exc.strerror)) from None
    elif log_file:
        try:
            fd = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        except OSError as exc:
            raise UsageError(t(_lang(), "cli.log_file_unwritable", path=repr(log_file), reason=exc.strerror)) from None
        handler = logging.StreamHandler(os.fdopen(fd, "a", buffering=1))
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper()))
    # pykka logs every ask exception at INFO; the bridge reports those itself.
    logging.getLogger("pykka").setLevel(logging.WARNING)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one line on stderr and exit (2: the command line or environment is wrong)."""
    print(f"zcode-acp: {message}", file=sys.stderr)
    raise SystemExit(code)


def warn(message: str) -> None:
    """One line on stderr, whatever ``--log-file`` says: the editor's log of the agent shows it."""
    print(f"zcode-acp: {message}", file=sys.stderr, flush=True)

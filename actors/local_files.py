"""Reading a local file a client named, safely (docs/security.md, "Local files").

Whatever a client names — an attachment on the v4 path (actors/session/v4/attachments.py), a file or
folder on the phone's file browser (actors/project_files.py) — the bridge reads it only when:

* its real path (symlinks resolved first) lies inside the session's ``cwd`` or a configured
  project root (``remote.projectRoots`` / ``ZCODE_ACP_PROJECT_ROOTS``), whoever asks;
* it opens without following a last link, without waiting (``O_NONBLOCK``: a FIFO or a device
  never holds the open), never becoming the bridge's terminal, and ``fstat`` then says it is a
  regular file (or a folder, for a listing);
* all of it off the event loop, in gevent's thread pool.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

# Open without following a last link, without waiting for a writer (a FIFO) or a device, never
# becoming its terminal, never inherited by a child.
OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC
# The configured project roots, asked in the thread pool (they come from the config file).
Roots = Callable[[], Sequence[str]]


def configured_project_roots() -> Sequence[str]:
    """``remote.projectRoots`` / ``ZCODE_ACP_PROJECT_ROOTS`` as they are now (the file is read: in the pool)."""
    from zcode_acp.config.remote import load_remote_config

    return tuple(str(root) for root in load_remote_config(log_warnings=False).project_roots)


def inside(real: str, roots: Sequence[str]) -> bool:
    """``real`` (a resolved path) is one of ``roots`` (resolved too) or below one."""
    for root in roots:
        if not root or not os.path.isabs(root):
            continue
        real_root = os.path.realpath(root)
        if os.path.commonpath((real, real_root)) == real_root:
            return True
    return False


def opened_path(fd: int, resolved: str) -> str:
    """Where the open descriptor really is (Linux's ``/proc/self/fd``; elsewhere, what was resolved):
    checked against the roots again, a folder swapped for a link between the check and the open is caught."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return resolved


def roots_with(folder: str, project_roots: Roots) -> tuple[str, ...]:
    """The session's folder and the configured roots (a config file that cannot be read: the folder only)."""
    try:
        configured = tuple(project_roots())
    except Exception:
        configured = ()
    return (folder, *configured) if folder else configured

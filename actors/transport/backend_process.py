"""Starting and stopping the ZCode app-server child process.

The child gets its own process group (so teardown can signal everything it
spawned) and, on Linux, a parent-death signal so that a SIGKILLed bridge does
not leave it orphaned. Under gevent the spawn runs on the main OS thread, which
is what PR_SET_PDEATHSIG is tied to (docs/architecture.md, "Startup and lifetime").
"""

from __future__ import annotations

import ctypes
import logging
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence

import gevent

from zcode_acp.protocol.errors import RpcError, internal

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1


def resolve_command(zcode_bin: str, extra_args: Sequence[str] = ()) -> list[str]:
    """The argv for ``$ZCODE_BIN app-server --stdio``; RpcError when missing."""
    path = zcode_bin if os.sep in zcode_bin else shutil.which(zcode_bin)
    if not path or not os.path.exists(path):
        raise RpcError(
            -32603,
            f"ZCode CLI not found: ZCODE_BIN is {zcode_bin!r}. Install the ZCode CLI or set "
            "ZCODE_BIN to its path (ZCODE_BIN=zcode-sim runs the simulated backend).",
        )
    argv = [path, "app-server", "--stdio", *extra_args]
    if path.endswith((".js", ".cjs", ".mjs")):
        node = shutil.which("node")
        if not node:
            raise internal(f"ZCODE_BIN {path!r} is a JavaScript entry point but node is not on PATH")
        argv = [node, *argv]
    return argv


def _child_setup() -> None:  # runs in the child between fork and exec
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except OSError:
            pass


def spawn(argv: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(  # gevent's cooperative Popen once patched
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=_child_setup,
        close_fds=True,
    )


# A tiny process that outlives a SIGKILLed bridge just long enough to take the backend's
# whole process group down: it blocks reading a pipe whose only writer is the bridge, and
# the bridge's death (any death) closes that pipe. The parent-death signal alone covers only
# the backend itself, not what its tools started (docs/decisions.md, "Backend death").
WATCHDOG = 'read _ignored; kill -KILL -- -"$0" 2>/dev/null; exit 0'


def guard_group(proc: subprocess.Popen[bytes]) -> subprocess.Popen[bytes] | None:
    """Start the watchdog of ``proc``'s process group (best effort: None if it cannot run)."""
    try:
        watchdog = subprocess.Popen(["/bin/sh", "-c", WATCHDOG, str(proc.pid)], stdin=subprocess.PIPE,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    start_new_session=True, close_fds=True)
    except OSError as exc:
        log.warning("no watchdog for the backend's process group: %s", exc)
        return None
    gevent.spawn(watchdog.wait)  # reaped whenever it ends
    return watchdog


def release_guard(watchdog: subprocess.Popen[bytes] | None) -> None:
    """The group is gone (or going): let the watchdog finish."""
    if watchdog is not None and watchdog.stdin is not None:
        try:
            watchdog.stdin.close()
        except OSError:
            pass


def terminate_group(proc: subprocess.Popen[bytes], grace: float, eof_grace: float = 0.3) -> None:
    """Close stdin, SIGTERM the process group, SIGKILL it after ``grace``.

    A backend that exits by itself on stdin EOF gets ``eof_grace`` to do so:
    it then reads what was written just before (the teardown's
    ``session/stop``) instead of being signalled mid-read.
    """
    try:
        if proc.stdin is not None:
            proc.stdin.close()
    except Exception:
        pass
    with gevent.Timeout(eof_grace, False):
        proc.wait()
    if proc.poll() is not None:
        _kill_group(proc.pid, signal.SIGKILL)  # stragglers in its group
        return
    _kill_group(proc.pid, signal.SIGTERM)
    with gevent.Timeout(grace, False):
        proc.wait()
    if proc.poll() is None:
        log.warning("backend did not exit on SIGTERM within %.1fs; killing", grace)
    _kill_group(proc.pid, signal.SIGKILL)
    with gevent.Timeout(grace, False):
        proc.wait()


def _kill_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass

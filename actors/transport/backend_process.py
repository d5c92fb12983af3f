"""Starting and stopping the ZCode app-server child process.

The child gets its own process group (so teardown can signal everything it
spawned) and, on Linux, a parent-death signal so that a SIGKILLed bridge does
not leave it orphaned. Under gevent the spawn runs on the main OS thread, which
is what PR_SET_PDEATHSIG is tied to (docs/architecture.md, "Startup and lifetime").
"""

from __future__ import annotations

import ctypes
import glob
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any
from pathlib import Path

import gevent

from zcode_acp.config.child_env import scrubbed_environment
from zcode_acp.config.settings import backend_problem
from zcode_acp.protocol.errors import RpcError
from zcode_acp.protocol.i18n import t

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1

BUILTIN_PROVIDER_CONFIG = "ZCODE_BUILTIN_PROVIDER_CONFIG_FILE"
PERSONAL_PROVIDER_CONFIG = "ZCODE_PERSONAL_PROVIDER_CONFIG_FILE"
BUILTIN_FILE_NAME = "zcode-builtin.json"


def resolve_command(zcode_bin: str, extra_args: Sequence[str] = (), lang: str = "en") -> list[str]:
    """The argv for ``$ZCODE_BIN app-server --stdio``; RpcError when missing (in ``lang``)."""
    problem = backend_problem(zcode_bin, lang)  # the words the start-up warning and doctor use
    if problem is not None:
        raise RpcError(-32603, t(lang, "error.cannot_start_cli", problem=problem.line()))
    path = zcode_bin if os.sep in zcode_bin else shutil.which(zcode_bin)
    assert path is not None  # backend_problem found it
    argv = [path, "app-server", "--stdio", *extra_args]
    if path.endswith((".js", ".cjs", ".mjs")):
        node = shutil.which("node")
        if not node:
            raise RpcError(-32603, t(lang, "error.node_missing", path=repr(path)))
        argv = [node, *argv]
    return argv


def entry_point(argv: Sequence[str]) -> str:
    """The ZCode program itself: the script ``node`` runs, or the binary."""
    return argv[1] if len(argv) > 1 and argv[1].endswith((".js", ".cjs", ".mjs")) else argv[0]


def builtin_provider_candidates(entry: str, zcode_home: Path) -> list[Path]:
    """Where a desktop bundle keeps its built-in provider table, most specific first.

    Beside the entry script; in the bundle's ``config/provider/`` (the script
    lives in ``<resources>/glm/``); else the newest copy the desktop app
    unpacked under ``<ZCODE_HOME>/v2/runtime/provider/`` (docs/backend-protocol.md §11).
    """
    folder = Path(os.path.realpath(entry)).parent
    unpacked = sorted(glob.glob(str(zcode_home / "v2" / "runtime" / "provider" / "*" / "*" / "*" / BUILTIN_FILE_NAME)))
    return [folder / BUILTIN_FILE_NAME, folder.parent / "config" / "provider" / BUILTIN_FILE_NAME,
            *[Path(path) for path in reversed(unpacked)]]


def provider_environment(entry: str, zcode_home: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """The provider-configuration variables to add for the child (never one the user set).

    Today's desktop engines (3.12.3+) exit, or hang on ``session/create``,
    without them. Only files that exist are named.
    """
    derived: dict[str, str] = {}
    if not environ.get(BUILTIN_PROVIDER_CONFIG):
        builtin = next((path for path in builtin_provider_candidates(entry, zcode_home) if path.is_file()), None)
        if builtin is not None:
            derived[BUILTIN_PROVIDER_CONFIG] = str(builtin)
    if not environ.get(PERSONAL_PROVIDER_CONFIG):
        personal = zcode_home / "v2" / "provider_config.json"
        if personal.is_file():
            derived[PERSONAL_PROVIDER_CONFIG] = str(personal)
    return derived


def personal_provider_config(env: Mapping[str, str]) -> Any:
    """The user's personal provider configuration the child reads (None when absent or unreadable)."""
    path = env.get(PERSONAL_PROVIDER_CONFIG)
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def child_environment(argv: Sequence[str], zcode_home: Path) -> dict[str, str]:
    """The bridge's environment, secrets scrubbed, plus what ``provider_environment``
    derives (logged at info)."""
    derived = provider_environment(entry_point(argv), zcode_home, os.environ)
    for name, value in derived.items():
        log.info("backend environment: %s=%s (derived; it was not set)", name, value)
    return {**scrubbed_environment(os.environ), **derived}


def _child_setup() -> None:  # runs in the child between fork and exec
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except OSError:
            pass


def spawn(argv: list[str], env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(  # gevent's cooperative Popen once patched
        argv,
        env=env,
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
# (Python without site packages starts in ~10 ms and kills a group the same way everywhere;
# /bin/sh's kill cannot name a process group portably.)
WATCHDOG = "import os, sys\nsys.stdin.buffer.read()\ntry:\n    os.killpg(int(sys.argv[1]), 9)\nexcept OSError:\n    pass\n"


def guard_group(proc: subprocess.Popen[bytes]) -> subprocess.Popen[bytes] | None:
    """Start the watchdog of ``proc``'s process group (best effort: None if it cannot run)."""
    try:
        watchdog = subprocess.Popen([sys.executable, "-I", "-S", "-c", WATCHDOG, str(proc.pid)], stdin=subprocess.PIPE,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    env=scrubbed_environment(os.environ),  # it inherited all of it (issue 29)
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

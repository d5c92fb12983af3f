"""``POST /api/instances {cwd}``: start a headless ``serve`` bridge for a project.

Only directories under a configured project root qualify (compared after
resolving symlinks). A live ``serve`` bridge already registered for the same
directory is reused; concurrent requests for one directory share one start.
The bridge is started detached (its own session, no terminal) and counts as
started once it registers with the hub under the child's pid. See
docs/hub.md ("Starting a bridge").
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path
from collections.abc import Callable, Mapping, Sequence

import gevent
import gevent.event

from zcode_acp.net.http_server import HttpError
from zcode_acp.hub.registry import Registry

log = logging.getLogger(__name__)

ServeCommand = Callable[[Path], Sequence[str]]


def default_serve_command(cwd: Path) -> list[str]:
    return [sys.executable, "-m", "zcode_acp", "serve", "--cwd", str(cwd), "--idle-exit", "10"]


def resolve_project(cwd: object, roots: Sequence[Path]) -> Path:
    """The real directory for ``cwd`` if it lies under a project root; else HttpError."""
    if not isinstance(cwd, str) or not cwd.strip() or "\0" in cwd or len(cwd) > 4096:
        raise HttpError(400, "cwd (an absolute directory path) is required")
    path = Path(cwd.strip())
    if not path.is_absolute():
        raise HttpError(400, "cwd must be an absolute path")
    if not roots:
        raise HttpError(403, "no project roots are configured (remote.projectRoots)")
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        raise HttpError(404, f"no such directory: {cwd}") from None
    if not real.is_dir():
        raise HttpError(400, f"not a directory: {cwd}")
    for root in roots:
        try:
            real_root = root.resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        if real.is_relative_to(real_root):
            return real
    raise HttpError(403, f"{cwd} is not under a configured project root")


class ServeSpawner:
    def __init__(self, registry: Registry, command: ServeCommand, env: Mapping[str, str], *,
                 timeout: float, log_path: Path | None = None) -> None:
        self.registry = registry
        self.command = command
        self.env = dict(env)
        self.timeout = timeout
        self.log_path = log_path
        self._inflight: dict[Path, gevent.event.AsyncResult] = {}
        self._waiting: dict[int, gevent.event.Event] = {}
        self.children: list[subprocess.Popen[bytes]] = []

    def registered(self, pid: int) -> None:
        """The hub calls this on every registration (wakes a start waiting for it)."""
        event = self._waiting.get(pid)
        if event is not None:
            event.set()

    def live_serve_instance(self, directory: Path) -> str | None:
        for instance in self.registry.instances.values():
            r = instance.registration
            if r.origin == "serve" and r.workspace and _same_dir(r.workspace, directory):
                return r.id
        return None

    def ensure(self, directory: Path) -> tuple[str, bool]:
        """(instance id, reused) for a live serve bridge in ``directory``; raises HttpError."""
        existing = self.live_serve_instance(directory)
        if existing is not None:
            return existing, True
        pending = self._inflight.get(directory)
        if pending is None:
            pending = gevent.event.AsyncResult()
            self._inflight[directory] = pending
            try:
                pending.set(self._start(directory))
            except BaseException as exc:
                pending.set_exception(exc)
            finally:
                self._inflight.pop(directory, None)
        return pending.get(), False

    def _start(self, directory: Path) -> str:
        command = list(self.command(directory))
        output = self._output()
        try:
            child = subprocess.Popen(command, cwd=directory, env=self.env,
                                     stdin=subprocess.DEVNULL, stdout=output, stderr=output,
                                     start_new_session=True, close_fds=True)
        except OSError as exc:
            raise HttpError(502, f"could not start a bridge: {exc}") from None
        finally:
            if output is not subprocess.DEVNULL:
                os.close(output)
        self.children.append(child)
        log.info("hub: started a serve bridge for %s (pid %d)", directory, child.pid)
        woken = gevent.event.Event()
        self._waiting[child.pid] = woken
        watcher = gevent.spawn(lambda: (child.wait(), woken.set()))
        try:
            with gevent.Timeout(self.timeout, False):
                while True:
                    woken.wait()
                    woken.clear()
                    for instance in self.registry.instances.values():
                        if instance.registration.pid == child.pid:
                            return instance.id
                    if child.poll() is not None:
                        raise HttpError(502, f"the bridge exited with code {child.returncode} "
                                             "before registering")
            raise HttpError(504, f"the bridge did not register within {self.timeout:g} s")
        finally:
            self._waiting.pop(child.pid, None)
            watcher.kill(block=False)

    def _output(self) -> int:
        if self.log_path is None:
            return subprocess.DEVNULL
        return os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)


def _same_dir(workspace: str, directory: Path) -> bool:
    try:
        return Path(workspace).resolve() == directory
    except (OSError, RuntimeError):
        return False

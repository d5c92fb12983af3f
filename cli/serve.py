"""``zcode-acp serve --cwd DIR``: the bridge as a headless, supervised service (docs/service.md).

The same actor tree as the stdio bridge, with no stdio client: its clients are
WebSocket clients only (through the hub, or on the loopback endpoint with the
token), so remote access is on by definition and a token is required. Every
session is pinned to the project directory. There is no primary client whose
departure ends the process: it lives until SIGTERM/SIGINT, or, with
``--idle-exit MINUTES``, until that long has passed with no client attached and
no turn running. Under systemd it speaks the notify protocol (``sdnotify.py``).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
from typing import Any

from zcode_acp.cli import runtime  # patches for gevent before anything below

import gevent
import gevent.event
import pykka

from zcode_acp import version
from zcode_acp.config.settings import Config, SettingError, start_warnings
from zcode_acp.cli.logs import fail, warn
from zcode_acp.cli.remote_access import start_remote
from zcode_acp.config.remote import load_remote_config
from zcode_acp.cli.sdnotify import Notifier
from zcode_acp.actors.messages import Occupancy, Shutdown
from zcode_acp.actors.supervisor import Supervisor
from zcode_acp.protocol.i18n import language_from_env, t

log = logging.getLogger("zcode_acp.serve")

LOG_ROTATE_BYTES = 10 * 1024 * 1024  # --log-file is rotated at this size …
LOG_BACKUPS = 5  # … keeping this many old files
IDLE_CHECK_MAX = 5.0  # seconds between idle checks at most (a short --idle-exit checks more often)


def _lang() -> str:
    """The language of what serve prints before its Config exists (resolved as Config resolves it)."""
    return language_from_env(os.environ)


def project_root(cwd: str) -> str:
    """The directory every session is pinned to: absolute, symlinks resolved (as the hub resolves it)."""
    if not os.path.isdir(cwd):
        fail(t(_lang(), "serve.cwd_not_a_directory", cwd=repr(cwd)))
    return os.path.realpath(cwd)


def watch_idle(supervisor: Any, idle_seconds: float, notifier: Notifier) -> None:
    """Shut down once no client has been attached and no turn has run for ``idle_seconds``."""
    idle_since: float | None = None
    step = max(0.05, min(IDLE_CHECK_MAX, idle_seconds / 4))
    clock = gevent.get_hub().loop
    while True:
        gevent.sleep(step)
        try:
            clients, running = supervisor.ask(Occupancy(), timeout=2.0)
        except Exception:  # shutting down already, or busy: look again later
            continue
        clock.update_now()
        if clients or running:
            idle_since = None
        elif idle_since is None:
            idle_since = clock.now()
        elif clock.now() - idle_since >= idle_seconds:
            notifier.send("STOPPING=1")
            supervisor.tell(Shutdown(f"idle for {idle_seconds / 60:g} minute(s): no client, no running turn"))
            return


def keep_watchdog_fed(notifier: Notifier, interval: float) -> None:
    while True:
        notifier.send("WATCHDOG=1")
        gevent.sleep(interval)


def run_serve(cwd: str, idle_exit: float | None) -> int:
    root = project_root(cwd)
    if idle_exit is not None and idle_exit <= 0:
        fail(t(_lang(), "serve.idle_exit_not_positive", minutes=f"{idle_exit:g}"))
    try:
        config = Config.from_env()
        warnings = start_warnings(config)
    except SettingError as exc:
        fail(str(exc))
    for warning in warnings:
        warn(warning)
    settings = load_remote_config()
    if not settings.token:
        fail(t(config.lang, "serve.needs_a_token"))
    settings = dataclasses.replace(settings, enabled=True)

    runtime.announce(config)
    runtime.tune_gc()
    notifier = Notifier()
    exited = gevent.event.Event()
    supervisor = Supervisor.start(config, exited.set, root=root)
    remote = start_remote(supervisor, version(), origin="serve", workspace=root, settings=settings)
    assert remote is not None  # enabled, with a token: checked above
    log.info("serving %s on ws://127.0.0.1:%d/acp (pid %d, idle exit %s)", root, remote.endpoint.port, os.getpid(),
             f"after {idle_exit:g} min" if idle_exit else "never")
    notifier.send(f"READY=1\nSTATUS=serving {root}\nMAINPID={os.getpid()}")
    if notifier.watchdog_interval:
        gevent.spawn(keep_watchdog_fed, notifier, notifier.watchdog_interval)

    def on_signal(name: str) -> None:
        notifier.send("STOPPING=1")
        supervisor.tell(Shutdown(f"received {name}"))

    for sig in (signal.SIGTERM, signal.SIGINT):
        gevent.signal_handler(sig, on_signal, sig.name)
    if idle_exit:
        gevent.spawn(watch_idle, supervisor, idle_exit * 60, notifier)
    exited.wait()
    remote.stop()  # unregisters from the hub (bounded)
    supervisor.stop(block=True, timeout=1)
    pykka.ActorRegistry.stop_all(block=False)
    log.info("stopped")
    logging.shutdown()
    os._exit(0)

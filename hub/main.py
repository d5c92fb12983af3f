"""``zcode-acp hub``: run the machine-level hub until idle, hand-over or a signal.

Exit codes: 0 after an idle exit, a hand-over (75 with ``--stay``: the unit
restarts the hub from the installed code), a signal, or when another
hub already answers on the address; 2 without a token; 1 when the address
cannot be bound. Tuning knobs for tests and unusual setups come from the
environment (seconds): ``ZCODE_ACP_HUB_IDLE_EXIT``,
``ZCODE_ACP_HUB_HEARTBEAT_TIMEOUT``, ``ZCODE_ACP_HUB_SWEEP_INTERVAL``,
``ZCODE_ACP_HUB_PING_INTERVAL``, ``ZCODE_ACP_HUB_HANDOVER_COOLDOWN``.
"""

from __future__ import annotations

import errno
import ipaddress
import json
import logging
import os
import signal
import sys
import time
import urllib.request
from pathlib import Path
from collections.abc import Mapping

import gevent

from zcode_acp.config.remote import load_remote_config
from zcode_acp.protocol.i18n import language_from_env, t
from zcode_acp.hub.handovers import default_record_path
from zcode_acp.hub.server import Hub, HubSettings
from zcode_acp.hub.static import default_web_root

log = logging.getLogger("zcode_acp.hub")

# A hub handing over still holds the port for a moment; its successor waits.
BIND_WAIT = 5.0
# A --stay hub's exit after a hand-over (EX_TEMPFAIL): its supervisor restarts it.
HANDED_OVER_TO_SUPERVISOR = 75


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    try:
        return float(raw) if raw else default
    except ValueError:
        log.warning("%s=%r is not a number of seconds; using %g", name, raw, default)
        return default


def hub_answers(host: str, port: int, timeout: float = 1.0) -> bool:
    """True when something at the address answers like a hub's health route."""
    target = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    if ":" in target:
        target = f"[{target}]"
    try:
        with urllib.request.urlopen(f"http://{target}:{port}/api/health", timeout=timeout) as r:
            return bool(json.loads(r.read()).get("ok"))
    except (OSError, ValueError):
        return False


def run_hub(*, stay: bool = False, host: str | None = None, port: int | None = None,
            web_root: str | None = None, env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    config = load_remote_config(env, log_warnings=False)
    lang = language_from_env(env)  # the words a person starting the hub reads (docs/architecture.md)
    for warning in config.warnings:
        if warning != config.token_problem or config.token:
            log.warning("%s", warning)
    if not config.token and config.token_problem:  # one line: why the token given was refused, and the fix
        print(t(lang, "hub.token_refused", problem=config.token_problem), file=sys.stderr)
        return 2
    if not config.token:
        where = config.config_path or t(lang, "hub.the_config_file")
        print(t(lang, "hub.no_token", where=where), file=sys.stderr)
        return 2
    host = host or config.hub_host
    port = config.hub_port if port is None else port
    if not is_loopback(host):
        log.warning("hub: listening on %s, beyond loopback: the token is the only protection "
                    "and it travels in clear text. Put TLS in front (a tunnel or a reverse "
                    "proxy, see docs/hub.md) and keep the token secret.", host)
    idle_exit = None if stay else _seconds(env, "ZCODE_ACP_HUB_IDLE_EXIT", 600.0)
    heartbeat = _seconds(env, "ZCODE_ACP_HUB_HEARTBEAT_TIMEOUT", 30.0)
    settings = HubSettings(
        token=config.token, host=host, port=port,
        web_root=Path(web_root) if web_root else default_web_root(),
        project_roots=config.project_roots,
        heartbeat_timeout=heartbeat,
        sweep_interval=_seconds(env, "ZCODE_ACP_HUB_SWEEP_INTERVAL", min(5.0, heartbeat / 3)),
        idle_exit=idle_exit,
        ping_interval=_seconds(env, "ZCODE_ACP_HUB_PING_INTERVAL", 30.0),
        handover_cooldown=_seconds(env, "ZCODE_ACP_HUB_HANDOVER_COOLDOWN", 60.0),
        handover_record=default_record_path(env), supervised=stay,
        public_hosts=config.public_hosts,
        serve_env=dict(env))
    hub = Hub(settings)
    for signum in (signal.SIGTERM, signal.SIGINT):
        gevent.signal_handler(signum, hub.stop, "signal")
    first_try = time.monotonic()
    while True:
        try:
            hub.start()
            break
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                log.error("hub: cannot listen on %s:%d: %s", host, port, exc)
                return 1
            waited = time.monotonic() - first_try
            # Not at once: a hub handing over answers for a moment before it leaves.
            if waited >= 1.0 and hub_answers(host, port):
                log.info("hub: another hub already answers on %s:%d; leaving it be", host, port)
                return 0
            if waited >= BIND_WAIT:
                log.error("hub: %s:%d is taken by something that is not a hub", host, port)
                return 1
            gevent.sleep(0.2)
    hub.wait()
    gevent.sleep(0.1)  # let close frames reach the proxied peers
    log.info("hub: exiting (%s)", hub.exit_reason)
    if stay and hub.exit_reason == "handover":
        # Non-zero on purpose: the unit's Restart=on-failure starts the installed (newer) hub.
        return HANDED_OVER_TO_SUPERVISOR
    return 0

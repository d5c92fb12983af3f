"""The hub: HTTP API, WebSocket proxy, static page, heartbeats and idle exit.

Routes (docs/hub.md has the full contract):

- ``GET /api/health`` (no token) → ``{ok, version, instances}``
- ``GET /api/instances`` → the live bridges and their sessions
- ``POST /api/register`` / ``POST /api/unregister`` → bridges' heartbeats
- ``POST /api/instances {cwd}`` → start a ``serve`` bridge under a project root
- ``GET /acp?instance=<id>`` (WebSocket) → proxied to that bridge
- anything else ``GET``/``HEAD`` → a file of the web root

Every route but health and the page needs the token (401 otherwise).
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Mapping

import gevent
import gevent.event
from gevent import socket as gsocket

from zcode_acp.net import websocket as ws

from zcode_acp.net import websocket_handshake as handshake
from zcode_acp.net.http_server import MAX_CONNECTIONS, HttpError, HttpExchange, \
    HttpServer
from zcode_acp.net.origin_policy import HostPolicy
from zcode_acp.net.tokens import SUBPROTOCOL, RemoteAuth, offers_subprotocol
from zcode_acp.hub import static
from zcode_acp.hub.handovers import HandoverRecord
from zcode_acp.hub.ownership import port_proves_owner
from zcode_acp.hub.proxy import ProxyPair
from zcode_acp.hub.registry import Registry, RegistrationError, TakeOver, parse_registration
from zcode_acp.hub.spawner import ServeCommand, ServeSpawner, default_serve_command, \
    resolve_project
from zcode_acp.hub.versioning import is_newer, package_version

log = logging.getLogger("zcode_acp.hub")



def needs_token(path: str) -> bool:
    """Everything that reveals or changes something; the health check and the page do not."""
    return path == "/acp" or (path.startswith("/api/") and path != "/api/health")


@dataclass(frozen=True)
class HubSettings:
    token: str
    host: str = "127.0.0.1"
    port: int = 8377
    web_root: Path = field(default_factory=static.default_web_root)
    project_roots: tuple[Path, ...] = ()
    # Bridges register every 10 s; one silent this long is probed, and dropped
    # if its port is closed (or, whatever the probe says, after 3x as long).
    heartbeat_timeout: float = 30.0
    sweep_interval: float = 5.0
    probe_timeout: float = 1.0
    # Exit after this long with no instances and no connections (None: never).
    idle_exit: float | None = 600.0
    ping_interval: float = 30.0
    # A hub younger than this ignores hand-over requests (no restart loops).
    handover_cooldown: float = 60.0
    max_body: int = 1024 * 1024
    spawn_timeout: float = 15.0
    serve_command: ServeCommand = default_serve_command
    serve_log: Path | None = None
    version: str = field(default_factory=package_version)
    # Where the versions handed over to are kept (None: this process only).
    handover_record: Path | None = None
    # Under a supervisor (``--stay``): a hand-over exits non-zero and the unit restarts the
    # hub from the installed code; the bridge is told not to start one itself.
    supervised: bool = False
    # Environment for started bridges (the token and the hub's address are added).
    serve_env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    # Host names a tunnel serves the hub under (beside loopback): the Host/Origin allow-list.
    public_hosts: tuple[str, ...] = ()
    max_connections: int = MAX_CONNECTIONS
    # How long the check that a registered port is its bridge's may take; a refusal always
    # takes this long, so its timing never tells whether the port is open (docs/security.md).
    owner_check_timeout: float = 3.0


class Hub:
    def __init__(self, settings: HubSettings) -> None:
        self.settings = settings
        self.registry = Registry()
        self.proxies: set[ProxyPair] = set()
        self.server: HttpServer | None = None
        self.started = time.monotonic()
        self.exit_reason: str | None = None
        self._stopped = gevent.event.Event()
        self._sweeper: gevent.Greenlet | None = None
        self._idle_since = time.monotonic()
        # Client legs: a budget each, so one client's flood cannot stall the others.
        self._ws_options = ws.WebSocketOptions(ping_interval=settings.ping_interval,
                                               frames_per_second=ws.CLIENT_FRAMES_PER_SECOND,
                                               bytes_per_second=ws.CLIENT_BYTES_PER_SECOND)
        self.spawner: ServeSpawner | None = None
        self.handing_over = False
        self.handovers = HandoverRecord(settings.handover_record)
        self.auth = RemoteAuth(settings.token, HostPolicy.allowing(settings.public_hosts),
                               protected=needs_token, bodiless_paths=frozenset({"/acp"}))

    # --- life cycle -------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self.server is not None
        return self.server.port

    def start(self) -> Hub:
        """Bind and serve; raises OSError when the address is taken."""
        self.server = HttpServer((self.settings.host, self.settings.port), self._handle,
                                 max_body=self.settings.max_body, name="hub",
                                 admit=self.auth.admit,
                                 max_connections=self.settings.max_connections)
        self.auth.bound_to(self.server.port)
        self.server.start()
        env = dict(self.settings.serve_env)
        env.update(ZCODE_ACP_REMOTE="1", ZCODE_ACP_REMOTE_TOKEN=self.settings.token,
                   ZCODE_ACP_HUB_HOST=self.settings.host, ZCODE_ACP_HUB_PORT=str(self.port))
        self.spawner = ServeSpawner(self.registry, self.settings.serve_command, env,
                                    timeout=self.settings.spawn_timeout,
                                    log_path=self.settings.serve_log)
        self.started = self._idle_since = time.monotonic()
        self._sweeper = gevent.spawn(self._sweep_loop)
        log.info("hub: listening on http://%s:%d (version %s)", self.settings.host, self.port,
                 self.settings.version)
        return self

    def stop(self, reason: str = "stopped") -> None:
        if self._stopped.is_set():
            return
        self.exit_reason = reason
        log.info("hub: stopping (%s)", reason)
        if self.server is not None:
            self.server.close()
        for pair in list(self.proxies):
            pair.close(ws.CloseCode.GOING_AWAY, "hub stopping")
        if self._sweeper is not None and self._sweeper is not gevent.getcurrent():
            self._sweeper.kill(block=False)
        self._stopped.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Until stopped (idle exit, hand-over or ``stop``); True when stopped."""
        return bool(self._stopped.wait(timeout))

    # --- periodic work ----------------------------------------------------------------

    def _sweep_loop(self) -> None:
        while not self._stopped.is_set():
            gevent.sleep(self.settings.sweep_interval)
            self.sweep()

    def sweep(self) -> None:
        """Probe silent bridges, drop the dead, and exit when idle for long enough."""
        now = time.monotonic()
        silent = self.registry.silent(now, self.settings.heartbeat_timeout)
        probes = {i.id: gevent.spawn(self._probe, i.registration.port) for i in silent}
        gevent.joinall(list(probes.values()))
        for instance in silent:
            if self.registry.get(instance.id) is not instance:
                continue  # re-registered or removed while probing
            alive = bool(probes[instance.id].value)
            too_long = now - instance.last_seen >= 3 * self.settings.heartbeat_timeout
            if not alive or too_long:
                self.registry.unregister(instance.id)
                log.info("hub: dropped instance %s (silent %.0f s, %s)", instance.id,
                         now - instance.last_seen, "port closed" if not alive else "still silent")
        if len(self.registry) or self.proxies:
            self._idle_since = now
        elif self.settings.idle_exit is not None and \
                now - self._idle_since >= self.settings.idle_exit:
            self.stop("idle")

    def _probe(self, port: int) -> bool:
        try:
            sock = gsocket.create_connection(("127.0.0.1", port),
                                             timeout=self.settings.probe_timeout)
        except OSError:
            return False
        sock.close()
        return True

    # --- HTTP -------------------------------------------------------------------------

    def _handle(self, exchange: HttpExchange) -> None:
        request = exchange.request
        path, method = request.path, request.method
        if path == "/acp":
            self._websocket(exchange)
            return
        if path.startswith("/api/"):
            self._api(exchange, path, method)
            return
        if method not in ("GET", "HEAD"):
            exchange.respond(405, {"error": f"{method} not allowed"}, headers=[("Allow", "GET")])
            return
        file = static.resolve_static(self.settings.web_root, path)
        if file is None:
            exchange.respond(404, "not found\n", headers=static.STATIC_HEADERS)
            return
        exchange.respond(200, file.read_bytes(), content_type=static.content_type(file),
                         headers=static.STATIC_HEADERS)

    def _api(self, exchange: HttpExchange, path: str, method: str) -> None:
        routes: dict[tuple[str, str], Any] = {
            ("/api/health", "GET"): self._health,
            ("/api/instances", "GET"): self._instances,
            ("/api/instances", "POST"): self._create_instance,
            ("/api/register", "POST"): self._register,
            ("/api/unregister", "POST"): self._unregister,
        }
        route = routes.get((path, method))
        if route is None:
            allowed = [m for (p, m) in routes if p == path]
            if allowed:
                exchange.respond(405, {"error": f"{method} not allowed on {path}"},
                                 headers=[("Allow", ", ".join(allowed))])
            else:
                exchange.respond(404, {"error": f"no such endpoint: {path}"})
            return
        route(exchange)  # the token (or a proof) was checked on the head: RemoteAuth

    def _health(self, exchange: HttpExchange) -> None:
        exchange.respond(200, {"ok": True, "version": self.settings.version,
                               "instances": len(self.registry)})

    def _instances(self, exchange: HttpExchange) -> None:
        exchange.respond(200, self.registry.listing())

    def _register(self, exchange: HttpExchange) -> None:
        body = exchange.request.json()
        try:
            registration = parse_registration(body, now_ms=time.time() * 1000)
        except RegistrationError as exc:
            raise HttpError(400, f"invalid registration: {exc}") from None
        fresh = self.registry.get(registration.id) is None
        try:
            self.registry.register(registration, time.monotonic())
        except TakeOver as exc:
            raise HttpError(409, str(exc)) from None
        if fresh:
            log.info("hub: instance %s registered (%s, pid %d, port %d, %s)", registration.id,
                     registration.origin, registration.pid, registration.port,
                     registration.workspace)
        if self.spawner is not None:
            self.spawner.registered(registration.pid)
        answer: dict[str, Any] = {"ok": True, "version": self.settings.version}
        can_start_hub = isinstance(body, dict) and body.get("canStartHub") is True
        if can_start_hub and self._should_hand_over(registration.id, registration.version):
            answer["handover"] = True
            if self.settings.supervised:
                answer["successor"] = "supervisor"
            # Answer first; the bridge (or the unit) starts the new hub once this one is gone.
            gevent.spawn_later(0.2, self.stop, "handover")
        exchange.respond(200, answer)

    def _should_hand_over(self, bridge: str, version: str) -> bool:
        """Only to a strictly newer version, once per version ever, never while young."""
        if self.handing_over or not is_newer(version, self.settings.version):
            return False
        if self.handovers.already(version):
            log.info("hub: bridge %s runs %s, newer than this hub (%s), but a hub already handed "
                     "over to %s once; staying", bridge, version, self.settings.version, version)
            return False
        if time.monotonic() - self.started < self.settings.handover_cooldown:
            log.info("hub: newer bridge %s (%s) seen; no hand-over during the first %g s",
                     bridge, version, self.settings.handover_cooldown)
            return False
        log.info("hub: bridge %s runs %s, newer than this hub (%s); handing over", bridge,
                 version, self.settings.version)
        self.handing_over = True  # one successor only
        self.handovers.remember(version)
        return True

    def _unregister(self, exchange: HttpExchange) -> None:
        body = exchange.request.json()
        instance_id = body.get("id") if isinstance(body, dict) else None
        pid = body.get("pid") if isinstance(body, dict) else None
        if not isinstance(instance_id, str) or not instance_id or len(instance_id) > 128 or \
                isinstance(pid, bool) or not isinstance(pid, int):
            raise HttpError(400, "unregister needs {\"id\": <instance id>, \"pid\": <its pid>}")
        try:
            removed = self.registry.unregister(instance_id, pid,
                                               body.get("key") if isinstance(body, dict) else None)
        except TakeOver as exc:
            raise HttpError(409, str(exc)) from None
        if removed:
            log.info("hub: instance %s unregistered", instance_id)
        exchange.respond(200, {"ok": True, "removed": removed})

    def _create_instance(self, exchange: HttpExchange) -> None:
        body = exchange.request.json()
        cwd = body.get("cwd") if isinstance(body, dict) else None
        directory = resolve_project(cwd, self.settings.project_roots)
        assert self.spawner is not None
        instance_id, reused = self.spawner.ensure(directory)
        exchange.respond(200 if reused else 201, {"id": instance_id, "reused": reused})

    # --- WebSocket proxy --------------------------------------------------------------

    def _websocket(self, exchange: HttpExchange) -> None:
        request = exchange.request
        if request.method != "GET":
            exchange.respond(405, "GET only\n", headers=[("Allow", "GET")])
            return
        problem = handshake.handshake_problem(request.headers)
        if problem is not None:
            exchange.respond(400, problem + "\n")
            return
        instance_id = request.query.get("instance", "")
        instance = self.registry.get(instance_id)
        if instance is None:
            exchange.respond(404, f"unknown instance: {instance_id!r}\n")
            return
        # The port must still be that bridge's, proved without the token crossing (ownership.py).
        checked_at = time.monotonic()
        proved = False
        with gevent.Timeout(self.settings.owner_check_timeout, False):  # the whole check, bounded
            proved = port_proves_owner(instance.registration.port, self.settings.token,
                                       instance_id, timeout=self.settings.owner_check_timeout)
        if not proved:
            # Refused in the same time whether the port is closed (at once), open and silent
            # (the whole timeout) or something else: a token holder cannot scan ports with it.
            gevent.sleep(max(0.0, checked_at + self.settings.owner_check_timeout -
                             time.monotonic()))
            log.warning("hub: the port instance %s registered does not prove it is that bridge; "
                        "not dialing it", instance_id)
            exchange.respond(502, "bridge unreachable: its port does not prove it is that bridge\n")
            return
        # The bridge leg first: the client is accepted only onto an open pipe.
        try:
            # A proof, never the token: a squatter on a dead bridge's port learns nothing,
            # and fails the handshake (it cannot prove the token back).
            bridge = handshake.connect(f"ws://127.0.0.1:{instance.registration.port}/acp", (),
                                ws.WebSocketOptions(ping_interval=self.settings.ping_interval,
                                                    connect_timeout=5.0),
                                name=f"hub-bridge-{instance_id}", prove_with=self.settings.token)
        except handshake.HandshakeRefused as exc:
            log.warning("hub: bridge %s refused the proxy leg (HTTP %d)", instance_id, exc.status)
            exchange.respond(502, f"bridge refused the connection (HTTP {exc.status})\n")
            return
        except (OSError, handshake.HandshakeError) as exc:
            log.warning("hub: bridge %s unreachable: %s", instance_id, exc)
            exchange.respond(502, f"bridge unreachable: {exc}\n")
            return
        try:
            client = handshake.accept(exchange.detach(), request.raw, self._ws_options,
                               name=f"hub-client-{instance_id}",
                               extra_headers=request.answer_headers,
                               subprotocol=SUBPROTOCOL if offers_subprotocol(request.headers)
                               else None)
        except (OSError, handshake.HandshakeError) as exc:
            log.info("hub: client left during the handshake: %s", exc)
            bridge.abort(ws.CloseCode.GOING_AWAY, "client left")
            exchange.sock.close()
            return
        pair = ProxyPair(client, bridge, instance_id, self.proxies.discard)
        self.proxies.add(pair)
        self._idle_since = time.monotonic()
        pair.start()
        log.info("hub: proxying a client from %s to instance %s", exchange.peer[0], instance_id)

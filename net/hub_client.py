"""A bridge's side of the hub: register, heartbeat, unregister, start a hub if none.

``HubClient`` runs one greenlet that registers the bridge at start and then
every ``heartbeat`` seconds (the registration is the heartbeat), with the
sessions a callback reports. When the hub cannot be reached it starts one,
detached (its own session, output to /dev/null or a log file), at most once
per ``autostart_interval`` and never when autostart is off. A 401 (token
rotated, or not yet in the config) is retried on a widening backoff (tenacity),
re-reading the token each time, and never given up. When the hub answers
``handover`` (this bridge is newer and may start hubs), the client starts a
hub of its own version once the old one has left, unless the hub says its
supervisor restarts it (``successor: "supervisor"``, a ``--stay`` hub). See docs/hub.md
("Bridges and the hub").
"""

from __future__ import annotations

import http.client
import logging
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Literal
from collections.abc import Callable, Mapping, Sequence

import gevent
import gevent.event
import tenacity
import ujson

from zcode_acp.net import proofs, registration_key

log = logging.getLogger(__name__)

Origin = Literal["editor", "serve"]
SessionsSource = Callable[[], Sequence[Mapping[str, Any]]]
TokenSource = Callable[[], str | None]

# After starting a hub, registration is retried this often for this long
# (the new hub needs a moment to bind) before falling back to the heartbeat.
FAST_RETRY = 0.5
FAST_RETRY_WINDOW = 10.0
UNPROVED = -1  # the status _post reports for an answer that did not prove the token
MAX_ANSWER_BYTES = 1024 * 1024


def default_hub_command() -> list[str]:
    return [sys.executable, "-m", "zcode_acp", "hub"]


@dataclass(frozen=True)
class BridgeIdentity:
    """The facts a bridge registers with (everything but its sessions)."""

    instance_id: str
    port: int
    origin: Origin
    workspace: str
    version: str
    started_at: int = field(default_factory=lambda: int(time.time() * 1000))  # epoch ms
    pid: int = field(default_factory=os.getpid)
    # Known only to this bridge and the hub (sent in proved requests, never listed): the
    # hub lets only the holder of the key that made a registration change or remove it.
    key: str = field(default_factory=registration_key.new_key, repr=False)

    @classmethod
    def new(cls, port: int, origin: Origin, workspace: str, version: str) -> BridgeIdentity:
        # The id commits to the key (net/registration_key.py): a hub that restarted, and so knows
        # no key, still lets no one but this bridge register it.
        key = registration_key.new_key()
        return cls(instance_id=registration_key.instance_id_for(key), port=port, origin=origin,
                   workspace=workspace, version=version, key=key)


class Outcome(Enum):
    REGISTERED = "registered"
    HANDOVER = "handover"          # registered, and the hub is leaving for us
    SUPERVISED_HANDOVER = "supervised-handover"  # leaving; its supervisor starts the next
    UNREACHABLE = "unreachable"
    UNAUTHORIZED = "unauthorized"
    REJECTED = "rejected"          # any other answer (logged)
    UNTRUSTED = "untrusted"        # something answers on the hub's port without proving the token


class _Stopped(Exception):
    pass


class HubClient:
    def __init__(self, identity: BridgeIdentity, sessions: SessionsSource, *,
                 token: str | TokenSource, hub_host: str = "127.0.0.1", hub_port: int = 8377,
                 autostart: bool = True, heartbeat: float = 10.0,
                 autostart_interval: float = 60.0, request_timeout: float = 3.0,
                 hub_command: Sequence[str] | None = None, hub_log: Path | None = None,
                 hub_env: Mapping[str, str] | None = None,
                 auth_backoff: tenacity.wait.wait_base | None = None) -> None:
        self.identity = identity
        self._sessions = sessions
        self._token: TokenSource = token if callable(token) else (lambda: token)
        self.hub_host = hub_host
        self.hub_port = hub_port
        self.autostart = autostart
        self.heartbeat = heartbeat
        self.autostart_interval = autostart_interval
        self.request_timeout = request_timeout
        self.hub_command = list(hub_command) if hub_command else default_hub_command()
        self.hub_log = hub_log
        self.hub_env = dict(os.environ if hub_env is None else hub_env)
        self.auth_backoff = auth_backoff or tenacity.wait_exponential(multiplier=1, min=1,
                                                                      max=60)
        self.last_outcome: Outcome | None = None
        self.registrations = 0
        self.hub_processes: list[subprocess.Popen[bytes]] = []
        self._last_autostart: float | None = None
        self._last_sessions: list[dict[str, Any]] = []
        self._stopping = gevent.event.Event()
        self._wake = gevent.event.Event()
        self._outcome_changed = gevent.event.Event()
        self._greenlet: gevent.Greenlet | None = None
        self._warned: set[str] = set()

    # --- life cycle -------------------------------------------------------------------

    def start(self) -> HubClient:
        self._greenlet = gevent.spawn(self._run)
        return self

    def stop(self, *, unregister: bool = True, timeout: float = 1.0) -> None:
        """Stop heartbeating; tell the hub this bridge is gone (best effort, bounded)."""
        self._stopping.set()
        if self._greenlet is not None:
            self._greenlet.kill(block=True, timeout=timeout)
            self._greenlet = None
        if unregister and self.registrations:
            self._post("/api/unregister", {"id": self.identity.instance_id, "pid": self.identity.pid,
                                           "key": self.identity.key},
                       timeout=min(timeout, self.request_timeout))

    def poke(self) -> None:
        """Register now (e.g. the session list changed) instead of at the next beat."""
        self._wake.set()

    def wait_for(self, outcome: Outcome, timeout: float) -> bool:
        """Until the last attempt had ``outcome`` (tests and start-up checks)."""
        with gevent.Timeout(timeout, False):
            while self.last_outcome is not outcome:
                self._outcome_changed.wait()
                self._outcome_changed.clear()
            return True
        return False

    # --- the loop ---------------------------------------------------------------------

    def _run(self) -> None:
        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_result(lambda outcome: outcome is Outcome.UNAUTHORIZED),
            wait=self.auth_backoff, stop=tenacity.stop_never, sleep=self._sleep,
            before_sleep=self._log_auth_retry)
        try:
            while not self._stopping.is_set():
                outcome = retrying(self.register_once)
                if outcome is Outcome.UNREACHABLE:
                    self._maybe_start_hub()
                elif outcome is Outcome.HANDOVER:
                    self._start_hub_after_handover()
                elif outcome is Outcome.SUPERVISED_HANDOVER:
                    # The unit restarts that hub; one of ours would race it for the port.
                    # Counted as a start: no autostart for a while, quick retries meanwhile.
                    self._last_autostart = time.monotonic()
                recently_started = (self._last_autostart is not None and
                                    time.monotonic() - self._last_autostart < FAST_RETRY_WINDOW)
                quick = (outcome in (Outcome.UNREACHABLE, Outcome.HANDOVER) and recently_started) \
                    or outcome is Outcome.SUPERVISED_HANDOVER
                if self._wake.wait(min(FAST_RETRY, self.heartbeat) if quick else self.heartbeat):
                    self._wake.clear()
        except _Stopped:
            return

    def _sleep(self, seconds: float) -> None:
        if self._stopping.wait(seconds):
            raise _Stopped()

    def _log_auth_retry(self, state: tenacity.RetryCallState) -> None:
        if state.attempt_number == 1:
            log.warning("hub at %s:%d refuses this bridge's token (401); retrying with backoff",
                        self.hub_host, self.hub_port)

    def register_once(self) -> Outcome:
        """One registration attempt (the loop's step; usable directly)."""
        payload = {
            "id": self.identity.instance_id, "pid": self.identity.pid, "key": self.identity.key,
            "port": self.identity.port, "origin": self.identity.origin,
            "workspace": self.identity.workspace, "startedAt": self.identity.started_at,
            "version": self.identity.version, "canStartHub": self.autostart,
            "sessions": self._current_sessions(),
        }
        answer = self._post("/api/register", payload, timeout=self.request_timeout)
        if answer is None:
            outcome = Outcome.UNREACHABLE
        elif answer[0] == UNPROVED:
            self._warn_once("untrusted", "something listens on the hub's port %s:%d but cannot "
                            "prove it knows the token: not a hub of ours (another user's program?); "
                            "nothing was sent to it but a proof", self.hub_host, self.hub_port)
            outcome = Outcome.UNTRUSTED
        else:
            status, body = answer
            if status == 200:
                self.registrations += 1
                handover = isinstance(body, dict) and body.get("handover") is True
                supervised = isinstance(body, dict) and body.get("successor") == "supervisor"
                outcome = (Outcome.REGISTERED if not handover else
                           Outcome.SUPERVISED_HANDOVER if supervised else Outcome.HANDOVER)
            elif status == 401:
                outcome = Outcome.UNAUTHORIZED
            else:
                self._warn_once(f"status-{status}", "hub rejected the registration: HTTP %d %s",
                                status, body)
                outcome = Outcome.REJECTED
        if outcome is not self.last_outcome and outcome is Outcome.REGISTERED:
            log.info("registered with the hub at %s:%d as %s", self.hub_host, self.hub_port,
                     self.identity.instance_id)
        self.last_outcome = outcome
        self._outcome_changed.set()
        return outcome

    def _current_sessions(self) -> list[dict[str, Any]]:
        try:
            self._last_sessions = [dict(s) for s in self._sessions()]
        except Exception:
            log.exception("the sessions callback failed; sending the last known list")
        return self._last_sessions

    # --- starting a hub ---------------------------------------------------------------

    def _maybe_start_hub(self) -> bool:
        if not self.autostart:
            self._warn_once("no-autostart", "no hub at %s:%d, and ZCODE_ACP_HUB_AUTOSTART=0; "
                            "not starting one", self.hub_host, self.hub_port)
            return False
        now = time.monotonic()
        if self._last_autostart is not None and \
                now - self._last_autostart < self.autostart_interval:
            return False
        return self._spawn_hub("no hub answered")

    def _start_hub_after_handover(self) -> None:
        # The old hub leaves ~0.2 s after answering; the new one waits for the port.
        # A hand-over right after a start of ours is the same hand-over seen twice.
        recent = self._last_autostart is not None and \
            time.monotonic() - self._last_autostart < FAST_RETRY_WINDOW
        if self.autostart and not recent:
            self._spawn_hub("the hub handed over to this newer bridge")

    def _spawn_hub(self, why: str) -> bool:
        self._last_autostart = time.monotonic()
        env = dict(self.hub_env)
        token = self._token()
        if token:
            env["ZCODE_ACP_REMOTE_TOKEN"] = token
        env["ZCODE_ACP_HUB_HOST"] = self.hub_host
        env["ZCODE_ACP_HUB_PORT"] = str(self.hub_port)
        output: int | None = None
        try:
            if self.hub_log is not None:
                output = os.open(self.hub_log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            target = output if output is not None else subprocess.DEVNULL
            process = subprocess.Popen(self.hub_command, env=env, stdin=subprocess.DEVNULL,
                                       stdout=target, stderr=target, start_new_session=True,
                                       close_fds=True, cwd="/")
        except OSError as exc:
            log.warning("could not start a hub (%s): %s", " ".join(self.hub_command), exc)
            return False
        finally:
            if output is not None:
                os.close(output)
        self.hub_processes.append(process)
        log.info("%s; started a hub (pid %d) on %s:%d", why, process.pid, self.hub_host,
                 self.hub_port)
        return True

    # --- HTTP -------------------------------------------------------------------------

    def _post(self, path: str, payload: Mapping[str, Any],
              timeout: float) -> tuple[int, object] | None:
        """(status, JSON or text body); None when the hub cannot be reached.

        The request proves the token instead of carrying it, and an answer is believed
        only when it proves the token back: whatever squats the hub's port learns
        nothing, and a 2xx from it is ``(UNPROVED, body)``.
        """
        host = "127.0.0.1" if self.hub_host in ("", "0.0.0.0", "::") else self.hub_host
        authority = f"[{host}]:{self.hub_port}" if ":" in host else f"{host}:{self.hub_port}"
        connection = http.client.HTTPConnection(host, self.hub_port, timeout=timeout)
        body = ujson.dumps(payload).encode("utf-8")
        token = self._token() or ""
        proof, nonce = proofs.request_headers(token, "POST", path, authority, body)
        headers = {"Content-Type": "application/json", "Host": authority, **dict(proof)}
        try:
            connection.request("POST", path, body=body, headers=headers)
            response = connection.getresponse()
            raw = response.read(MAX_ANSWER_BYTES)
        except (OSError, http.client.HTTPException):
            return None
        finally:
            connection.close()
        status = response.status
        if status < 400 and not proofs.answer_holds(token, nonce,
                                                    response.getheader(proofs.ANSWER_HEADER)):
            status = UNPROVED
        try:
            return status, ujson.loads(raw)
        except ValueError:
            return status, raw.decode("utf-8", "replace")

    def _warn_once(self, key: str, message: str, *args: object) -> None:
        if key not in self._warned:
            self._warned.add(key)
            log.warning(message, *args)

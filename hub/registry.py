"""The hub's table of live bridges (pure: no I/O, the clock is passed in).

A bridge registers at start and every heartbeat with its facts and the
sessions it serves; the table validates each registration, remembers when
each bridge was last heard from, and builds the discovery listing, where a
session advertised by several bridges appears once, under the bridge whose
copy is newest (docs/hub.md, "Discovery").
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, field, replace
from datetime import datetime, UTC
from typing import Any, Literal

from zcode_acp.net import registration_key
from zcode_acp.protocol.display_text import shown_title

Origin = Literal["editor", "serve"]
MAX_ID = 128
MAX_SESSIONS = 1000
MAX_TEXT = 4096          # a workspace path
MAX_TITLE = 512
MAX_VERSION = 64
MAX_PID = 4_194_304      # Linux's pid_max ceiling
# Epoch milliseconds between 1970 and 3000: anything else is a bug or an attack (an
# infinity or a NaN would make the listing invalid JSON for every client).
MAX_EPOCH_MS = 32_503_680_000_000
ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


class RegistrationError(ValueError):
    """A register/unregister body that cannot be accepted (answered with 400)."""


class TakeOver(RegistrationError):
    """A registration or removal of an id another bridge holds (answered with 409)."""


@dataclass(frozen=True)
class SessionSummary:
    session_id: str
    updated_at: float | str  # as the bridge sent it: epoch milliseconds or ISO 8601
    status: Literal["running", "idle"] = "idle"
    title: str | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"sessionId": self.session_id, "updatedAt": self.updated_at,
                               "status": self.status}
        if self.title is not None:
            out["title"] = self.title
        return out


@dataclass(frozen=True)
class Registration:
    id: str
    pid: int
    port: int
    origin: Origin
    workspace: str
    started_at: float | str
    version: str
    sessions: tuple[SessionSummary, ...] = ()
    # The digest of the bridge's registration key (never listed): who may change or remove it.
    key_digest: bytes = field(default=b"", repr=False)
    # The id is one only its key gives (net/registration_key.py) and this registration holds that key.
    id_proved: bool = field(default=False, repr=False)


def key_digest(key: object) -> bytes:
    """The digest a key is compared by (constant time, whatever its length)."""
    return hashlib.sha256(key.encode("utf-8")).digest() if isinstance(key, str) else b""


def _same_key(held: bytes, given: bytes) -> bool:
    """``given`` may change a registration made with ``held`` (keyless: an older bridge's)."""
    return hmac.compare_digest(held, given)


@dataclass
class Instance:
    registration: Registration
    last_seen: float

    @property
    def id(self) -> str:
        return self.registration.id

    def as_json(self, sessions: list[SessionSummary]) -> dict[str, Any]:
        r = self.registration
        return {"id": r.id, "pid": r.pid, "port": r.port, "origin": r.origin,
                "workspace": r.workspace, "startedAt": r.started_at, "version": r.version,
                "sessions": [s.as_json() for s in sessions]}


def instant(value: float | str) -> float:
    """A comparable instant (epoch ms) for a number (epoch ms) or an ISO 8601 string."""
    if isinstance(value, (int, float)):
        return float(value)
    try:
        parsed = datetime.fromisoformat(value)
    except (ValueError, OverflowError):
        return 0.0
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp() * 1000.0


def _text(body: dict[str, Any], key: str, *, required: bool = False, default: str = "",
          limit: int = MAX_TEXT) -> str:
    value = body.get(key)
    if value is None:
        if required:
            raise RegistrationError(f"{key} is required")
        return default
    if not isinstance(value, str) or len(value) > limit:
        raise RegistrationError(f"{key} must be a string of at most {limit} characters")
    if any(ord(c) < 0x20 or c == "\x7f" for c in value):
        raise RegistrationError(f"{key} must not contain control characters")
    return value


def _stamp(value: object, key: str, now_ms: float) -> float | str:
    if value is None:
        return now_ms
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise RegistrationError(f"{key} must be epoch milliseconds or an ISO 8601 string")
    if isinstance(value, str):
        if len(value) > 64 or not 0 < instant(value) <= MAX_EPOCH_MS:
            raise RegistrationError(f"{key} is not an ISO 8601 time")
        return value
    # ``not 0 <= x <= MAX`` is also true for a NaN, and bounds an infinity or a huge int.
    if not 0 <= value <= MAX_EPOCH_MS:
        raise RegistrationError(f"{key} must be epoch milliseconds between 1970 and 3000")
    return value


def _session(raw: object, now_ms: float) -> SessionSummary:
    if not isinstance(raw, dict):
        raise RegistrationError("each session must be an object")
    session_id = _text(raw, "sessionId", required=True, limit=MAX_ID * 2)
    if not session_id:
        raise RegistrationError("session.sessionId must be a non-empty string")
    title = raw.get("title")
    if title is not None and not isinstance(title, str):
        raise RegistrationError("session.title must be a string")
    status = raw.get("status")
    if status is not None and (not isinstance(status, str) or len(status) > 32):
        raise RegistrationError("session.status must be a short string")
    return SessionSummary(
        session_id=session_id,
        updated_at=_stamp(raw.get("updatedAt"), "session.updatedAt", now_ms),
        status="running" if status == "running" else "idle",
        # A title is shown, not checked: cut to a line's worth, control characters and bidi
        # controls dropped (protocol/display_text.py).
        title=shown_title(title[:MAX_TITLE]) if title else title)


def parse_registration(body: object, *, now_ms: float) -> Registration:
    """Validate a ``POST /api/register`` body."""
    if not isinstance(body, dict):
        raise RegistrationError("body must be a JSON object")
    instance_id = _text(body, "id", required=True, limit=MAX_ID)
    if not instance_id or not set(instance_id) <= ID_CHARS:
        raise RegistrationError("id must be a non-empty string of letters, digits, '-', '_', '.'")
    port = body.get("port")
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise RegistrationError("port must be an integer in 1..65535")
    pid = body.get("pid", 0)
    if isinstance(pid, bool) or not isinstance(pid, int) or not 0 <= pid <= MAX_PID:
        raise RegistrationError(f"pid must be an integer in 0..{MAX_PID}")
    origin = body.get("origin", "editor")
    if origin not in ("editor", "serve"):
        raise RegistrationError('origin must be "editor" or "serve"')
    # Optional for bridges older than the key (issue 29): their registrations stay bound to
    # pid and port only (docs/decisions.md).
    key = body.get("key")
    if key is not None and (not isinstance(key, str) or not 16 <= len(key) <= MAX_ID):
        raise RegistrationError("key must be the bridge's registration key (16 to 128 characters)")
    sessions = body.get("sessions", [])
    if not isinstance(sessions, list) or len(sessions) > MAX_SESSIONS:
        raise RegistrationError(f"sessions must be a list (at most {MAX_SESSIONS})")
    return Registration(
        id=instance_id, pid=pid, port=port, origin=origin,
        workspace=_text(body, "workspace"),
        started_at=_stamp(body.get("startedAt"), "startedAt", now_ms),
        version=_text(body, "version", default="0", limit=MAX_VERSION),
        sessions=tuple(_session(s, now_ms) for s in sessions), key_digest=key_digest(key),
        id_proved=registration_key.key_gives(instance_id, key))


@dataclass
class Registry:
    instances: dict[str, Instance] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.instances)

    def get(self, instance_id: str) -> Instance | None:
        return self.instances.get(instance_id)

    def register(self, registration: Registration, now: float) -> Instance:
        """Add or refresh; a heartbeat keeps the start time first seen.

        An id belongs to the process that registered it first: its pid and port, and the
        key it registered with (which only that bridge knows: the pid and the port are in
        the listing). A registration that would take it over or rewrite it is refused
        (``TakeOver``, answered 409). An id derived from a key (``b-…``: today's bridges)
        is the key's alone, even for its first registration: a table that starts empty (a
        restarted hub) cannot be pre-claimed.
        """
        if registration_key.is_key_bound(registration.id) and not registration.id_proved:
            # An id that commits to a key, registered without it: the bridge's, claimed by someone
            # else (first, after a restart of this hub, when no key is known: issue 29).
            raise TakeOver(f"instance {registration.id} belongs to another bridge")
        existing = self.instances.get(registration.id)
        if existing is not None and (
                (existing.registration.pid, existing.registration.port) !=
                (registration.pid, registration.port) or
                not _same_key(existing.registration.key_digest, registration.key_digest)):
            raise TakeOver(f"instance {registration.id} belongs to another bridge")
        if existing is not None:
            registration = replace(registration,
                                   started_at=existing.registration.started_at)
        instance = Instance(registration, last_seen=now)
        self.instances[registration.id] = instance
        return instance

    def unregister(self, instance_id: str, pid: int | None = None, key: object = None) -> bool:
        """Remove; with ``pid``, only the process that registered the id, with its key, may
        (else TakeOver). Without ``pid``: the hub's own sweep."""
        existing = self.instances.get(instance_id)
        if existing is None:
            return False
        if pid is not None and (existing.registration.pid != pid or
                                not _same_key(existing.registration.key_digest, key_digest(key))):
            raise TakeOver(f"instance {instance_id} belongs to another bridge")
        del self.instances[instance_id]
        return True

    def silent(self, now: float, after: float) -> list[Instance]:
        """Instances not heard from for ``after`` seconds or more."""
        return [i for i in self.instances.values() if now - i.last_seen >= after]

    def listing(self) -> list[dict[str, Any]]:
        """Every instance, oldest first; each session under exactly one instance.

        A session advertised by several bridges stays with the newest
        ``updatedAt`` (ties: the bridge started last), where it is live.
        """
        ordered = sorted(self.instances.values(),
                         key=lambda i: instant(i.registration.started_at))
        owner: dict[str, tuple[float, float, str]] = {}
        for inst in ordered:
            started = instant(inst.registration.started_at)
            for session in inst.registration.sessions:
                key = (instant(session.updated_at), started, inst.id)
                best = owner.get(session.session_id)
                if best is None or key[:2] >= best[:2]:
                    owner[session.session_id] = key
        out = []
        for inst in ordered:
            seen: set[str] = set()
            kept = []
            for session in inst.registration.sessions:
                if owner[session.session_id][2] == inst.id and session.session_id not in seen:
                    seen.add(session.session_id)
                    kept.append(session)
            out.append(inst.as_json(kept))
        return out

"""The v4 data plane as one object: the seam the cli016 server wires in.

The server owns the pipe and the legacy engine; it gives this plane a ``Port`` (what the
engine can do) and a ``send`` (write one notification frame), then:

* answers every ``v4/...`` request through ``dispatch(method, params, respond)``: the
  plane calls ``respond(result, None)`` or ``respond(None, V4Error)`` exactly once, and
  only then writes the frames the request caused (an ack comes before its frames, as the
  engine sends them);
* calls ``feed(session_id, event)`` with every legacy event it emits (the ``session/event``
  params ``{type, payload, turnId}``, plus ``permission.*`` / ``userInput.*`` for the
  interactions it asks as requests);
* calls ``tick(now_ms)`` now and then, for the engine's interaction countdowns.

Methods: ``v4/conversation/subscribe|resync|unsubscribe``, ``v4/command``,
``v4/commands/query``, ``v4/attachment/begin|chunk|commit|abort``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from .attachments import AttachmentStore
from .coalesce import FLUSH_WINDOW_MS
from .commands import CommandHandler
from .errors import INVALID_PARAMS, V4Error
from . import file_changes
from .faults import Faults
from .port import Port, SessionSeed
from .projection import ConversationProjection
from .registry import Sessions
from .topics import TopicServer
from .wire import DEFAULT_FRAGMENT_BYTES

Respond = Callable[[dict[str, Any] | None, V4Error | None], None]
INTERNAL_ERROR = -32603
COALESCE_ENV = "ZCODE_SIM_V4_COALESCE"
"""``1``: conversation frames wait out the engine's flush window and go out merged (coalesce.py)."""
FRAGMENT_ENV = "ZCODE_SIM_V4_FRAGMENT_BYTES"
"""Logical frames larger than this many bytes go out as fragments (default 256 KiB)."""
_TERMINAL = frozenset(("turn.completed", "turn.failed"))


def wall_clock_ms() -> float:
    return time.time() * 1000.0


class DataPlane:
    def __init__(self, port: Port, send: Callable[[dict[str, Any]], None], *,
                 clock: Callable[[], float] = wall_clock_ms, faults: Faults | None = None,
                 fragment_bytes: int | None = None,
                 slash_commands: list[dict[str, Any]] | None = None,
                 newer_source: bool = False, coalesce_ms: float | None = None) -> None:
        if coalesce_ms is None:
            coalesce_ms = FLUSH_WINDOW_MS if os.environ.get(COALESCE_ENV) == "1" else 0.0
        if fragment_bytes is None:
            fragment_bytes = int(os.environ.get(FRAGMENT_ENV) or DEFAULT_FRAGMENT_BYTES)
        self.topics = TopicServer(send, clock=clock, faults=faults if faults is not None else Faults.from_env(),
                                  fragment_bytes=fragment_bytes, coalesce_ms=coalesce_ms)
        self.sessions = Sessions(self.topics, clock=clock, slash_commands=slash_commands)
        self.attachments = AttachmentStore()
        self.unsubscribed: list[tuple[str, str]] = []
        """(connectionId, topic) of every ``v4/conversation/unsubscribe``, in order (tests read it)."""
        self.flows: list[tuple[str, str]] = []
        """(connectionId, state) of every ``v4/connection/flow``, in order."""
        self.commands = CommandHandler(port, self.sessions, self.attachments, clock=clock, newer_source=newer_source)
        self._methods: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "v4/conversation/subscribe": self._subscribe,
            "v4/conversation/resync": self.topics.resync,
            "v4/conversation/unsubscribe": self._unsubscribe,
            "v4/connection/flow": self._connection_flow,
            "v4/command": self._command,
            "v4/commands/query": self.commands.query,
            "v4/attachment/begin": self.attachments.begin,
            "v4/attachment/chunk": self.attachments.chunk,
            "v4/attachment/commit": self.attachments.commit,
            "v4/attachment/abort": self.attachments.abort,
            "v4/conversation/fileChanges": self._file_changes,
        }

    @property
    def faults(self) -> Faults:
        return self.topics.faults

    def handles(self, method: str) -> bool:
        return method in self._methods

    def dispatch(self, method: str, params: Any, respond: Respond) -> None:
        """Answer one request (exactly once), then send the frames it caused."""
        handler = self._methods.get(method)
        self.topics.hold()
        try:
            if handler is None:
                respond(None, V4Error(-32601, f"Method not found: {method}"))
            elif not isinstance(params, dict):
                respond(None, V4Error(INVALID_PARAMS, "Invalid params: expected an object"))
            else:
                try:
                    result = handler(params)
                except V4Error as error:
                    respond(None, error)
                except Exception as error:  # a simulator bug still gets its request answered, once
                    respond(None, V4Error(INTERNAL_ERROR, f"Internal error: {type(error).__name__}: {error}"))
                else:
                    respond(result, None)
        finally:
            self.topics.release()

    def decided(self, session_id: Any, command_id: str) -> bool:
        """Whether a command was decided already (a replay is the plane's to answer: ``duplicate``)."""
        key = (session_id if isinstance(session_id, str) else None, command_id)
        return key in self.commands.decided

    def record_decision(self, session_id: str, ack: dict[str, Any]) -> None:
        """An ack the server decided itself (an engine quirk the plane does not play), kept for replays."""
        self.commands.decided[(session_id, str(ack["commandId"]))] = ack

    def register_session(self, seed: SessionSeed, workspace_key: str) -> ConversationProjection:
        """A session made outside ``createSession`` (a legacy ``session/create``): served on v4 too."""
        known = self.sessions.get(seed.session_id)
        return known if known is not None else self.sessions.open(seed, workspace_key)

    def feed(self, session_id: str, event: dict[str, Any]) -> None:
        """One legacy event of ``session_id``; a turn's end lets the queue drain."""
        projection = self.sessions.get(session_id)
        if projection is None:
            return
        projection.feed(event)
        if event.get("type") in _TERMINAL:
            self.commands.drain(session_id)

    def tick(self, now_ms: float) -> None:
        self.commands.expire_interactions(now_ms)
        for projection in list(self.sessions.conversations.values()):
            projection.commit()
        self.topics.flush(now_ms)

    @property
    def coalescing(self) -> bool:
        return self.topics.coalesce_ms > 0

    # -- inside --------------------------------------------------------------------------

    def _subscribe(self, params: dict[str, Any]) -> dict[str, Any]:
        topic = params.get("topic")
        if isinstance(topic, str) and "/" in topic and not topic.startswith("conversation/"):
            self.sessions.workspace(topic.partition("/")[2])  # a workspace's topics exist once asked for
        return self.topics.subscribe(params)

    def _unsubscribe(self, params: dict[str, Any]) -> dict[str, Any]:
        subscription = self.topics.subscriptions.get(params.get("subscriptionId"))  # type: ignore[arg-type]
        answer = self.topics.unsubscribe(params)
        if subscription is not None:
            self.unsubscribed.append((subscription.connection_id, subscription.topic))
        return answer

    def _connection_flow(self, params: dict[str, Any]) -> dict[str, Any]:
        """``v4/connection/flow {connectionId, state}`` (transport.ts, a strict object): ``closed`` ends every
        subscription of the connection, so nothing more is published to it (v4-gateway.ts
        setConnectionFlowState); ``saturated``/``drained`` are recorded and answered."""
        connection_id, state = params.get("connectionId"), params.get("state")
        extra = sorted(set(params) - {"connectionId", "state"})
        if not isinstance(connection_id, str) or not connection_id or state not in ("saturated", "drained", "closed") \
                or extra:
            raise V4Error(INVALID_PARAMS, "Invalid params: connectionId (a non-empty string) and state "
                          "(saturated | drained | closed), nothing else" + (f"; unrecognized: {extra}" if extra else ""))
        self.flows.append((connection_id, str(state)))
        if state == "closed":
            self.topics.drop_connection(connection_id)
        return {}

    def resident(self, session_id: str) -> bool:
        """Whether the engine keeps the session in memory: a conversation subscriber (v4-gateway.ts
        ``hasConversationSubscribers``) or a turn holds it."""
        projection = self.sessions.get(session_id)
        topic = f"conversation/{session_id}"
        return projection is not None and (projection.busy or any(
            s.topic == topic for s in self.topics.subscriptions.values()))

    def _file_changes(self, params: dict[str, Any]) -> dict[str, Any]:
        projection = self.sessions.get(params.get("sessionId"))
        if projection is None:
            raise V4Error(INVALID_PARAMS, "no such session", {"reasonCode": "proto.sessionNotFound"})
        return file_changes.answer(projection, params)

    def _command(self, params: dict[str, Any]) -> dict[str, Any]:
        ack = self.commands.command(params)
        for projection in list(self.sessions.conversations.values()):
            projection.commit()  # what the command changed goes out as one frame (after the ack)
        return ack

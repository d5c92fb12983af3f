"""A fake engine behind the v4 data plane, and a bridge-side client that decodes its frames.

``FakePort`` records what the plane asks of the engine; ``Engine`` plays legacy events
the way the cli016 dialect emits them (``session/event`` params). ``Client`` is the
bridge's own decoder (``protocol/v4``: wire parsing, reassembly, the topic state
machine, the conversation applier) reading the plane's notifications, so a test can
check that what the bridge ends up holding is what the simulator holds.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from zcode_acp.protocol.v4 import topic as client_topic
from zcode_acp.protocol.v4.conversation_apply import ConversationState
from zcode_acp.protocol.v4.wire import parse_wire
from zcode_acp.sim.v4.errors import V4Error
from zcode_acp.sim.v4.faults import Faults
from zcode_acp.sim.v4.plane import DataPlane
from zcode_acp.sim.v4.port import SessionSeed
from zcode_acp.sim.v4.snapshot import session_config

WORKSPACE = "/fixture/workspace"


class Clock:
    """Milliseconds that move only when a test says so (no wall clock in these tests)."""

    def __init__(self, start: int = 1_791_032_434_000) -> None:
        self.now = start

    def __call__(self) -> float:
        self.now += 1
        return float(self.now)


@dataclass
class FakePort:
    calls: list[tuple[Any, ...]] = field(default_factory=list)
    models: frozenset[tuple[str, str]] = frozenset({("zhipu", "glm-5"), ("zhipu", "glm-5-air")})
    running_works: set[str] = field(default_factory=set)
    _ids: Any = field(default_factory=lambda: itertools.count(1))

    def seed(self) -> SessionSeed:
        return SessionSeed(f"sess_{next(self._ids)}", session_config("zhipu", "glm-5", "high", ["low", "high", "max"]),
                           context_window=200_000)

    def create_session(self, workspace_id: str) -> SessionSeed:
        self.calls.append(("create_session", workspace_id))
        return self.seed()

    def start_turn(self, session_id: str, text: str, attachments: list[dict[str, Any]]) -> None:
        self.calls.append(("start_turn", session_id, text, attachments))

    def guide(self, session_id: str, text: str, input_id: str) -> None:
        self.calls.append(("guide", session_id, text, input_id))

    def stop(self, session_id: str) -> None:
        self.calls.append(("stop", session_id))

    def compact(self, session_id: str) -> None:
        self.calls.append(("compact", session_id))

    def resolve_interaction(self, session_id: str, request_id: str, kind: str, answer: dict[str, Any]) -> None:
        self.calls.append(("resolve_interaction", session_id, request_id, kind, answer))

    def switch_model(self, session_id: str, provider: str, model: str, thought: str) -> bool:
        self.calls.append(("switch_model", session_id, provider, model, thought))
        return (provider, model) in self.models

    def switch_mode(self, session_id: str, mode: str) -> bool:
        self.calls.append(("switch_mode", session_id, mode))
        return mode in ("build", "plan", "edit")

    def cancel_background(self, session_id: str, work_id: str) -> bool:
        self.calls.append(("cancel_background", session_id, work_id))
        return work_id in self.running_works

    def rename(self, session_id: str, title: str) -> None:
        self.calls.append(("rename", session_id, title))

    def delete(self, session_id: str) -> None:
        self.calls.append(("delete", session_id))

    def truncate(self, session_id: str, turn_id: str) -> None:
        self.calls.append(("truncate", session_id, turn_id))

    def fork(self, session_id: str, turn_id: str) -> SessionSeed:
        self.calls.append(("fork", session_id, turn_id))
        return self.seed()

    def named(self, name: str) -> list[tuple[Any, ...]]:
        return [call for call in self.calls if call[0] == name]


class Engine:
    """Legacy events for one session, shaped as the cli016 dialect emits them."""

    def __init__(self, plane: DataPlane, session_id: str, wire: Wire | None = None) -> None:
        self.plane = plane
        self.session_id = session_id
        self.wire = wire
        self.turns = itertools.count(1)
        self.turn_id = ""

    def event(self, kind: str, payload: dict[str, Any] | None = None, turn: bool = True) -> None:
        event: dict[str, Any] = {"sessionId": self.session_id, "type": kind, "payload": payload or {}}
        if turn and self.turn_id:
            event["turnId"] = self.turn_id
        self.plane.feed(self.session_id, event)
        if self.wire is not None:
            self.wire.pump()

    def start(self, text: str = "hello", source: str = "user") -> str:
        self.turn_id = f"turn_{next(self.turns)}"
        payload: dict[str, Any] = {"inputSource": source, "inputVisibility": "user", "input": text}
        if source == "user":
            payload["foregroundExecutionId"] = f"exec_{self.turn_id}"
        self.event("turn.started", payload)
        return self.turn_id

    def text(self, text: str, kind: str = "text_delta") -> None:
        for word in text.split(" "):
            self.event("model.streaming", {"kind": kind, "delta": word + " "})

    def tool(self, tool_id: str, name: str = "Bash", tails: tuple[str, ...] = (), result: str = "ok",
             error: str | None = None) -> None:
        tool_input = {"command": "make"}
        self.event("model.streaming", {"kind": "tool_call", "toolCallId": tool_id, "toolName": name, "input": tool_input})
        self.event("tool.updated", {"kind": "scheduled", "toolCallId": tool_id, "toolName": name, "input": tool_input})
        self.event("tool.updated", {"kind": "started", "toolCallId": tool_id, "inputOmitted": True})
        for tail in tails:
            self.event("tool.updated", {"kind": "progress", "toolCallId": tool_id, "stdoutTail": tail})
        if error is not None:
            self.event("tool.updated", {"kind": "error", "toolCallId": tool_id, "error": error})
        else:
            self.event("tool.updated", {"kind": "result", "toolCallId": tool_id, "result": result})

    def complete(self, result: str = "success") -> None:
        self.event("turn.completed", {"resultType": result, "usage": {"inputTokens": 10, "outputTokens": 5,
                                                                      "cacheReadTokens": 2, "cacheWriteTokens": 0}})


class Client:
    """The bridge's decoder on the other end of the pipe: ``protocol/v4`` reading the plane's frames."""

    def __init__(self, topic: str, connection_id: str = "bridge") -> None:
        self.topic = topic
        self.connection_id = connection_id
        self.state = ConversationState()
        self.sub: client_topic.TopicSubscription[Any] = client_topic.TopicSubscription(topic, self.state)
        self.outcomes: list[Any] = []
        self.resyncs = 0
        self.asked: list[dict[str, Any]] = []
        """Resync requests written but not yet read by the engine."""

    def accept(self, params: dict[str, Any]) -> None:
        """One notification; a resync it calls for is queued (the engine reads it after what it already wrote)."""
        for outcome in self.sub.accept(parse_wire(params), 0.0):
            self.outcomes.append(outcome)
            if isinstance(outcome, client_topic.ResyncNeeded):
                self.resyncs += 1
                self.asked.append(self.sub.resync_params(self.connection_id, force_snapshot=outcome.force_snapshot))

    def resync(self, plane: DataPlane, wire: Wire) -> None:
        asked, self.asked = self.asked, []
        for params in asked:
            answer = call(plane, "v4/conversation/resync", params, wire, pump=False)
            self.outcomes += self.sub.subscribed(answer["ack"])

    def picture(self) -> dict[str, Any]:
        """What the client holds, spelled as a snapshot (to compare with the simulator's)."""
        return {**self.state.state, "rows": {"window": self.state.rows, "totalCount": self.state.total_count,
                                             "firstRowId": self.state.first_row_id}}


class Wire:
    """The pipe: everything the plane writes, in order, routed to clients by topic."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.clients: list[tuple[Client, DataPlane]] = []
        self.log: list[str] = []
        """"frame" and "reply" in the order they were written."""
        self._unread: list[dict[str, Any]] = []
        self.conversation: list[tuple[str, dict[str, Any]]] = []
        """Every frame both ways, as the pipe would carry it (for the engine's schemas)."""
        self._ids = itertools.count(1)

    def send(self, message: dict[str, Any]) -> None:
        message = json.loads(json.dumps(message))  # through the pipe: nothing shared with the simulator
        self.conversation.append(("engine->host", message))
        self.sent.append(message)
        self.log.append("frame")
        self._unread.append(message)

    def pump(self) -> None:
        """Deliver everything written, then let the engine read the clients' resyncs; until quiet."""
        while True:
            while self._unread:
                message = self._unread.pop(0)
                for client, _ in self.clients:
                    if message["params"]["topic"] == client.topic:
                        client.accept(message["params"])
            waiting = [(c, p) for c, p in self.clients if c.asked]
            if not waiting:
                return
            for client, plane in waiting:
                client.resync(plane, self)


def call(plane: DataPlane, method: str, params: Any, wire: Wire | None = None, *, pump: bool = True) -> Any:
    """One request answered by the plane; raises the V4Error it answered with."""
    answers: list[tuple[Any, V4Error | None]] = []
    request_id = next(wire._ids) if wire is not None else 0
    if wire is not None:
        wire.conversation.append(("host->engine", {"id": request_id, "method": method, "params": params}))

    def respond(result: Any, error: V4Error | None) -> None:
        answers.append((result, error))
        if wire is not None:
            wire.log.append("reply")
            reply: dict[str, Any] = {"id": request_id}
            if error is None:
                reply["result"] = json.loads(json.dumps(result))
            else:
                reply["error"] = {"code": error.code, "message": error.message}
            wire.conversation.append(("engine->host", reply))

    plane.dispatch(method, params, respond)
    assert len(answers) == 1, f"{method} answered {len(answers)} times"
    if wire is not None and pump:
        wire.pump()
    result, error = answers[0]
    if error is not None:
        raise error
    return result


def make_plane(faults: str = "", fragment_bytes: int = 256 * 1024) -> tuple[DataPlane, FakePort, Wire, Clock]:
    port, wire, clock = FakePort(), Wire(), Clock()
    plane = DataPlane(port, wire.send, clock=clock, faults=Faults(faults), fragment_bytes=fragment_bytes)
    return plane, port, wire, clock


def create_session(plane: DataPlane, wire: Wire | None = None, command_id: str = "create-1") -> str:
    ack = call(plane, "v4/command", {"commandId": command_id, "clientId": "bridge", "sessionId": None,
                                     "type": "createSession", "payload": {"workspaceId": WORKSPACE},
                                     "issuedAt": 0}, wire)
    assert ack["status"] == "accepted", ack
    return str(ack["result"]["sessionId"])


def subscribe(plane: DataPlane, wire: Wire, topic: str, connection_id: str = "bridge",
              base: dict[str, Any] | None = None) -> tuple[Client, dict[str, Any]]:
    client = Client(topic, connection_id)
    client.sub.resubscribing()
    wire.clients.append((client, plane))
    params = client_topic.subscribe_params(topic, connection_id, workspace={"workspacePath": WORKSPACE,
                                                                             "workspaceKey": WORKSPACE}, base=base)
    answer = call(plane, "v4/conversation/subscribe", params, wire, pump=False)
    client.outcomes += client.sub.subscribed(answer["ack"])  # the ack is read before the frames behind it
    wire.pump()
    return client, answer

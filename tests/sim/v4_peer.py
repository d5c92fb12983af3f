"""A bridge-side v4 subscription to a ``zcode-sim`` process, decoded with the bridge's own ``protocol/v4``.

``Conversation`` subscribes to one topic of a ``SimPeer``, reads the
``v4/conversation/frame`` notifications the process writes (in pipe order, after the
subscribe answer), feeds them to the bridge's topic state machine and applier
(``tests/sim/v4_fakes.Client``), and asks the process for the resyncs the client calls
for. ``until`` waits on frames (bounded), never on the clock.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from tests.sim.peer import TIMEOUT, SimPeer
from tests.sim.v4_fakes import Client
from zcode_acp.protocol.v4 import commands as bridge
from zcode_acp.protocol.v4 import topic as client_topic
from zcode_acp.protocol.v4.conversation_apply import ConversationState


def command(peer: SimPeer, cmd: bridge.Command, command_id: str | None = None,
            base: bridge.Base | None = None) -> dict[str, Any]:
    """One ``v4/command`` as the bridge builds it; its ack."""
    params = bridge.envelope(cmd, command_id=command_id or uuid.uuid4().hex, client_id="tests", issued_at=1,
                             base=base)
    ack: dict[str, Any] = peer.result("v4/command", params)
    return ack


class Conversation:
    def __init__(self, peer: SimPeer, topic: str, connection_id: str = "tests", applier: Any = None) -> None:
        """``applier``: the bridge's state for another kind of topic (a conversation's by default)."""
        self.peer = peer
        self.topic = topic
        self.connection_id = connection_id
        self.client = Client(topic, connection_id)
        if applier is not None:
            self.client.state = applier
            self.client.sub = client_topic.TopicSubscription(topic, applier)
        self.read = 0
        self.ack: dict[str, Any] = {}

    @property
    def state(self) -> Any:
        """The applier's state (``ConversationState`` unless another applier was given)."""
        return self.client.state

    def open(self, base: dict[str, Any] | None = None) -> dict[str, Any]:
        self.client.sub.resubscribing()
        self.read = self.peer.mark()
        params = client_topic.subscribe_params(self.topic, self.connection_id, base=base)
        self.ack = self.peer.result("v4/conversation/subscribe", params)["ack"]
        self.client.outcomes += self.client.sub.subscribed(self.ack)  # the ack is read before the frames behind it
        return self.ack

    def pump(self) -> None:
        """Everything the process wrote since the last pump, then the resyncs it called for."""
        with self.peer.changed:
            frames = self.peer.frames[self.read:]
            self.read += len(frames)
        for frame in frames:
            if frame.get("method") == "v4/conversation/frame" and frame["params"].get("topic") == self.topic:
                self.client.accept(frame["params"])
        asked, self.client.asked = self.client.asked, []
        for params in asked:
            answer = self.peer.result("v4/conversation/resync", params)
            self.client.outcomes += self.client.sub.subscribed(answer["ack"])  # its frames are read at the next pump

    def until(self, predicate: Callable[[ConversationState], bool], timeout: float = TIMEOUT,
              what: str = "the conversation") -> ConversationState:
        deadline = time.monotonic() + timeout
        while True:
            self.pump()
            if predicate(self.state):
                return self.state
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"{what} never came: {self.state.state.get('control')} {self.state.rows[-3:]}"
            self.peer.wait(lambda frame: True, timeout=remaining, start=self.read)  # the next frame, whatever it is

    def rows(self, kind: str) -> list[dict[str, Any]]:
        return [row for row in self.state.rows if row["kind"] == kind]

    def phase(self) -> str:
        return str((self.state.state.get("control") or {}).get("phase"))

    def picture(self) -> dict[str, Any]:
        """The state held, as a snapshot would spell it (``seq``: the last frame applied)."""
        return {**self.client.picture(), "seq": self.client.sub.seq}

    def base(self) -> bridge.Base:
        """What a row-targeting command is decided against: the revision and log epoch held."""
        return bridge.Base(int(self.state.state["revision"]), self.client.sub.log_epoch)


def ended(conversation: Conversation, turns: int, phase: str = "completedSuccess") -> Callable[[ConversationState], bool]:
    """The conversation holds ``turns`` turn headers and the last one has ended in ``phase``."""
    def check(state: ConversationState) -> bool:
        headers = [row for row in state.rows if row["kind"] == "turnHeader"]
        return len(headers) >= turns and conversation.phase() == phase and headers[-1]["state"] != "running"
    return check

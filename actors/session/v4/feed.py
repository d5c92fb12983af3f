"""One session's ``conversation/<sessionId>`` topic on the v4 data plane (docs/v4.md).

A plain part of the Session (no actor, no I/O): it owns the subscription (assembler,
cursor, the applied ``ConversationState``) and the translator that turns each applied
frame into ACP updates. The Session gives it what the backend sent, in pipe order, and
does what the returned ``Step`` says: send the updates, act on the signals, send the
resync it asks for.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from zcode_acp.protocol.v4 import commands as v4commands
from zcode_acp.protocol.v4 import topic as v4topic
from zcode_acp.protocol.v4.conversation import ConversationTranslator, Signal, Translation
from zcode_acp.protocol.v4.conversation_apply import Change, ConversationState
from zcode_acp.protocol.v4.conversation_view import control as control_of


@dataclass(slots=True)
class Step:
    updates: list[dict[str, Any]] = field(default_factory=list)
    signals: list[Signal] = field(default_factory=list)
    resync: dict[str, Any] | None = None
    """``v4/conversation/resync`` params to send, when a frame could not be applied."""
    ignored: list[str] = field(default_factory=list)
    """Why frames were dropped (a stale subscription, a duplicate): logged at debug."""


class V4Feed:
    def __init__(self, backend_session_id: str, connection_id: str, lang: str = "en",
                 terminal_output: bool = False, own_command: Callable[[str], bool] | None = None) -> None:
        self.connection_id = connection_id
        self.topic = f"conversation/{backend_session_id}"
        self.state = ConversationState()
        self.subscription: v4topic.TopicSubscription[Change] = v4topic.TopicSubscription(self.topic, self.state)
        self.translator = ConversationTranslator(lang=lang, terminal_output=terminal_output,
                                                 retry_prefix=uuid.uuid4().hex[:12], own_command=own_command)

    def subscribe_params(self) -> dict[str, Any]:
        if self.subscription.subscription_id is not None:
            self.subscription.resubscribing()  # frames wait for the new ack
        return v4topic.subscribe_params(self.topic, self.connection_id)

    def subscribed(self, result: Any, now_ms: float) -> Step:
        ack = result.get("ack") if isinstance(result, dict) else None
        return self._step(self.subscription.subscribed(ack, now_ms))

    def frames(self, params: list[dict[str, Any]], now_ms: float) -> Step:
        return self._step(self.subscription.accept_many(params, now_ms))

    def rest(self) -> bool:
        """Pack the window of rows while no turn runs (an idle session holds a few KiB, not its
        rows as dicts); whether it rests packed. The next frame, or anything reading the rows,
        unpacks them (``ConversationState.pack``)."""
        if self.state.packed:  # nothing read or changed it since: reading its control would unpack it
            return self.translator.rest()
        if not self.subscription.ready or control_of(self.state.state).running:
            return False
        return self.state.pack() and self.translator.rest()

    def expire(self, now_ms: float) -> Step:
        return self._step(self.subscription.expire(now_ms))

    @property
    def next_expiry_ms(self) -> float | None:
        return self.subscription.next_expiry_ms

    def base(self) -> v4commands.Base:
        """What commands decided against the state carry (``baseRevision``/``baseLogEpoch``)."""
        revision = self.state.state.get("revision")
        epoch = self.state.state.get("logEpoch") or self.subscription.log_epoch
        return v4commands.Base(revision if isinstance(revision, int) else 0, epoch if isinstance(epoch, str) else None)

    def _step(self, outcomes: list[v4topic.Outcome[Change]]) -> Step:
        step = Step()
        changes: list[Change] = []  # every frame's, in order: translated at once, into the step
        applied = False
        for outcome in outcomes:
            if isinstance(outcome, v4topic.Applied):
                changes += outcome.changes
                applied = True
            elif isinstance(outcome, v4topic.ResyncNeeded):
                step.ignored.append(f"resync: {outcome.reason}")
                step.resync = self.subscription.resync_params(self.connection_id,
                                                              force_snapshot=outcome.force_snapshot)
            else:
                step.ignored.append(outcome.reason)
        if applied:
            self.translator.translate(changes, Translation(step.updates, step.signals))
        return step

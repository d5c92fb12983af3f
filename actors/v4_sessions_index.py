"""``session/list`` on the v4 path: a workspace's ``sessions-index/<workspaceKey>`` topic (docs/v4.md).

One ``SessionsIndexWatch`` actor per workspace the editor lists, started by the
Supervisor. The first list subscribes the topic (its frames reach this actor through
the Backend's route for the topic); lists asked before the snapshot is in wait for it;
then every list is answered at once from the state the topic keeps current
(``protocol/v4/sessions_index_apply.py``), in the legacy ``session/list`` answer's shape,
so the Supervisor maps ids and drops deleted sessions as on the legacy path. A gap or a
bad frame asks a resync; a refused resync or a new backend process subscribes again.
Also here: the ``deleteSession`` command a ``session/delete`` sends on the v4 path (the
index is where the deletion shows).
"""

from __future__ import annotations

import functools
import logging
import time
import uuid
from typing import Any

from zcode_acp.protocol.errors import INTERNAL_ERROR, RpcError, worded
from zcode_acp.protocol.v4 import commands as v4commands
from zcode_acp.protocol.v4 import topic as v4topic
from zcode_acp.protocol.v4.sessions_index_apply import IndexChange, SessionsIndexState
from zcode_acp.protocol.v4.wire import parse_wire

from zcode_acp.actors.base import BridgeActor, handles
from zcode_acp.actors.v4_sender import command_params
from zcode_acp.actors.message_class import message
from zcode_acp.actors.messages import (Answered, BackendCall, BackendLost, ClientRequest, Listed, RegisterRoute,
                                       V4Frames)

log = logging.getLogger(__name__)


@message
class ListIndex(ClientRequest):
    """A ``session/list`` for this watch's workspace; answered to ``reply_to`` as ``Listed``."""

    reply_to: Any


def legacy_list(state: SessionsIndexState, cwd: str) -> dict[str, Any]:
    """The index as the legacy ``session/list`` answers (``protocol/sessions.list_sessions`` reads it)."""
    sessions = []
    for info in state.session_infos(cwd):  # newest activity first
        summary = state.sessions[info["sessionId"]]
        item: dict[str, Any] = {"sessionId": info["sessionId"], "workspace": {"workspacePath": cwd}}
        if "title" in info:
            item["title"] = info["title"]
        if isinstance(summary.get("lastActivityAt"), int | float):
            item["updatedAt"] = summary["lastActivityAt"]
        sessions.append(item)
    return {"sessions": sessions}


class SessionsIndexWatch(BridgeActor):
    def __init__(self, cwd: str, backend: Any, subscribe_timeout: float | None = None) -> None:
        super().__init__()
        self.cwd = cwd
        self.topic = f"sessions-index/{cwd}"  # the bridge's workspaceKey is its cwd (v4path.create)
        self.backend = backend
        self.subscribe_timeout = subscribe_timeout
        self.connection_id = f"zcode-acp-index-{uuid.uuid4().hex[:12]}"
        self.state = SessionsIndexState()
        self.subscription: v4topic.TopicSubscription[IndexChange] | None = None
        self.waiting: list[ListIndex] = []

    @handles(ListIndex)
    def on_list(self, message: ListIndex) -> None:
        if self.subscription is not None and self.subscription.ready:
            self._answer(message)
            return
        self.waiting.append(message)
        if self.subscription is None:
            self._subscribe()

    def _subscribe(self) -> None:
        self.state = SessionsIndexState()
        self.subscription = v4topic.TopicSubscription(self.topic, self.state)
        self.backend.tell(RegisterRoute(self.topic, self.actor_ref))
        self._call("v4/conversation/subscribe", v4topic.subscribe_params(self.topic, self.connection_id),
                   self._subscribed)

    def _call(self, method: str, params: dict[str, Any], then: Any) -> None:
        self.backend.tell(BackendCall(method, params, self.actor_ref, functools.partial(Answered, then),
                                      self.subscribe_timeout))

    @handles(Answered)
    def on_answered(self, message: Answered) -> None:
        message.then(message.result, message.error)

    def _subscribed(self, result: Any, error: Any) -> None:
        if self.subscription is None:
            return
        if error is not None:
            self.subscription = None
            said = error.get("message") if isinstance(error, dict) else error  # the engine's words
            self._fail_waiting(worded(INTERNAL_ERROR, "error.sessions_index_refused", message=said))
            return
        ack = result.get("ack") if isinstance(result, dict) else None
        self._outcomes(self.subscription.subscribed(ack, now_ms()))

    def _resynced(self, result: Any, error: Any) -> None:
        if self.subscription is None:
            return
        if error is not None:  # the subscription is gone: a new one, from a snapshot
            self.subscription = None
            self._subscribe()
            return
        self._outcomes(self.subscription.subscribed(result.get("ack") if isinstance(result, dict) else None, now_ms()))

    @handles(V4Frames)
    def on_frames(self, message: V4Frames) -> None:
        if self.subscription is None:
            return
        outcomes: list[v4topic.Outcome[IndexChange]] = []
        for params in message.frames:
            outcomes += self.subscription.accept(parse_wire(params), now_ms())
        self._outcomes(outcomes)

    def _outcomes(self, outcomes: list[v4topic.Outcome[IndexChange]]) -> None:
        subscription = self.subscription
        if subscription is None:
            return
        for outcome in outcomes:
            if isinstance(outcome, v4topic.ResyncNeeded):
                self._call("v4/conversation/resync",
                           subscription.resync_params(self.connection_id, force_snapshot=outcome.force_snapshot),
                           self._resynced)
                break
        if subscription.ready:
            waiting, self.waiting = self.waiting, []
            for one in waiting:
                self._answer(one)

    @handles(BackendLost)
    def on_backend_lost(self, message: BackendLost) -> None:
        """A new backend process: the next list subscribes again; lists waiting fail now."""
        self.subscription = None
        self._fail_waiting(RpcError(INTERNAL_ERROR, message.reason))

    def _answer(self, one: ListIndex) -> None:
        one.reply_to.tell(Listed(one.conn, one.request_id, legacy_list(self.state, self.cwd), None))

    def _fail_waiting(self, error: RpcError) -> None:
        waiting, self.waiting = self.waiting, []
        for one in waiting:
            one.fail(error)


def delete_params(backend_session_id: str) -> dict[str, Any]:
    """``v4/command deleteSession``: on the v4 path a deleted session is deleted in the engine too
    (it leaves the workspace's index), not only closed; the Supervisor sends it as it forgets the session."""
    return command_params(v4commands.delete_session(backend_session_id))


def delete_acked(session_id: str, result: Any, error: Any) -> None:
    """The session is gone on the bridge's side whatever the engine says; a refusal is only logged."""
    ack = v4commands.parse_ack(result) if error is None else None
    if error is not None or not isinstance(ack, v4commands.CommandAck) or \
            v4commands.judge(ack, retried=True) is v4commands.Verdict.REFUSED:
        log.warning("session %s: the engine did not confirm its deletion: %s", session_id, error or result)


def now_ms() -> float:
    return time.time() * 1000.0

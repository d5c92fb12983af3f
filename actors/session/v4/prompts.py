"""The ``session/prompt`` requests a v4 session owes an answer (a plain part of the Session).

On v4 the engine, not the bridge, decides what a prompt sent while a turn runs does:
its ``sendText`` ack says ``startNow``, ``guide`` (taken into the running turn) or
``queue`` (the engine's queue runs it after the current turn), or refuses it. A prompt
is answered when the turn that carries it ends (``control`` leaves its running phase):
a started or guided one at the end of the running turn, a queued one at the end of the
turn the queue starts for it. The engine's queue drains in order, so the queued prompts
here wait in the same order.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from zcode_acp.protocol.errors import INTERNAL_ERROR, RpcError, from_backend_error
from zcode_acp.protocol.usage import prompt_result
from zcode_acp.protocol.v4.conversation import TurnEnded
from zcode_acp.protocol.i18n import t


@dataclass(slots=True, eq=False)  # each request is itself, whatever its id
class OwedPrompt:
    conn: Any
    request_id: Any
    error: RpcError | None = None
    """Answer with this instead of the turn's stop reason (``$/cancel_request``: -32800)."""
    command_id: str | None = None
    """Its ``sendText``'s id, once acked: a queue item names it as ``sourceCommandId``."""
    cancelled: bool = False
    """The client cancelled it: if the engine is lost before the turn's end says so, it still
    ends ``cancelled`` (what the client asked for), not with the loss's error."""


@dataclass(frozen=True, slots=True)
class Answer:
    owed: OwedPrompt
    result: dict[str, Any] | None
    error: RpcError | None
    failed_turn: bool = False
    """The error is the turn's own failure (the engine ended it in error), not a refusal or a loss:
    a client that declared AIR's ``sessionFailure`` gets it typed, with ``end_turn``."""


class V4Prompts:
    def __init__(self, lang: str = "en") -> None:
        self.lang = lang  # of the routing notices (protocol/i18n)
        self.waiting: list[OwedPrompt] = []  # the engine session is not live yet: nothing sent
        self.admitting: list[OwedPrompt] = []  # sendText sent, ack not back yet
        self.running: list[OwedPrompt] = []  # carried by the turn that runs now
        self.queued: deque[OwedPrompt] = deque()  # in the engine's queue, in its order
        self.unrouted: list[OwedPrompt] = []  # acked "queue": queued or guided, the next frames say

    @property
    def busy(self) -> bool:
        return bool(self.waiting or self.admitting or self.running or self.queued)

    def hold(self, owed: OwedPrompt) -> None:
        """Owed from now on, sent once the engine session is live."""
        self.waiting.append(owed)

    def release(self, owed: OwedPrompt) -> bool:
        """It leaves the wait (to be sent, or failed); False when it was already answered."""
        if owed in self.waiting:
            self.waiting.remove(owed)
            return True
        return False

    def cancel_waiting(self, only: OwedPrompt | None = None) -> list[Answer]:
        """Cancelled before anything was sent (or only ``only``): answered now, never sent."""
        taken = [one for one in self.waiting if only is None or one is only]
        self.waiting = [one for one in self.waiting if one not in taken]
        return [Answer(one, None, one.error) if one.error else Answer(one, {"stopReason": "cancelled"}, None)
                for one in taken]

    def sent(self, owed: OwedPrompt) -> None:
        self.admitting.append(owed)

    def admitted(self, owed: OwedPrompt, delivery: str | None, command_id: str | None = None) -> str | None:
        """Its ack came back accepted: the notice that tells the client where it went, if any."""
        self._forget_admitting(owed)
        owed.command_id = command_id
        if delivery == "queue":
            # The engine acks a guided input ``queue`` too (session-flow.ts): which it is, its queue
            # item says (``delivery.admitted``), in a frame after the ack; told then (``routed``).
            self.queued.append(owed)
            if command_id is not None:
                self.unrouted.append(owed)
                return None
        else:  # startNow, guide (an unknown word: it runs with what runs)
            self.running.append(owed)
        return t(self.lang, f"v4.routing.{delivery}") if delivery in ("guide", "queue") else None

    def routed(self, owed: OwedPrompt, admitted: str) -> str:
        """The engine's queue (or the running turn) shows where this prompt went: ``guide`` — into the
        running turn, answered at its end; ``queue`` — it waits for its own turn. The notice to tell."""
        if owed in self.unrouted:
            self.unrouted.remove(owed)
        if admitted == "guide" and owed in self.queued:
            self.queued.remove(owed)
            self.running.append(owed)
        return t(self.lang, f"v4.routing.{admitted}")

    def refused(self, owed: OwedPrompt, error: RpcError) -> Answer:
        self._forget_admitting(owed)
        return Answer(owed, None, error)

    def turn_ended(self, ended: TurnEnded, usage: dict[str, Any] | None = None, drains: bool = True) -> list[Answer]:
        """The running turn ended: its prompts are answered (``usage``: the tokens it spent). ``drains``:
        the engine's queue starts its next input now; a queue it holds (v4/heldqueue.py) starts none,
        and the next one runs when its turn shows (``started``)."""
        owed, self.running = self.running, []
        if self.queued and drains:
            self.running.append(self.queued.popleft())  # the queue's next input starts now
        answers = []
        for one in owed:
            if one.error is not None:
                answers.append(Answer(one, None, one.error))
            elif ended.stop_reason is not None:
                answers.append(Answer(one, prompt_result(ended.stop_reason, usage), None))
            elif ended.error is not None:
                answers.append(Answer(one, None, from_backend_error(ended.error, "session/prompt", self.lang), True))
            else:
                answers.append(Answer(one, None, self._unfinished(ended.words), True))
        return answers

    def _unfinished(self, words: str) -> RpcError:
        """A turn the engine ended in its ``error`` phase without a ``lastError``: an error ending of
        ``turn.completed`` (a limit reached, an error during execution), which the conversation does
        not name (docs/decisions.md, "Error endings on the v4 path"). Its last words are all there is."""
        message = words or t(self.lang, "error.no_details")
        return RpcError(INTERNAL_ERROR, t(self.lang, "error.turn_unfinished", message=message),
                        {"phase": "error", "backendMessage": message})

    def route_pending(self) -> list[OwedPrompt]:
        """The prompts acked ``queue`` whose queue item has not been read yet (still owed)."""
        self.unrouted = [one for one in self.unrouted if one in self.queued or one in self.running]
        return list(self.unrouted)

    def started(self, command_id: str) -> bool:
        """A turn the engine started names this queued prompt's ``sendText`` (its ``turnHeader``'s
        ``sourceCommandId``): the prompt is carried by the running turn from now on."""
        for one in self.queued:
            if one.command_id == command_id:
                self.queued.remove(one)
                self.running.append(one)
                return True
        return False

    def queued_ids(self) -> set[str]:
        return {one.command_id for one in self.queued if one.command_id}

    def unqueued(self, command_id: str) -> Answer | None:
        """The queue item of this prompt was removed: it will never run, so it is answered cancelled now."""
        for one in self.queued:
            if one.command_id == command_id:
                self.queued.remove(one)
                return Answer(one, None, one.error) if one.error else Answer(one, {"stopReason": "cancelled"}, None)
        return None

    def find(self, conn_urn: str, request_id: Any) -> OwedPrompt | None:
        for one in (*self.waiting, *self.admitting, *self.running, *self.queued):
            if one.conn.actor_urn == conn_urn and one.request_id == request_id:
                return one
        return None

    def unqueue(self, only: OwedPrompt | None = None) -> list[Answer]:
        """``session/cancel`` with prompts in the engine's queue (or ``only`` that one): each is
        answered ``cancelled`` now."""
        taken = [one for one in self.queued if only is None or one is only]
        self.queued = deque(one for one in self.queued if one not in taken)
        return [Answer(one, None, one.error) if one.error else Answer(one, {"stopReason": "cancelled"}, None)
                for one in taken]

    def unqueue_failed(self, error: RpcError) -> list[Answer]:
        """The engine's queue cannot be resumed: every prompt waiting in it fails with ``error``."""
        taken, self.queued = list(self.queued), deque()
        return [Answer(one, None, one.error or error) for one in taken]

    def cancel_requested(self) -> None:
        """``session/cancel``: what runs now (or is being admitted to run) was cancelled by the client."""
        for one in (*self.admitting, *self.running):
            one.cancelled = True

    def cancel_overdue(self) -> list[Answer]:
        """The cancelled prompts whose turn did not end in time: answered now (their own error,
        -32800, or ``cancelled``); the turn's end, when it comes, has nothing left to answer."""
        overdue = [one for one in self.running if one.cancelled]
        self.running = [one for one in self.running if not one.cancelled]
        for one in [one for one in self.admitting if one.cancelled]:
            self.admitting.remove(one)
            overdue.append(one)
        return [Answer(one, None, one.error) if one.error else Answer(one, {"stopReason": "cancelled"}, None)
                for one in overdue]

    def drop_all(self, error: RpcError | None) -> list[Answer]:
        """Everything owed is answered now: with ``error`` (the backend died), or cancelled (teardown)."""
        everyone = [*self.waiting, *self.admitting, *self.running, *self.queued]
        self.waiting, self.admitting, self.running, self.queued = [], [], [], deque()
        answers = []
        for one in everyone:
            why = one.error or (None if one.cancelled else error)
            answers.append(Answer(one, None if why else {"stopReason": "cancelled"}, why))
        return answers

    def _forget_admitting(self, owed: OwedPrompt) -> None:
        if owed in self.admitting:
            self.admitting.remove(owed)

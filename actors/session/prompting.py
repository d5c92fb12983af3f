"""The Session's prompts: preemption (one current Turn), a Turn per prompt, cancel, steering, the
stop fallback. A layer of the Session actor (core.py has the layout)."""

from __future__ import annotations

import functools
import logging
import uuid
from typing import Any

from zcode_acp.protocol import air, commands, interactions, updates
from zcode_acp.protocol.content import BackendPrompt
from zcode_acp.protocol.errors import (
    RpcError,
    cancelled,
    is_busy,
)
from zcode_acp.protocol.events import payload
from zcode_acp.protocol.handshake import supports_terminal_output
from zcode_acp.protocol.session_notices import supports_notices
from zcode_acp.protocol.subagents import supports_subagents
from zcode_acp.protocol.translator import notice_chunk
from zcode_acp.protocol.i18n import t

from zcode_acp.actors.base import handles
from zcode_acp.actors.delivery import deliver
from zcode_acp.actors.messages import (
    Adopt,
    Answered,
    BackendRequest,
    CancelInteractions,
    CancelPromptRequest,
    CancelTurn,
    ErrorDict,
    Evicted,
    FailTurn,
    DialogWaits,
    InteractionAborted,
    InteractionAsked,
    PlanRead,
    PreviousTurnRunning,
    ProbeAnswered,
    Prompt,
    RelayUpdates,
    Reply,
    SendAnswered,
    SessionActivity,
    ShowInteraction,
    StartTurn,
    StopFailed,
    TurnDone,
    TurnSettled,
)
from zcode_acp.actors.session.attribution import Claim
from zcode_acp.actors.turn import Turn

from zcode_acp.actors.session.core import SessionCore

log = logging.getLogger(__name__)


class SessionPrompts(SessionCore):
    """Prompts and their Turns."""

    # -- prompts --------------------------------------------------------------------------------

    @handles(Prompt)
    def on_prompt(self, message: Prompt) -> None:
        if self.lifecycle.closed:
            message.fail(self.lifecycle.closed_error())
            return
        others = [client for client in self.clients if client is not message.conn]
        if others and message.echo:  # every other client sees what was asked, before the answer streams
            deliver(others, self.session_id, [updates.user_text(message.echo, uuid.uuid4().hex)])
        command = None if message.prompt.attachments else commands.parse(message.prompt.text)
        if command is not None:
            self.controls.command(command, message.conn, message.request_id,
                                  lambda result: message.conn.tell(Reply(message.request_id, result, None)))
            return
        self.path.submit(message.conn, message.request_id, message.prompt)

    def run_turn(self, conn: Any, request_id: Any, prompt: BackendPrompt) -> None:
        """The legacy path's prompt: a Turn of its own, and the latest prompt wins."""
        if self.current is not None:
            self.turns[self.current].tell(CancelTurn())
            self.router.tell(CancelInteractions(self.session_id, "superseded by a new prompt"))
        self._start_turn(conn, request_id, prompt)

    def _start_turn(self, conn: Any, request_id: Any, prompt: BackendPrompt) -> None:
        key = self.next_key
        self.next_key += 1
        turn = Turn.start(
            key=key,
            session=self.actor_ref,
            backend=self.backend,
            router=self.router,
            session_id=self.session_id,
            conn=conn,
            request_id=request_id,
            prompt=prompt,
            clients=self.clients,
            terminal_output=supports_terminal_output(self.capabilities),
            message_id=uuid.uuid4().hex,
            config=self.config,
            plan=self.plan,
            typed_failures=air.client_declares(self.capabilities, air.SESSION_FAILURE),
            notices=supports_notices(self.capabilities),
            supervisor=self.supervisor,
            subagents=supports_subagents(self.capabilities),
        )
        self.turns[key] = turn
        self.turn_requests[key] = (conn.actor_urn, request_id)
        self.turn_prompts[key] = prompt.text  # where the turn begins in the history (a load mid-turn)
        self.current = key
        self.supervisor.tell(SessionActivity(self.session_id, True))
        self._start_when_live(key)

    def _start_when_live(self, key: int) -> None:
        def start() -> None:
            if self.current == key and not self.controls.hold_turn(key):  # a preempted turn never starts
                self.turns[key].tell(StartTurn(self.backend_session_id))  # type: ignore[arg-type]

        def fail(error: RpcError) -> None:
            if key in self.turns:
                self.turns[key].tell(FailTurn(error))

        self.when_live(start, fail)

    @handles(Evicted)
    def on_evicted(self, message: Evicted) -> None:
        """The backend evicted the session under a turn's send: resume, then send again."""
        self.lost()
        self._start_when_live(message.key)

    @handles(CancelTurn)
    def on_cancel_turn(self, message: CancelTurn) -> None:
        self.path.cancel()
        if self.current is not None:
            self.turns[self.current].tell(CancelTurn())
        else:
            self.deliver(self.close_cards_between_turns())  # a question asked between turns
        self.router.tell(CancelInteractions(self.session_id, "cancelled by user"))

    @handles(BackendRequest)
    def on_backend_request(self, message: BackendRequest) -> None:
        """A backend question about this session: its card first, then the dialog."""
        if self.current is not None:
            self.turns[self.current].tell(ShowInteraction(message.frame, message.generation))
            return
        if self.turns:  # (only the legacy path runs Turns: a v4 prompt is the path's own)
            # A cancelled turn still stopping (answered, not done): its late question is its own, and
            # it declines it rather than open a dialog after the cancel (issue 32).
            self.turns[max(self.turns)].tell(ShowInteraction(message.frame, message.generation))
            return
        tool_call_id, name, value, tool_call = interactions.dialog_tool_call(message.frame, self.config.lang)
        if self.path.declines_dialogs():
            # The cancel answered the turn already (the v4 path's cancel): what the engine asks while it
            # stops is declined, shown to nobody, as the legacy Turn does (issue 32).
            self.router.tell(InteractionAsked(message.frame, message.generation, self.session_id,
                                              self.backend_session_id, tool_call, self.actor_ref, self.backend,
                                              declined=t(self.config.lang, "interaction.declined.turn_cancelled")))
            return
        if not self.path.owns_card(tool_call_id):  # on v4 the tool's row already made its card
            self.deliver(self.between_turns().ensure_card(tool_call_id, name, value))
        tool_call = self.path.with_countdown(message.frame, tool_call)
        self.router.tell(InteractionAsked(message.frame, message.generation, self.session_id,
                                          self.backend_session_id, tool_call, self.actor_ref, self.backend,
                                          answer_via=self.actor_ref if self.path.resolves_dialogs else None))

    @handles(InteractionAborted)
    def on_interaction_aborted(self, message: InteractionAborted) -> None:
        """The router gave up on a dialog: whoever owns its card closes it."""
        if self.current is not None:
            self.turns[self.current].tell(message)
        if self.cards is not None:
            self.deliver(self.cards.close_card(message.tool_call_id))

    @handles(DialogWaits)
    def on_dialog_waits(self, message: DialogWaits) -> None:
        """A dialog opened or settled: the Turn whose card it is about may show a sub-agent waiting."""
        if self.turns:  # the current Turn, or the one still stopping (only the legacy path runs Turns)
            self.turns[self.current if self.current is not None else max(self.turns)].tell(message)

    @handles(CancelPromptRequest)
    def on_cancel_prompt_request(self, message: CancelPromptRequest) -> None:
        """``$/cancel_request`` for a prompt: its turn answers -32800 after its last update."""
        if self.path.cancel_request(message.conn, message.request_id, cancelled()):
            return
        for key, request in self.turn_requests.items():
            if request == (message.conn.actor_urn, message.request_id):
                self.turns[key].tell(CancelTurn(cancelled()))
                return
        message.conn.tell(Reply(message.request_id, None, cancelled().to_dict()))  # no turn (yet): at once

    @handles(TurnSettled)
    def on_turn_settled(self, message: TurnSettled) -> None:
        if self.current == message.key:
            self.current = None
            self.supervisor.tell(SessionActivity(self.session_id, False, outcome=message.outcome,
                                                 answer=message.answer))
        self.plan = message.plan  # the turn showed it before its answer

    @handles(TurnDone)
    def on_turn_done(self, message: TurnDone) -> None:
        self.attribution.forget(message.key)
        self.adopted.pop(message.key, None)
        turn = self.turns.pop(message.key, None)
        self.turn_requests.pop(message.key, None)
        self.turn_prompts.pop(message.key, None)
        if not self.turns:  # an emptied dict keeps its table: ~0.5 KiB for each idle session (Idle sessions)
            self.turns, self.turn_requests, self.turn_prompts = {}, {}, {}
        if turn is not None:
            turn.stop(block=False)

    @handles(SendAnswered, ProbeAnswered, PlanRead)
    def on_turn_answer(self, message: SendAnswered | ProbeAnswered | PlanRead) -> None:
        """A Turn's backend answers travel through here, in pipe order with its events."""
        turn = self.turns.get(message.key)
        claim = None
        if isinstance(message, SendAnswered):
            if message.error is None:
                claim = self.attribution.accepted(message.key)
            else:
                self.attribution.refused()
                # Only the 0.16 engine (it speaks v4) has session/close for the stop fallback.
                reason = self.held.busy_reason(any(key != message.key for key in self.turns), self.speaks_v4) \
                    if is_busy(message.error) else None
                if turn is not None and reason is not None:
                    turn.tell(PreviousTurnRunning(*reason))  # before the busy answer: why it waits
        if turn is not None:
            turn.tell(message)
            if claim is not None:
                self._adopt(claim)  # its turn.started came before the send's answer

    def _adopt(self, claim: Claim) -> None:
        if claim.execution_id is not None:
            self.speaks_v4 = True  # the 0.16 engine: stop and steer through v4/command
        if claim.key in self.turns:
            self.adopted[claim.key] = None
            self.turns[claim.key].tell(Adopt(claim))

    def _steer_admitted(self, event: dict[str, Any]) -> None:
        body = payload(event)
        intent = body.get("intent")
        intent = intent if isinstance(intent, dict) else {}
        command_id, admitted = intent.get("sourceCommandId"), intent.get("admittedDelivery") or body.get("delivery")
        if isinstance(command_id, str) and isinstance(admitted, str):
            if len(self.steer_deliveries) > 100:
                self.steer_deliveries.clear()
            self.steer_deliveries[command_id] = admitted

    def steer_delivery(self, command_id: str) -> str | None:
        return self.steer_deliveries.pop(command_id, None)

    def turn_running(self) -> bool:
        """The path's engine says a turn runs (v4's control), or the current Turn's backend turn is known."""
        return self.path.turn_running() or (self.current is not None and self.current in self.adopted)

    @handles(StopFailed)
    def on_stop_failed(self, message: StopFailed) -> None:
        self._close_and_resume(message.turn_id)

    def close_and_resume(self) -> None:
        self._close_and_resume(None)  # the v4 path's stop fallback: no Turn of ours names the turn

    def _close_and_resume(self, turn_id: str | None) -> None:
        """A stopped turn runs on: close the backend session and resume it, so the next prompt can run."""
        if not self.lifecycle.live or not self.backend_session_id:
            return
        backend_id = self.backend_session_id
        self.lost()
        self.lifecycle.detaching()  # uses from now on wait for the close, then the resume

        def closed(result: Any, error: ErrorDict | None) -> None:
            if error is not None:
                log.warning("session/close of %s failed (%s); the stopped turn may still hold it",
                            backend_id, error.get("message"))
                notice = self.held.close_failed(turn_id)
                if notice:
                    self.deliver_in_order([notice_chunk(notice, uuid.uuid4().hex)])
            else:
                self.held.freed()  # a close ends whatever ran in the session
            self.lifecycle.detached()
            if not self.lifecycle.closed:
                self.when_live(lambda: None, lambda exc: log.warning("resume after close failed: %s", exc.message))

        self._call("session/close", {"sessionId": backend_id}, functools.partial(Answered, closed))

    def deliver_in_order(self, session_updates: list[dict[str, Any]]) -> None:
        """Session-level updates while a turn streams go through it: pipe order, end to end."""
        if not session_updates:
            return
        if self.current is not None:
            self.turns[self.current].tell(RelayUpdates(session_updates))
        else:
            self.deliver(session_updates)

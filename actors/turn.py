"""Turn: one ``session/prompt``, from send to its single answer.

State machine (docs/state-machines.md, "The Turn"):

    created → sending → waiting (for its own turn.started) → running → settled
                 busy: retry                                  any state → settled(cancelled)

* Settled is final: the answer is sent once, at the transition, and every
  later event is ignored (a cancelled turn's leftovers never reach the client).
* Cancel is immediate. If the send is still in flight, the Turn stays alive
  until the backend answers it, and stops that turn if it was accepted.
* Attribution: the Session's ``Attribution`` (``session/attribution.py``)
  tells the Turn which backend turn its send started (``Adopt``), whether
  ``turn.started`` came after the send's answer or before it (the 0.16 engine);
  afterwards only events with that id (or none) belong to it.
* Stopping (cancel, preemption, teardown): ``session/stop`` and, when the
  turn's ``turn.started`` named a ``foregroundExecutionId`` (the 0.16 engine),
  ``v4/command {type: "stop"}`` quoting it. A stopped Turn stays alive,
  watching for its backend turn's end; still running after
  ``config.stop_fallback`` seconds, it asks the Session to close and resume
  the backend session (``StopFailed``), so the next prompt never waits for it.

The Session forwards this Turn's events *and* the replies to its backend calls,
in pipe order, so a stale ``turn.started`` that the backend wrote before
accepting our send can never be mistaken for ours.
"""

from __future__ import annotations

import functools
import logging
import uuid
from datetime import datetime, UTC
from typing import Any

import gevent

from zcode_acp.protocol import events as ev
from zcode_acp.protocol import air, interactions, session_notices, turn_end
from zcode_acp.protocol.content import BackendPrompt
from zcode_acp.protocol.errors import INTERNAL_ERROR, RpcError, from_backend_error, is_busy, is_not_active
from zcode_acp.protocol.i18n import t
from zcode_acp.protocol.quota_failure import quota_exceeded, quota_reason, window_named
from zcode_acp.protocol.subagents import supports_subagents
from zcode_acp.protocol.translator import TextChunkLines, TurnTranslator
from zcode_acp.protocol.updates import encode as encode_updates, user_text
from zcode_acp.protocol.usage import prompt_result, read_usage_update

from zcode_acp.actors.base import BridgeActor, handles, safe_tell
from zcode_acp.config.settings import Config
from zcode_acp.actors.delivery import deliver_encoded
from zcode_acp.actors.turn_record import TurnRecord
from zcode_acp.actors.messages import (
    ReleaseSession,
    ReplayTurn,
    TurnReplayed,
    Adopt,
    BackendCall,
    BackendLost,
    BackendStalled,
    CancelTurn,
    ClientsChanged,
    Evicted,
    DialogWaits,
    FailTurn,
    InteractionAborted,
    InteractionAsked,
    PlanRead,
    PreviousTurnRunning,
    QuotaAtFailure,
    QuotaForFailure,
    QuotaToldAtTurnEnd,
    ProbeAnswered,
    RelayUpdates,
    Reply,
    RetrySend,
    SendAnswered,
    ShowInteraction,
    SilenceCheck,
    StartTurn,
    StopDeadline,
    StopFailed,
    TurnDone,
    TurnEvents,
    TurnSettled,
)
from zcode_acp.actors.transport import flow

log = logging.getLogger(__name__)

# A busy backend usually frees its lock within milliseconds of the previous turn's end (the
# turn's answer races its bookkeeping), so the first retry comes after 20 ms, then 40, 80 …
# up to ``config.busy_retry_interval`` between tries (docs/performance.md, "Busy retry").
BUSY_FIRST_WAIT = 0.02
# Busy for longer than that, with no reason the Session knows, the user reads why the prompt waits.
BUSY_NOTICE_AFTER = 1.0
BUSY_NOTICE = "notice.busy"  # its catalog key (protocol/i18n)

SESSION_CLOSED = "session.closed"  # the 0.16 engine: the last event of a closed session
# How long a turn the plan's limit stopped waits for the quota's snapshot before it ends without it:
# a read is bounded at 10 s, but the user should not wait that long to learn the turn is over.
QUOTA_WAIT = 3.0
STREAMED_TEXT_KEPT = 4000  # characters of streamed text kept for a notice (it sends at most 1000)


class _Attempt:
    """The one field tenacity's wait strategies read."""

    def __init__(self, attempt_number: int) -> None:
        self.attempt_number = attempt_number


class Turn(BridgeActor):
    def __init__(
        self,
        *,
        key: int,
        session: Any,
        backend: Any,
        router: Any,
        session_id: str,
        conn: Any,
        request_id: Any,
        prompt: BackendPrompt,
        clients: list[Any],
        terminal_output: bool,
        message_id: str,
        config: Config,
        plan: list[dict[str, str]] | None = None,
        typed_failures: bool = False,
        notices: bool = False,
        supervisor: Any = None,
        subagents: bool = False,
    ) -> None:
        super().__init__()
        self.key = key
        self.session = session
        self.backend = backend
        self.router = router
        self.session_id = session_id
        self.conn = conn
        self.request_id = request_id
        self.prompt = prompt
        self.clients = clients
        self.config = config
        # A client that declared the AIR sessionFailure extension: a failed turn is a typed
        # failure and an end_turn, not an error (protocol/air.py).
        self.typed_failures = typed_failures
        # Who reaches the QuotaWatch: a turn the plan's limit stopped names the window in its end.
        self.supervisor = supervisor
        self.quota_pending: tuple[RpcError, str] | None = None  # the failure, held for the snapshot
        self.quota_timer: Any = None
        self.translator = TurnTranslator(message_id=message_id, terminal_output=terminal_output, plan=plan,
                                         lang=config.lang, notices=notices, subagents=subagents,
                                         session_id=session_id)
        self.text_lines = TextChunkLines(session_id)
        self.finishing: dict[str, Any] | None = None  # the answer, held while the final plan is read
        self.state = "created"
        self.send_in_flight = False
        self.accepted = False
        self.backend_session_id: str | None = None
        self.turn_id: str | None = None
        self.execution_id: str | None = None  # the 0.16 engine: the foreground execution to stop
        self.stopping = False  # settled, stop sent, the backend turn not seen ending yet
        self.v4_stop_sent = False
        self.busy_since: float | None = None  # the first busy answer (loop time)
        self.busy_attempts = 0
        self.busy_noticed = False  # the user was told why the prompt waits
        self.busy_text = t(config.lang, BUSY_NOTICE)  # what they are told (the Session may know better)
        self.held_unbounded = False  # an older turn that ignored its stop holds the session: no busy limit
        self.events_since_check = 0
        self.idle_probes = 0
        self.silence_timer: Any = None
        self.done_told = False
        self.evicted_once = False
        # What this turn sent, its prompt first: a client loading mid-turn gets it (turn_record.py).
        self.record = TurnRecord(encode_updates(session_id, [user_text(prompt.text, uuid.uuid4().hex)])
                                 if prompt.text else b"")
        self.answer = ""  # turn.completed's response
        # The seed's engine (the classic dialect) ends a turn without a ``response``: a notice that
        # opted in to text takes the streamed text instead, kept only then and only its start.
        self.keep_text = bool(getattr(config, "notify_url", "") and getattr(config, "notify_text", False))
        self.streamed: list[str] = []
        self.streamed_size = 0

    # -- helpers ---------------------------------------------------------------------

    @property
    def settled(self) -> bool:
        return self.state == "settled"

    def _emit(self, updates: list[dict[str, Any]]) -> None:
        if updates:
            self._deliver(encode_updates(self.session_id, updates))

    def _deliver(self, lines: bytes) -> None:
        self.record.add(lines)
        deliver_encoded(self.clients, self.session_id, lines, self.key)

    def _call(self, method: str, params: dict[str, Any], reply: type | None = None,
              timeout: float | None = None) -> None:
        # Replies come back through the Session, in pipe order with our events.
        self.backend.tell(BackendCall(method, params, self.session if reply else None,
                                      functools.partial(reply, self.key) if reply else None, timeout))

    def _settle(self, result: dict[str, Any] | None = None, error: RpcError | None = None) -> None:
        if self.settled:
            return
        self.state = "settled"
        self._stop_silence_timer()
        if error is not None:
            self._close_open_cards()  # a turn that ended abnormally leaves no card spinning
        self.conn.tell(Reply(self.request_id, result, error.to_dict() if error else None))
        outcome = error.message if error is not None else str((result or {}).get("stopReason") or "")
        self.session.tell(TurnSettled(self.key, self.translator.plan, outcome, self.answer))
        self._maybe_done()

    def _settle_typed_failure(self, error: RpcError) -> None:
        """The AIR answer to a failed turn, as the reference adapters give it: the failure as a
        ``session_info_update`` carrying ``_meta.jetbrains.air.sessionFailure``, then ``end_turn``
        with the same ``_meta``."""
        update, result = air.typed_failure(f"{self.session_id}:turn-{self.key}:error", error.data, error.message)
        self._close_open_cards()
        self._emit([update])
        self._settle(result)

    def _fail(self, error: RpcError) -> None:
        if self.typed_failures:
            self._settle_typed_failure(error)
        else:
            self._settle(error=error)

    def _await_quota(self, error: RpcError, reason: str) -> None:
        """The plan's limit stopped the turn: its end names the window and its reset, from the
        QuotaWatch's snapshot (read again when stale), waited for at most ``QUOTA_WAIT``."""
        if self.supervisor is None:
            self._fail(quota_exceeded(error, reason, None, None, self.config.lang))
            return
        self.quota_pending = (error, reason)
        self.supervisor.tell(QuotaAtFailure(self.actor_ref, self.key))
        self.quota_timer = gevent.spawn_later(QUOTA_WAIT, safe_tell, self.actor_ref,
                                              QuotaForFailure(self.key, None, timed_out=True))

    @handles(QuotaForFailure)
    def on_quota_for_failure(self, message: QuotaForFailure) -> None:
        if self.quota_pending is None or message.key != self.key:
            return  # answered already (the snapshot came, or the wait ran out)
        (error, reason), self.quota_pending = self.quota_pending, None
        if self.quota_timer is not None:
            self.quota_timer.kill(block=False)
            self.quota_timer = None
        typed = quota_exceeded(error, reason, message.snapshot, datetime.now(UTC), self.config.lang)
        meter = window_named(typed, message.snapshot)
        if meter is not None and self.supervisor is not None:
            # Said here: the notice "… is used up" would only say it again after the turn's end.
            self.supervisor.tell(QuotaToldAtTurnEnd.of(self.session_id, meter))
        self._fail(typed)

    def _maybe_done(self) -> None:
        if self.settled and not self.send_in_flight and not self.stopping and not self.done_told:
            self.done_told = True
            self.session.tell(TurnDone(self.key))

    def _close_open_cards(self) -> None:
        self._emit(self.translator.close_open_cards())  # a background task keeps the cards it owns

    def on_handler_error(self, message: Any) -> None:
        self._settle(error=RpcError(INTERNAL_ERROR, "internal error while handling the turn"))

    # -- sending ---------------------------------------------------------------------------

    @handles(StartTurn)
    def on_start_turn(self, message: StartTurn) -> None:
        if self.settled:
            self._maybe_done()
            return
        self.backend_session_id = message.backend_session_id
        self._send()

    def _send(self) -> None:
        self.state = "sending"
        self.send_in_flight = True
        assert self.backend_session_id is not None  # StartTurn named it
        self._call("session/send", self.prompt.send_params(self.backend_session_id), SendAnswered)

    @handles(RetrySend)
    def on_retry_send(self, message: RetrySend) -> None:
        if not self.settled:
            self._send()

    @handles(SendAnswered)
    def on_send_answered(self, message: SendAnswered) -> None:
        error = message.error
        self.send_in_flight = False
        if error is None:
            self.accepted = True
            if self.settled:
                # Cancelled while the send was in flight: stop what it started.
                self._stop_backend_turn()
                self._maybe_done()
                return
            self.state = "waiting"
            self._start_silence_timer()
            return
        if self.settled:
            self._maybe_done()
            return
        if is_not_active(error) and not self.evicted_once:
            # The backend evicted the session; the Session resumes it and starts us again.
            self.evicted_once = True
            self.state = "created"
            self.session.tell(Evicted(self.key))
            return
        if is_busy(error):
            now = gevent.get_hub().loop.now()
            if self.busy_since is None:
                self.busy_since = now
            if self.held_unbounded or now < self.busy_since + self.config.busy_retry_limit:
                if now >= self.busy_since + BUSY_NOTICE_AFTER:
                    self._notice_busy(self.busy_text)  # waiting longer than a lock's usual hand-over
                self.busy_attempts += 1
                gevent.spawn_later(self._busy_wait(), safe_tell, self.actor_ref, RetrySend())
                return
            self._settle(error=RpcError(
                INTERNAL_ERROR, t(self.config.lang, "error.busy_too_long", seconds=f"{self.config.busy_retry_limit:g}")))
            return
        self._settle(error=from_backend_error(error, "session/send", self.config.lang))

    @handles(PreviousTurnRunning)
    def on_previous_turn_running(self, message: PreviousTurnRunning) -> None:
        """Told before a busy answer: why the session is busy (and whether the busy limit applies).

        A turn that ignored its stop is news at once; a turn still stopping usually lets go within
        milliseconds (every preemption), so that one is said only if the wait grows past a second.
        """
        self.busy_text = message.notice
        if message.unbounded:
            self.held_unbounded = True
            self._notice_busy(message.notice)

    def _notice_busy(self, text: str) -> None:
        if not self.busy_noticed and not self.settled:
            self.busy_noticed = True
            self._emit([self.translator.notice(text)])

    def _busy_wait(self) -> float:
        """20 ms, doubling, capped at ``config.busy_retry_interval``."""
        import tenacity  # only when the backend is busy: not with the runtime (docs/performance.md)

        wait = tenacity.wait_exponential(multiplier=BUSY_FIRST_WAIT, max=self.config.busy_retry_interval)
        return float(wait(_Attempt(self.busy_attempts)))  # type: ignore[arg-type]

    def _stop_backend_turn(self) -> None:
        """Both stops, then watch for the turn's end (a few seconds at most)."""
        if not (self.accepted and self.backend_session_id) or self.stopping:
            return
        self._call("session/stop", {"sessionId": self.backend_session_id})
        self._send_v4_stop()
        self.stopping = True
        gevent.spawn_later(self.config.stop_fallback, safe_tell, self.actor_ref, StopDeadline())

    def _send_v4_stop(self) -> None:
        """The 0.16 engine: ``session/stop`` only recovers the stream; this stops the turn."""
        if self.execution_id is None or self.v4_stop_sent:
            return  # the seed's engine (no execution id), or not known yet: sent on Adopt
        self.v4_stop_sent = True
        # imported here: only the 0.16 engine gets here, and a legacy bridge imports no protocol/v4 at start
        from zcode_acp.actors.v4_sender import command_params
        from zcode_acp.protocol.v4.commands import stop

        self._call("v4/command", command_params(stop(str(self.backend_session_id),
                                                     expected_foreground_execution_id=self.execution_id)))

    @handles(Adopt)
    def on_adopt(self, message: Adopt) -> None:
        claim = message.claim
        if self.turn_id is not None:
            return
        self.turn_id, self.execution_id = claim.turn_id, claim.execution_id
        if self.stopping:
            self._send_v4_stop()  # cancelled before its turn.started arrived
            self._watch_end(claim.held)
            return
        if self.settled or self.state != "waiting":
            return
        self.state = "running"
        if claim.merged:
            self._emit([self.translator.notice(t(self.config.lang, "notice.merged"))])
        self._events(claim.held)  # what came before our send's answer (an early turn.started)

    def _watch_end(self, events: list[dict[str, Any]]) -> None:
        """A stopped Turn: done once its backend turn ended (or the session was closed)."""
        for event in events:
            kind = event.get("type")
            if kind == SESSION_CLOSED or (kind in ev.TURN_END_TYPES and ev.turn_id(event) == self.turn_id):
                self._stopped()
                return

    def _stopped(self) -> None:
        if self.stopping:
            self.stopping = False
            self._maybe_done()

    @handles(StopDeadline)
    def on_stop_deadline(self, message: StopDeadline) -> None:
        if not self.stopping:
            return
        if self.turn_id is not None:
            log.warning("turn %s on %s still runs %gs after its stop; closing and resuming the session",
                        self.turn_id, self.session_id, self.config.stop_fallback)
            self.session.tell(StopFailed(self.key, self.turn_id))
        self._stopped()

    # -- events ----------------------------------------------------------------------------

    @handles(TurnEvents)
    def on_turn_events(self, message: TurnEvents) -> None:
        try:
            self._events(message.events)
        finally:
            flow.done(message.token)

    def _completed(self, result: dict[str, Any]) -> None:
        """A turn that used tools may have changed the todos: the plan goes out before the answer."""
        if not self.translator.saw_tool_result or result.get("stopReason") != "end_turn":
            self._settle(result)
            return
        self.finishing = result
        self._stop_silence_timer()
        self._call("session/read", {"sessionId": self.backend_session_id}, PlanRead, timeout=self.config.read_timeout)

    @handles(PlanRead)
    def on_plan_read(self, message: PlanRead) -> None:
        if self.settled or self.finishing is None:
            return
        if isinstance(message.result, dict):
            self._emit(self.translator.plan_from_todos(message.result.get("todos")))
            # the context meter: occupancy after the turn (unless the turn already showed it)
            self._emit(self.translator.usage(read_usage_update(message.result)))
        self._settle(self.finishing)

    @handles(RelayUpdates)
    def on_relay(self, message: RelayUpdates) -> None:
        self._emit(message.updates)

    @handles(ReplayTurn)
    def on_replay_turn(self, message: ReplayTurn) -> None:
        """A client loads the session: the history before this turn, then all it sent, then the answer.

        In this mailbox's order, so every line sent before is in the record and every line
        after follows the replay live; the lines the client held meanwhile are dropped."""
        if self.record.overflowed:
            message.conn.tell(ReleaseSession(self.session_id, message.whole))
        else:
            message.conn.tell(ReleaseSession(self.session_id, message.before + self.record.joined(), self.key))
        message.conn.tell(message.reply)
        self.session.tell(TurnReplayed(message.attach))

    def _events(self, events: list[dict[str, Any]]) -> None:
        if self.stopping:
            self._watch_end(events)
            return
        if self.settled or self.finishing is not None:
            return
        self.events_since_check += len(events)
        if self.state != "running":
            return  # nothing is ours before the Session says which turn is (Adopt)
        # Text deltas take the pre-encoded path (protocol/translator.py, TextChunkLines); the
        # other updates are encoded in place, so the client sees them in event order.
        lines: list[bytes] = []
        updates: list[dict[str, Any]] = []
        own_turn = self.turn_id
        text_delta = self.translator.text_delta
        text_line = self.text_lines.line
        retry = self.translator.retry  # an open retry card closes at the model's next output
        for event in events:
            event_turn = ev.turn_id(event)
            if event_turn is not None and own_turn is not None and event_turn != own_turn:
                continue
            text = text_delta(event)
            if text is not None:
                if self.keep_text and self.streamed_size < STREAMED_TEXT_KEPT:
                    self.streamed.append(text[1])
                    self.streamed_size += len(text[1])
                if retry.card_id is not None:
                    updates.extend(retry.progress())  # the model is back: the retry is over
                if updates:
                    lines.append(encode_updates(self.session_id, updates))
                    updates = []
                lines.append(text_line(*text))
                continue
            kind = event.get("type")
            if kind == ev.TURN_COMPLETED or kind == ev.TURN_FAILED:
                self._emit_lines(lines, updates)
                body = ev.payload(event)
                if isinstance(body.get("response"), str):
                    self.answer = body["response"]  # the final answer, for a notification that opted in
                elif self.streamed:
                    self.answer = "".join(self.streamed)[:STREAMED_TEXT_KEPT]
                if kind == ev.TURN_FAILED:
                    error = turn_end.failed(body, self.config.lang)  # final: the engine already retried
                    reason = quota_reason(error.data)
                    if reason is not None:
                        self._await_quota(error, reason)
                    else:
                        self._fail(error)
                    return
                self._emit(self.translator.retry.close())
                ending = turn_end.completed(body, self.config.lang)
                if ending.notice:
                    self._emit([self.translator.notice(ending.notice, session_notices.WARNING)])
                if ending.error is not None:
                    self._settle(error=ending.error)
                    return
                self._completed(prompt_result(ending.stop_reason or "end_turn", body.get("usage")))
                return
            updates.extend(self.translator.feed(event))
        self._emit_lines(lines, updates)

    def _emit_lines(self, lines: list[bytes], updates: list[dict[str, Any]]) -> None:
        if updates:
            lines.append(encode_updates(self.session_id, updates))
        if lines:
            self._deliver(b"".join(lines))

    # -- cancel, loss, silence --------------------------------------------------------------------

    @handles(CancelTurn)
    def on_cancel_turn(self, message: CancelTurn) -> None:
        if self.settled:
            return
        self._close_open_cards()
        self._stop_backend_turn()  # first: a stopped Turn stays alive to watch its backend turn end
        if message.error is not None:
            self._settle(error=message.error)  # $/cancel_request: -32800, after every update of the turn
        else:
            self._settle(prompt_result("cancelled"))

    @handles(ClientsChanged)
    def on_clients_changed(self, message: ClientsChanged) -> None:
        self.clients = list(message.clients)  # a client that attaches mid-turn sees the rest of it
        self.typed_failures = air.client_declares(message.capabilities, air.SESSION_FAILURE)
        self.translator.notices = session_notices.supports_notices(message.capabilities)
        self.translator.subagents = supports_subagents(message.capabilities)

    @handles(ShowInteraction)
    def on_show_interaction(self, message: ShowInteraction) -> None:
        """Show the card a backend question is about, then let the router ask."""
        tool_call_id, name, value, tool_call = interactions.dialog_tool_call(message.frame, self.config.lang)
        if self.settled:
            # Answered (cancelled) already: a question the engine asks while it stops is declined, never
            # a dialog that opens after the cancel (issue 32), nor a card after the answer.
            self.router.tell(InteractionAsked(message.frame, message.generation, self.session_id,
                                              self.backend_session_id, tool_call, self.session, self.backend,
                                              declined=t(self.config.lang, "interaction.declined.turn_cancelled")))
            return
        self._emit(self.translator.ensure_card(tool_call_id, name, value))
        self.router.tell(InteractionAsked(message.frame, message.generation, self.session_id,
                                          self.backend_session_id, tool_call, self.session, self.backend))

    @handles(InteractionAborted)
    def on_interaction_aborted(self, message: InteractionAborted) -> None:
        self._emit(self.translator.close_card(message.tool_call_id))

    @handles(DialogWaits)
    def on_dialog_waits(self, message: DialogWaits) -> None:
        self._emit(self.translator.dialog_waits(message.tool_call_id, message.waiting))

    @handles(FailTurn)
    def on_fail_turn(self, message: FailTurn) -> None:
        self._settle(error=message.error)

    @handles(BackendLost)
    def on_backend_lost(self, message: BackendLost) -> None:
        self.send_in_flight = False
        self.stopping = False  # the process and its turn are gone
        self._settle(error=RpcError(INTERNAL_ERROR, t(self.config.lang, "backend.lost_during_turn", reason=message.reason)))
        self._maybe_done()

    def _start_silence_timer(self) -> None:
        if self.silence_timer is None and self.config.silence_probe > 0:
            period = self.config.silence_probe
            self.silence_timer = gevent.get_hub().loop.timer(period, period)
            self.silence_timer.start(safe_tell, self.actor_ref, SilenceCheck())

    def _stop_silence_timer(self) -> None:
        if self.silence_timer is not None:
            self.silence_timer.close()
            self.silence_timer = None

    @handles(SilenceCheck)
    def on_silence_check(self, message: SilenceCheck) -> None:
        if self.settled or self.send_in_flight:
            return
        if self.events_since_check:
            self.events_since_check = 0
            self.idle_probes = 0
            return
        self._call("session/read", {"sessionId": self.backend_session_id}, ProbeAnswered,
                   timeout=self.config.read_timeout)

    @handles(ProbeAnswered)
    def on_probe_answered(self, message: ProbeAnswered) -> None:
        result, error = message.result, message.error
        if self.settled:
            return
        if error is not None and error.get("timeout"):
            # No answer to a probe: the backend is wedged. It is restarted on the next use.
            reason = t(self.config.lang, "error.backend_silent", seconds=f"{self.config.read_timeout:g}")
            self.backend.tell(BackendStalled(error.get("generation"), reason))
            self._settle(error=RpcError(INTERNAL_ERROR, reason))
            return
        if error is not None:
            return
        projection = result.get("projection") if isinstance(result, dict) else None
        if isinstance(projection, dict) and projection.get("status") == "idle":
            self.idle_probes += 1
            if self.idle_probes >= 2:
                log.warning("turn on %s went silent and the backend is idle; ending it", self.session_id)
                self._close_open_cards()
                self._settle(prompt_result("end_turn"))
        else:
            self.idle_probes = 0

    def on_stop(self) -> None:
        self._stop_silence_timer()
        if self.quota_timer is not None:
            self.quota_timer.kill(block=False)


"""Session: one ACP session and, once used, its backend session.

One actor that owns a few plain parts, each with its own state and a narrow
interface (docs/architecture.md, "The Session"):

* ``Lifecycle`` — placeholder → materializing → live, lost → resuming → live;
  one create and one resume however many uses race;
* ``Sequencer`` — ``seq`` order, duplicates dropped, gaps fetched or skipped;
* ``EventRouter`` — each applied event to the current Turn, BackgroundTasks or
  the Session's own updates, and the card-reuse registry;
* ``Attribution`` — which backend turn each Turn's send started (in pipe order,
  whether ``turn.started`` precedes the send's answer or follows it);
* ``HistoryRead`` — the history read behind ``session/load``;
* ``Settings`` and ``Controls`` — mode/model/thought, extension methods, slash
  commands, compaction holding prompts back.

The actor itself keeps preemption (at most one current Turn: a new prompt
cancels the old one, which answers ``cancelled`` at once) and the cards of
questions asked between turns (each card has one owner: the Turn whose
translator opened it, or this Session).
"""

from __future__ import annotations

import functools
import logging
import time
import uuid
from typing import Any
from collections.abc import Callable

import gevent

from zcode_acp.protocol import commands, interactions, updates
from zcode_acp.protocol.content import BackendPrompt
from zcode_acp.protocol.errors import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    BACKEND_SESSION_NOT_ACTIVE,
    SESSION_NOT_FOUND,
    RpcError,
    cancelled,
    cli_too_old,
    from_backend_error,
    invalid_params,
    is_busy,
    is_not_active,
    session_not_found,
)
from zcode_acp.protocol.events import STATE_UPDATED, TITLE_UPDATED, TURN_STEER_QUEUED, payload
from zcode_acp.protocol.handshake import supports_terminal_output
from zcode_acp.protocol.i18n import t
from zcode_acp.protocol.history import replay_updates
from zcode_acp.protocol.session_config import SessionSettings, session_state
from zcode_acp.protocol.sessions import iso_time, own_workspace, workspace
from zcode_acp.protocol.translator import TurnTranslator, agent_text
from zcode_acp.protocol.usage import read_usage_update

from zcode_acp.actors.background_tasks import BackgroundTasks
from zcode_acp.actors.base import BridgeActor, handles, safe_tell
from zcode_acp.config.settings import Config
from zcode_acp.actors.delivery import deliver, encode_cooperatively
from zcode_acp.actors.messages import (
    Dormant,
    GoDormant,
    IdleCheck,
    SessionIdle,
    Adopt,
    Announce,
    CatalogSeen,
    Answered,
    AnswerBackend,
    Attach,
    BackendCall,
    BackendLost,
    BackendRequest,
    CancelInteractions,
    CancelPromptRequest,
    CancelTurn,
    ClientAttached,
    ClientsChanged,
    CloseTasks,
    Created,
    Deliver,
    ErrorDict,
    Evicted,
    Extension,
    FailTurn,
    Forget,
    Forked,
    GapFilled,
    GapTimeout,
    HistoryPoll,
    HoldSession,
    InteractionAborted,
    InteractionAsked,
    Materialized,
    PlanRead,
    PreviousTurnRunning,
    ProbeAnswered,
    Prompt,
    RegisterRoute,
    RelayUpdates,
    ReleaseSession,
    ReplayTurn,
    Reply,
    Resumed,
    SendAnswered,
    SessionActivity,
    SessionEvents,
    SessionNotice,
    SetSetting,
    ShowInteraction,
    StartTurn,
    StopFailed,
    Subscribed,
    TaskCancelled,
    TaskEvents,
    Teardown,
    TurnDone,
    TurnEvents,
    TurnReplayed,
    TurnSettled,
    UnregisterRoute,
    V4Expire,
    V4Resolve,
    V4Frames,
)
from zcode_acp.actors.session.attribution import Attribution, Claim
from zcode_acp.actors.session.engine_surface import EngineSurface
from zcode_acp.actors.session.extensions import Controls
from zcode_acp.actors.session.held import HeldSession
from zcode_acp.actors.session.history import POLL_INTERVAL, HistoryRead, split_replay
from zcode_acp.actors.session.lifecycle import Lifecycle, Phase, Step
from zcode_acp.actors.session.routing import EventRouter, Routed
from zcode_acp.actors.session.sequencer import Ready, Sequencer
from zcode_acp.actors.session.settings import Settings
from zcode_acp.actors.session import v4tasks
from zcode_acp.actors.session.v4path import V4Path
from zcode_acp.actors.transport import flow
from zcode_acp.actors.turn import Turn

log = logging.getLogger(__name__)
_NOT_ACTIVITY = (IdleCheck, GoDormant)  # the idle machinery's own messages


class Session(BridgeActor):
    def __init__(
        self,
        *,
        session_id: str,
        cwd: str,
        mcp_servers: list[Any],
        settings: SessionSettings,
        backend: Any,
        router: Any,
        supervisor: Any,
        clients: list[Any],
        capabilities: dict[str, Any],
        config: Config,
        backend_session_id: str | None = None,
        root_known: bool = True,
    ) -> None:
        super().__init__()
        self.session_id = session_id
        self.cwd = cwd
        self.root_known = root_known  # False for a raw backend id until its resume names the root
        self.mcp_servers = mcp_servers
        self.backend = backend
        self.router = router
        self.supervisor = supervisor
        self.clients = list(clients)
        self.capabilities = capabilities
        self.config = config
        self.compact_timeout = config.compact_timeout
        self.backend_session_id = backend_session_id
        # the parts
        self.lifecycle = Lifecycle(session_id, materialized=backend_session_id is not None)
        self.sequencer = Sequencer()
        self.events = EventRouter()
        self.attribution = Attribution()
        self.held = HeldSession(config.lang)  # an older turn of ours that still holds the engine's lock (issue 21)
        self.adopted: set[int] = set()  # Turns whose backend turn is known (steering needs one running)
        self.speaks_v4 = False  # today's engine: a turn.started named its foreground execution
        self.title = ""  # the engine's last word on the session's title
        self.surface = EngineSurface(self)  # what create/resume answers say about the engine
        self.steer_deliveries: dict[str, str] = {}  # v4 sendText commandId → the delivery the engine admitted
        self.workspace_ref: dict[str, str] | None = None  # the engine's own {workspacePath, workspaceKey}
        self.history = HistoryRead()
        self.settings = Settings(settings)
        self.controls = Controls(self)
        self.cards = TurnTranslator(message_id="ix", lang=config.lang)  # cards of questions asked between turns
        # preemption
        self.turns: dict[int, Any] = {}
        self.turn_requests: dict[int, tuple[str, Any]] = {}
        self.turn_prompts: dict[int, str] = {}  # each Turn's prompt text (split_replay)
        self.current: int | None = None
        self.next_key = 1
        self.plan: list[dict[str, str]] | None = None
        self.tasks: Any = None
        # ZCODE_ACP_ENGINE_API=v4: the conversation comes from the v4 data plane (docs/v4.md)
        self.v4 = V4Path(self) if config.engine_api == "v4" else None
        if self.v4 is not None:  # an engine with a v4 data plane is 0.16+: the removed methods are refused here
            self.speaks_v4 = True

    # -- leaving memory when idle ----------------------------------------------------------------

    def on_start(self) -> None:
        self.last_active = time.monotonic()
        self._arm_idle_check(self.config.idle_session_after)

    def on_receive(self, message: Any) -> Any:
        if type(message) not in _NOT_ACTIVITY:
            self.last_active = time.monotonic()
        return super().on_receive(message)

    def _arm_idle_check(self, delay: float) -> None:
        if self.config.idle_session_after > 0:
            # A bare timer, not spawn_later's greenlet: ~0.1 KiB a session instead of ~1 (its tell never
            # blocks, so it may run in the hub).
            gevent.get_hub().loop.timer(delay).start(safe_tell, self.actor_ref, IdleCheck())

    def _idle(self) -> bool:
        """Nothing would be lost by stopping now: no turn, dialog card, task, load or compaction."""
        return (not self.turns and self.tasks is None and not self.cards.cards and not self.history.in_flight
                and not self.controls.compacting and not (self.v4 is not None and self.v4.busy)
                and self.lifecycle.phase in (Phase.LIVE, Phase.LOST, Phase.PLACEHOLDER)
                and time.monotonic() - self.last_active >= self.config.idle_session_after)

    @handles(IdleCheck)
    def on_idle_check(self, message: IdleCheck) -> None:
        if self._idle():
            self.supervisor.tell(SessionIdle(self.session_id))
        remaining = self.last_active + self.config.idle_session_after - time.monotonic()
        self._arm_idle_check(max(remaining, 1.0))

    @handles(GoDormant)
    def on_go_dormant(self, message: GoDormant) -> Dormant | None:
        """Asked by the Supervisor, in mailbox order after anything it forwarded: still idle?"""
        if not self._idle():  # something the Supervisor forwarded before this ask came first
            return None
        if self.backend_session_id and self.lifecycle.live:
            self.backend.tell(UnregisterRoute(self.backend_session_id, self.actor_ref))
        self.lifecycle.close()
        return Dormant(self.cwd, self.mcp_servers, self.backend_session_id, self.settings.current, self.root_known)

    def _background_tasks(self) -> Any:
        """Started on first use: most sessions never run a background task, and an idle
        actor costs memory (docs/performance.md, "Idle sessions")."""
        if self.tasks is None:
            self.tasks = BackgroundTasks.start(self.session_id, self.clients,
                                               supports_terminal_output(self.capabilities), self.config.lang)
        return self.tasks

    # -- the port the parts use ------------------------------------------------------------

    def deliver(self, updates_: list[dict[str, Any]]) -> None:
        deliver(self.clients, self.session_id, updates_)

    def _call(self, method: str, params: dict[str, Any],
              reply: Callable[[Any, ErrorDict | None], Any] | None = None, timeout: float | None = None) -> None:
        self.backend.tell(BackendCall(method, params, self.actor_ref if reply else None, reply, timeout))

    def request(self, method: str, params: dict[str, Any], on_result: Callable[[Any], None],
                on_error: Callable[[Any], None], timeout: float | None = None, retry_evicted: bool = True) -> None:
        """A backend call for this session whose answer comes back here, in pipe order.

        ``-32004`` (the backend evicted the session) resumes it and retries once.
        """
        def answered(result: Any, error: ErrorDict | None) -> None:
            if error is None:
                on_result(result)
            elif retry_evicted and is_not_active(error) and self.lifecycle.live:
                self._lost()
                self.when_live(
                    lambda: self.request(method, params, on_result, on_error, timeout, retry_evicted=False),
                    lambda exc: on_error(exc.to_dict()))
            else:
                on_error(error)

        self._call(method, {**params, "sessionId": self.backend_session_id},
                   functools.partial(Answered, answered), timeout)

    @handles(Answered)
    def on_answered(self, message: Answered) -> None:
        message.then(message.result, message.error)

    def when_live(self, action: Callable[[], None], on_error: Callable[[RpcError], None]) -> None:
        step = self.lifecycle.when_live(action, on_error)
        if step is Step.CREATE and self.v4 is not None:
            self.v4.create(self.cwd, self.mcp_servers, lambda result, error: self.on_created(Created(result, error)))
        elif step is Step.CREATE:
            params: dict[str, Any] = {"workspace": workspace(self.cwd), "mode": self.settings.current.mode}
            if self.mcp_servers:
                params["mcpServers"] = self.mcp_servers
            self._call("session/create", params, Created)
        elif step is Step.RESUME:
            if self.workspace_ref is None and not self.root_known:
                # A session made elsewhere: resume it under its own workspace key, which session/list names.
                self._call("session/list", {}, functools.partial(Answered, self._listed_for_resume))
                return
            self._resume()

    def _listed_for_resume(self, result: Any, error: ErrorDict | None) -> None:
        self.workspace_ref = own_workspace(result, self.backend_session_id)
        self._resume()

    def _resume(self) -> None:
        """``session/resume`` under the session's own workspace (its key is not always the folder)."""
        params: dict[str, Any] = {"sessionId": self.backend_session_id,
                                  "workspace": self.workspace_ref or workspace(self.cwd)}
        if self.mcp_servers:
            params["mcpServers"] = self.mcp_servers
        self._call("session/resume", params, Resumed)

    def fork_made(self, backend_session_id: str, reply_to: Any, request_id: Any, as_command: bool) -> None:
        self.supervisor.tell(Forked(reply_to, request_id, self.session_id, backend_session_id, self.cwd,
                                    self.mcp_servers, self.settings.current, as_command))

    def renamed(self, title: str) -> None:
        """The engine accepted a rename: announce the title unless its own event already did."""
        if title != self.title:
            self.deliver_in_order([updates.session_title(title, iso_time(time.time() * 1000))])
            self._titled(title)

    def rename_v4(self, title: str, on_done: Callable[[], None], on_error: Callable[[Any], None]) -> bool:
        """A v4 Session renames through its own ``V4Commands`` (acks judged there); the same answer
        and announcement as the legacy path follow (``Controls.rename``)."""
        if self.v4 is None:
            return False
        self.v4.extra("renameSession", {"title": title}, lambda result: on_done(), on_error)
        return True

    def task_cancelled(self, task_id: str) -> None:
        self._background_tasks().tell(TaskCancelled(task_id))

    def start_turns(self, keys: list[int]) -> None:
        if self.v4 is not None:
            self.v4.release_held()  # the prompts our compaction held (V4Path keeps them, not Turns)
        for key in keys:
            if self.current == key:
                self.turns[key].tell(StartTurn(self.backend_session_id))  # type: ignore[arg-type]

    @handles(ClientsChanged)
    def on_clients_changed(self, message: ClientsChanged) -> None:
        self.clients = list(message.clients)
        self.capabilities = message.capabilities
        if self.tasks is not None:  # one started later reads self.clients
            self.tasks.tell(message)
        for turn in self.turns.values():
            turn.tell(message)

    # -- becoming live -------------------------------------------------------------------------

    @handles(Created)
    def on_created(self, message: Created) -> None:
        self._materialized(Step.CREATE, message.result, message.error)

    @handles(Resumed)
    def on_resumed(self, message: Resumed) -> None:
        self._materialized(Step.RESUME, message.result, message.error)

    def _materialized(self, step: Step, result: Any, error: ErrorDict | None) -> None:
        if self.lifecycle.closed:
            return  # work in flight at close must not bring the session back
        session = result.get("session") if isinstance(result, dict) else None
        backend_id = session.get("sessionId") if isinstance(session, dict) else None
        if error is not None or not isinstance(backend_id, str):
            if step is Step.CREATE:
                failure = from_backend_error(error or {"message": "no session id in the answer"}, step.value)
            else:
                failure = self._resume_failure(error)
            self.lifecycle.step_failed(step, failure)
            return
        if self.surface.materialized(step is Step.CREATE, result, bool(self.mcp_servers)):
            self.speaks_v4 = True  # steer and stop through v4/command; never a removed method
        if step is Step.CREATE:
            self.backend_session_id = backend_id
            self.supervisor.tell(Materialized(self.session_id, backend_id))
        else:
            root = (session.get("workspace") or {}).get("workspacePath") if isinstance(session, dict) else None
            if not self.root_known and isinstance(root, str):
                self.cwd, self.root_known = root, True
            self.workspace_ref = own_workspace({"sessions": [session]}, backend_id) or self.workspace_ref
            self.history.resumed()  # the next load reads until the history stops growing
        self.backend.tell(RegisterRoute(backend_id, self.actor_ref))
        self.lifecycle.materialized()
        self._subscribe()

    # -- the port EngineSurface uses ------------------------------------------------------------

    def call(self, method: str, params: dict[str, Any], then: Callable[[Any, Any], None]) -> None:
        self._call(method, params, functools.partial(Answered, then))

    def remember_catalog(self, catalog: dict[str, Any]) -> None:
        self.supervisor.tell(CatalogSeen(catalog))  # the next run's first session/new offers it

    def workspace_of(self, session: Any) -> dict[str, Any]:
        ref = own_workspace({"sessions": [session]}, session.get("sessionId")) if isinstance(session, dict) else None
        return ref or self.workspace_ref or workspace(self.cwd)

    def _resume_failure(self, error: ErrorDict | None) -> RpcError:
        """A resume the backend refused: a session it does not know is "not found" to the client.

        Today's engine answers an unknown session's resume ``-32004 "Session not found"``
        (the seed's, ``-32002``); both are ACP's resource-not-found ``-32002``.
        """
        unknown = isinstance(error, dict) and error.get("code") in (SESSION_NOT_FOUND, BACKEND_SESSION_NOT_ACTIVE)
        if unknown or not self.root_known:
            self.supervisor.tell(Forget(self.session_id))
            return session_not_found(self.session_id)
        return from_backend_error(error or {"message": "no session in the answer"}, "session/resume")

    def _subscribe(self) -> None:
        self.lifecycle.subscribe_sent()
        if self.v4 is not None:  # the conversation topic instead of the legacy event stream
            self.v4.subscribe(lambda result, error: self.on_subscribed(Subscribed(result, error)))
            return
        params = {"sessionId": self.backend_session_id, "deliveryKind": "desktop-continuous", "includeSnapshot": False}
        self._call("session/subscribe", params, Subscribed, timeout=self.config.subscribe_timeout)

    @handles(Subscribed)
    def on_subscribed(self, message: Subscribed) -> None:
        if not self.lifecycle.subscribing():
            return
        if message.error is not None:
            if message.error.get("timeout") and self.lifecycle.subscribe_attempts < 2:
                self._subscribe()  # a real backend sometimes needs a second ask
                return
            self.backend.tell(UnregisterRoute(self.backend_session_id, self.actor_ref))  # type: ignore[arg-type]
            if message.error.get("code") == METHOD_NOT_FOUND:
                self.lifecycle.subscribe_failed(cli_too_old(message.error, self.config.lang))
                return
            self.lifecycle.subscribe_failed(from_backend_error(message.error, "session/subscribe"))
            return
        event_seq = message.result.get("eventSeq") if isinstance(message.result, dict) else None
        self._apply(self.sequencer.start(event_seq if isinstance(event_seq, int) else 0))
        self.lifecycle.became_live()  # then the uses that waited (a turn's StartTurn, a load)

    def _lost(self) -> None:
        if self.lifecycle.lost():
            self.backend.tell(UnregisterRoute(self.backend_session_id, self.actor_ref))  # type: ignore[arg-type]
        self.sequencer.reset()

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
        if self.v4 is not None:  # the engine's inputRouting decides what a prompt during a turn does
            v4, prompt = self.v4, message.prompt
            owed = v4.hold(message.conn, message.request_id)
            self.when_live(lambda: v4.prompt(owed, prompt.text, prompt.attachments),
                           lambda error: v4.held_failed(owed, error))
            return
        if self.current is not None:
            self.turns[self.current].tell(CancelTurn("preempted"))  # the latest prompt wins
            self.router.tell(CancelInteractions(self.session_id, "superseded by a new prompt"))
        self._start_turn(message.conn, message.request_id, message.prompt)

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
        self._lost()
        self._start_when_live(message.key)

    @handles(CancelTurn)
    def on_cancel_turn(self, message: CancelTurn) -> None:
        if self.v4 is not None:
            self.v4.cancel()
        if self.current is not None:
            self.turns[self.current].tell(CancelTurn(message.reason))
        else:
            self.deliver(self.cards.close_open_cards())  # a question asked between turns
        self.router.tell(CancelInteractions(self.session_id, "cancelled by user"))

    @handles(BackendRequest)
    def on_backend_request(self, message: BackendRequest) -> None:
        """A backend question about this session: its card first, then the dialog."""
        if self.current is not None:
            self.turns[self.current].tell(ShowInteraction(message.frame, message.generation))
            return
        tool_call_id, name, value, tool_call = interactions.dialog_tool_call(message.frame, self.config.lang)
        if self.v4 is None or not self.v4.owns_card(tool_call_id):  # on v4 the tool's row already made its card
            self.deliver(self.cards.ensure_card(tool_call_id, name, value))
        if self.v4 is not None:
            tool_call = self.v4.with_countdown(message.frame, tool_call)
        self.router.tell(InteractionAsked(message.frame, message.generation, self.session_id,
                                          self.backend_session_id, tool_call, self.actor_ref, self.backend,
                                          answer_via=self.actor_ref if self.v4 is not None else None))

    @handles(InteractionAborted)
    def on_interaction_aborted(self, message: InteractionAborted) -> None:
        """The router gave up on a dialog: whoever owns its card closes it."""
        if self.current is not None:
            self.turns[self.current].tell(message)
        self.deliver(self.cards.close_card(message.tool_call_id))

    @handles(CancelPromptRequest)
    def on_cancel_prompt_request(self, message: CancelPromptRequest) -> None:
        """``$/cancel_request`` for a prompt: its turn answers -32800 after its last update."""
        if self.v4 is not None and self.v4.cancel_request(message.conn, message.request_id, cancelled()):
            return
        for key, request in self.turn_requests.items():
            if request == (message.conn.actor_urn, message.request_id):
                self.turns[key].tell(CancelTurn("request cancelled", cancelled()))
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
        self.adopted.discard(message.key)
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
                reason = self.held.busy_reason(any(key != message.key for key in self.turns)) \
                    if is_busy(message.error) else None
                if turn is not None and reason is not None:
                    turn.tell(PreviousTurnRunning(*reason))  # before the busy answer: why it waits
        if turn is not None:
            turn.tell(message)
            if claim is not None:
                self._adopt(claim)  # its turn.started came before the send's answer

    def _adopt(self, claim: Claim) -> None:
        if claim.execution_id is not None:
            self.speaks_v4 = True  # today's engine: stop and steer through v4/command
        if claim.key in self.turns:
            self.adopted.add(claim.key)
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
        if self.v4 is not None:  # the engine's control says so (no Turn actor on v4)
            return self.v4.turn_running()
        return self.current is not None and self.current in self.adopted

    @handles(StopFailed)
    def on_stop_failed(self, message: StopFailed) -> None:
        """A stopped turn runs on: close the backend session and resume it, so the next prompt can run."""
        if not self.lifecycle.live or not self.backend_session_id:
            return
        backend_id = self.backend_session_id
        self._lost()
        self.lifecycle.detaching()  # uses from now on wait for the close, then the resume

        def closed(result: Any, error: ErrorDict | None) -> None:
            if error is not None:
                log.warning("session/close of %s failed (%s); the stopped turn may still hold it",
                            backend_id, error.get("message"))
                notice = self.held.close_failed(message.turn_id)
                if notice:
                    self.deliver_in_order([agent_text(notice, uuid.uuid4().hex)])
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

    # -- the event stream ------------------------------------------------------------------------

    @handles(SessionEvents)
    def on_session_events(self, message: SessionEvents) -> None:
        try:
            if self.v4 is not None:
                return  # a v4 session reads its conversation topic, not the legacy stream
            if self.lifecycle.live:
                self._apply(self.sequencer.accept(message.events), message.token)
            else:
                self.sequencer.hold(message.events)
        finally:
            flow.done(message.token)

    def _to_turns(self, events: list[dict[str, Any]], token: Any) -> None:
        last = len(self.turns) - 1
        for index, (key, turn) in enumerate(self.turns.items()):  # the current Turn, and stopped ones watching for their end
            # A Turn empties its batch once handled (messages.Consumed): each gets its own list.
            batch = events if index == last else list(events)
            turn.tell(TurnEvents(batch, flow.share(token) if key == self.current else None))

    def _apply(self, ready: Ready, token: Any = None) -> None:
        """Route what the sequencer released, and start a gap fetch if it asked for one."""
        if ready.skipped is not None:
            log.warning("session %s: events %d..%d never arrived; skipping the hole",
                        self.session_id, *ready.skipped)
        if ready.events:
            routed = Routed()
            has_turn = self.current is not None
            terminal = supports_terminal_output(self.capabilities)
            for event in ready.events:
                freed = self.held.event(event)
                if freed:
                    routed.session.append(agent_text(freed, uuid.uuid4().hex))
                claim = self.attribution.event(event)
                if claim is not None:
                    self._adopt(claim)
                if event.get("type") == TURN_STEER_QUEUED:
                    self._steer_admitted(event)
                elif event.get("type") == TITLE_UPDATED:
                    self._titled(payload(event).get("title"))
                session_before = len(routed.session)
                self.events.route(event, routed, has_turn, terminal)
                if len(routed.session) > session_before:
                    # A session-level update (today's title event) keeps its pipe place among the
                    # turn's events: those before it go first, those after it follow (a replay found it).
                    if routed.turn:
                        self._to_turns(routed.turn, token)
                    self.deliver_in_order(routed.session)
                    routed.turn, routed.session = [], []
            if routed.turn:
                self._to_turns(routed.turn, token)
            if routed.tasks:
                self._background_tasks().tell(TaskEvents(routed.tasks, flow.share(token)))
            self.deliver_in_order(routed.session)
        if ready.gap_after is not None:
            params = {"sessionId": self.backend_session_id, "deliveryKind": "desktop-continuous",
                      "includeSnapshot": False, "afterSeq": ready.gap_after}
            self._call("session/subscribe", params, GapFilled, timeout=self.config.subscribe_timeout)
            gevent.spawn_later(self.config.gap_wait, safe_tell, self.actor_ref, GapTimeout(ready.gap_after))

    @handles(V4Frames)
    def on_v4_frames(self, message: V4Frames) -> None:
        try:
            if self.v4 is not None and not self.lifecycle.closed:
                self.v4.frames(message.frames)
        finally:
            flow.done(message.token)

    @handles(V4Resolve)
    def on_v4_resolve(self, message: V4Resolve) -> None:
        """A dialog's first answer on v4: ``resolveInteraction``, then the legacy request (V4Path.resolve)."""
        if self.v4 is not None:
            self.v4.resolve(message)
        else:
            self.backend.tell(AnswerBackend(message.generation, message.request_ids, message.result))

    @handles(V4Expire)
    def on_v4_expire(self, message: V4Expire) -> None:
        if self.v4 is not None:
            self.v4.expire(message)

    @handles(GapFilled)
    def on_gap_filled(self, message: GapFilled) -> None:
        if self.lifecycle.live:
            missed = message.result.get("events") if isinstance(message.result, dict) else None
            self._apply(self.sequencer.gap_filled(missed))

    @handles(GapTimeout)
    def on_gap_timeout(self, message: GapTimeout) -> None:
        self._apply(self.sequencer.gap_timed_out(message.after_seq))

    @handles(SessionNotice)
    def on_session_notice(self, message: SessionNotice) -> None:
        params = message.params
        if message.method == STATE_UPDATED:
            self.deliver_in_order(self.settings.change(self.settings.current.with_patch(params.get("patch"))))
            self.controls.compaction_ended(params.get("reason"))  # the end of a compaction is a reason
        elif message.method == TITLE_UPDATED and isinstance(params.get("title"), str):
            self.deliver_in_order([updates.session_title(params["title"], iso_time(time.time() * 1000))])
            self._titled(params["title"])

    def _titled(self, title: Any) -> None:
        """The engine named the session (either engine's way): the hub's list and notifications use it."""
        if isinstance(title, str) and title:
            self.title = title
            self.supervisor.tell(SessionActivity(self.session_id, self.current is not None, title))

    # -- load and resume ---------------------------------------------------------------------------

    @handles(Attach)
    def on_attach(self, message: Attach) -> None:
        if self.root_known and message.cwd != self.cwd:
            message.fail(invalid_params("cwd", f"does not match the session's workspace root {self.cwd}"))
            return
        if message.replay:
            message.conn.tell(HoldSession(self.session_id))
        if self.backend_session_id is None:
            self._attached(message, [])  # never used: nothing to resume, nothing to replay
            return

        def fail(error: RpcError) -> None:
            if message.replay:
                message.conn.tell(ReleaseSession(self.session_id, b""))
            message.fail(error)

        def live() -> None:
            if self.root_known and message.cwd != self.cwd:
                fail(invalid_params("cwd", f"does not match the session's workspace root {self.cwd}"))
            elif not message.replay:
                self._attached(message, None)
            elif self.v4 is not None:
                self._attached(message, self.v4.replay())  # the snapshot, not a history read
            elif self.history.want(message):  # one history read serves every load waiting for it
                self._read_history()

        self.when_live(live, fail)

    def _attached(self, message: Attach, replay: list[dict[str, Any]] | None) -> None:
        if replay is not None:
            message.conn.tell(ReleaseSession(self.session_id, encode_cooperatively(self.session_id, replay)))
        message.conn.tell(Reply(message.request_id, session_state(self.settings.current), None))
        self.on_announce(Announce(message.conn))
        self.router.tell(ClientAttached(self.session_id, message.conn))  # open dialogs join it too

    def _read_history(self) -> None:
        self.history.read_sent()
        self.request("session/messages", {}, self._history_read, self._history_failed,
                     timeout=self.config.messages_timeout)

    def _history_read(self, result: Any) -> None:
        messages = result.get("messages") if isinstance(result, dict) else None
        if self.history.read(messages):  # still filling in after a resume: read again
            gevent.spawn_later(POLL_INTERVAL, safe_tell, self.actor_ref, HistoryPoll())
            return
        self.request("session/read", {}, self._history_state, lambda error: self._history_state({}),
                     timeout=self.config.read_timeout)

    @handles(HistoryPoll)
    def on_history_poll(self, message: HistoryPoll) -> None:
        if self.history.in_flight:
            self._read_history()

    def _history_state(self, result: Any) -> None:
        extras: list[dict[str, Any]] = []
        if isinstance(result, dict):
            entries = updates.plan_entries(result.get("todos"))
            if entries:
                self.plan = entries
                extras.append(updates.plan(entries))
            self.settings.current = self.settings.current.with_backend_settings(result.get("settings"))
            usage = read_usage_update(result)
            if usage:
                extras.append(usage)
        if self.turns:
            # A turn runs (or has just ended and its Turn is still here): the engine's history
            # lags it, so the Turn sends its own record after the history before it.
            key = max(self.turns)
            before, during = split_replay(self.history.messages, self.turn_prompts.get(key))
            head = encode_cooperatively(self.session_id, before)
            tail = encode_cooperatively(self.session_id, during + extras)
            last = encode_cooperatively(self.session_id, extras)
            for message in self.history.finish():
                reply = Reply(message.request_id, session_state(self.settings.current), None)
                self.turns[key].tell(ReplayTurn(message.conn, head + last, head + tail, reply, message))
            return
        replay = replay_updates(self.history.messages) + extras
        for message in self.history.finish():
            self._attached(message, replay)

    @handles(TurnReplayed)
    def on_turn_replayed(self, message: TurnReplayed) -> None:
        """The Turn wrote the replay and the answer: what follows an answered load."""
        self.on_announce(Announce(message.attach.conn))
        self.router.tell(ClientAttached(self.session_id, message.attach.conn))

    def _history_failed(self, error: Any) -> None:
        failure = from_backend_error(error, "session/messages")
        for message in self.history.finish():
            message.conn.tell(ReleaseSession(self.session_id, b""))
            message.fail(failure)

    # -- settings, extensions, commands ----------------------------------------------------------------

    @handles(SetSetting)
    def on_set_setting(self, message: SetSetting) -> None:
        def done(result: Any) -> None:
            answer = self.controls.config_answer() if message.answer == "config" else {}
            message.conn.tell(Reply(message.request_id, answer, None))

        self.controls.set_setting(message.config_id, message.value, done, message.fail)

    @handles(Extension)
    def on_extension(self, message: Extension) -> None:
        def reply(result: Any) -> None:
            message.conn.tell(Reply(message.request_id, result if isinstance(result, dict) else {}, None))

        call = commands.extension_call(message.name, message.params)
        if call.cancels_task is not None and self.v4 is not None:  # on the v4 path: cancelBackgroundWork
            call = commands.ExtensionCall(v4tasks.METHOD, v4tasks.cancel_call_params(call.cancels_task), v4_only=True)
        if call.v4_only:
            v4 = self.v4
            if v4 is None:
                message.fail(RpcError(METHOD_NOT_FOUND, t(self.config.lang, "error.needs_v4", method=message.name)))
            else:
                self.when_live(lambda: v4.extra(call.method, call.params, reply, message.fail), message.fail)
            return
        self.controls.extension(message.name, call, message.conn, message.request_id, reply, message.fail)

    @handles(Announce)
    def on_announce(self, message: Announce) -> None:
        """After a new/load/resume answer (never before it): the commands this session offers."""
        message.conn.tell(Deliver(self.session_id, updates.encode(
            self.session_id, [commands.available_commands_update(self.surface.commands, self.config.lang)])))

    # -- the end -----------------------------------------------------------------------------------------

    @handles(BackendLost)
    def on_backend_lost(self, message: BackendLost) -> None:
        self.lifecycle.lost()  # the next use resumes on a new backend process
        self.sequencer.reset()
        self.lifecycle.fail_waiters(RpcError(INTERNAL_ERROR, message.reason))
        if self.v4 is not None:
            self.v4.lost(RpcError(INTERNAL_ERROR, message.reason))
        self.controls.compaction_lost({"message": f"{message.reason} during the compaction"})
        for turn in list(self.turns.values()):
            turn.tell(BackendLost(message.reason))  # each closes its own cards
        self.deliver(self.cards.close_open_cards())
        # Its open dialogs are withdrawn; an answer can never reach the next process.
        self.router.tell(CancelInteractions(self.session_id, message.reason))

    @handles(Teardown)
    def on_teardown(self, message: Teardown) -> None:
        """Cancel every turn (each stops its backend turn) before the backend goes away."""
        was_live = self.lifecycle.live
        self.lifecycle.close()
        self.router.tell(CancelInteractions(self.session_id, message.reason))
        if self.v4 is not None:
            self.v4.close()
        futures = [turn.ask(CancelTurn("teardown"), block=False) for turn in self.turns.values()]
        for future in futures:
            try:
                future.get(timeout=1.0)
            except Exception:
                pass
        self.lifecycle.fail_waiters(self.lifecycle.closed_error())
        self.deliver(self.cards.close_open_cards())
        try:  # tasks belong to the session: their cards fail with it
            if self.tasks is not None:
                self.tasks.ask(CloseTasks(), timeout=1.0)
        except Exception:
            pass
        if self.backend_session_id:
            if message.close_backend and was_live:
                # ACP session/close: the engine closes its session too (an engine without the method says -32601).
                self._call("session/close", {"sessionId": self.backend_session_id})
            self.backend.tell(UnregisterRoute(self.backend_session_id, self.actor_ref))

    def on_stop(self) -> None:
        for turn in self.turns.values():
            turn.stop(block=False)
        self.turns.clear()
        if self.tasks is not None:
            self.tasks.stop(block=False)

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

The actor is built in layers, one file each, every layer a subclass of the one below
(docs/architecture.md, "The Session"): ``core.py`` (its state, the ports its parts use,
becoming live), ``prompting.py`` (prompts, preemption, a Turn each), ``stream.py`` (the
engine's events and v4 frames), ``loading.py`` (``session/load``), and ``actor.py``, the
``Session`` itself (settings, extensions, commands; the end).
"""

from __future__ import annotations

import functools
import logging
import time
from typing import Any
from collections.abc import Callable

import gevent
import gevent.event

from zcode_acp.protocol import model_catalog, updates
from zcode_acp.protocol.errors import (
    METHOD_NOT_FOUND,
    BACKEND_SESSION_NOT_ACTIVE,
    SESSION_NOT_FOUND,
    RpcError,
    cli_too_old,
    from_backend_error,
    is_not_active,
    session_not_found,
)
from zcode_acp.protocol.content import BackendPrompt
from zcode_acp.protocol.handshake import supports_terminal_output
from zcode_acp.protocol.session_config import SessionSettings
from zcode_acp.protocol.sessions import iso_time, own_workspace, workspace
from zcode_acp.protocol.translator import TurnTranslator

from zcode_acp.actors.background_tasks import BackgroundTasks
from zcode_acp.actors.base import BridgeActor, handles, safe_tell
from zcode_acp.config.settings import Config
from zcode_acp.actors.delivery import deliver
from zcode_acp.actors.messages import (
    AnswerBackend,
    FEED_LINES,
    Dormant,
    Json,
    Ref,
    SessionActivity,
    V4Expire,
    GoDormant,
    IdleCheck,
    SessionIdle,
    CatalogSeen,
    Answered,
    BackendCall,
    ClientsChanged,
    TitleKept,
    ErrorDict,
    Forget,
    Forked,
    LearnCatalog,
    QuotaAtFailure,
    QuotaForFailure,
    QuotaToldAtTurnEnd,
    Materialized,
    RegisterRoute,
    Resumed,
    StartTurn,
    TaskCancelled,
    UnregisterRoute,
)
from zcode_acp.actors.session.attribution import Attribution
from zcode_acp.actors.session.path import EnginePath
from zcode_acp.actors.session.paths import engine_path
from zcode_acp.actors.session.engine_surface import EngineSurface
from zcode_acp.actors.session.controls import Controls
from zcode_acp.actors.session.held import HeldSession
from zcode_acp.actors.session.history import HistoryRead
from zcode_acp.actors.session.lifecycle import Lifecycle, Phase, Step
from zcode_acp.actors.session.routing import EventRouter
from zcode_acp.actors.session.sequencer import Ready, Sequencer
from zcode_acp.actors.session.settings import Settings

log = logging.getLogger(__name__)
_NOT_ACTIVITY = (IdleCheck, GoDormant)  # the idle machinery's own messages


class SessionCore(BridgeActor):
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
        self.adopted: dict[int, None] = {}  # Turns whose backend turn is known (steering needs one running); keys only
        self.speaks_v4 = False  # the 0.16 engine: a turn.started named its foreground execution
        self.title = ""  # the engine's last word on the session's title
        self.surface = EngineSurface(self)  # what create/resume answers say about the engine
        self.steer_deliveries: dict[str, str] = {}  # v4 sendText commandId → the delivery the engine admitted
        self.workspace_ref: dict[str, str] | None = None  # the engine's own {workspacePath, workspaceKey}
        self.history = HistoryRead()
        # a create in flight when the bridge tore down: set to the engine's id and the model catalog
        # its answer lists (None if it failed), so that the next run resumes that session instead of
        # orphaning it, and offers the models (on_teardown)
        self.create_settled: gevent.event.AsyncResult | None = None
        self.settings = Settings(settings)
        self.controls = Controls(self)
        self.cards: TurnTranslator | None = None  # cards of questions asked between turns: between_turns()
        # preemption
        self.turns: dict[int, Any] = {}
        self.turn_requests: dict[int, tuple[str, Any]] = {}
        self.turn_prompts: dict[int, str] = {}  # each Turn's prompt text (split_replay)
        self.current: int | None = None
        self.next_key = 1
        self.plan: list[dict[str, str]] | None = None
        self.tasks: Any = None
        # a v4 turn the plan's limit stopped, waiting for the QuotaWatch's snapshot: key → what to do with it
        self.quota_waits: dict[int, Callable[[Any], None]] | None = None
        # how it speaks to the engine: the legacy methods and event stream, or the v4 data plane (path.py)
        self.path: EnginePath = engine_path(self, config)
        self.speaks_v4 = self.path.speaks_zcode_protocol  # 0.16+ from the start: removed methods are refused here

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
        return (not self.turns and self.tasks is None and not (self.cards is not None and self.cards.cards)
                and not self.history.in_flight
                and not self.controls.compacting and not self.path.busy
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
        self.path.leave_memory()  # the engine may let go of the session too (the v4 path's v4/close.py)
        if self.backend_session_id and self.lifecycle.live:
            self.backend.tell(UnregisterRoute(self.backend_session_id, self.actor_ref))
        self.lifecycle.close()
        return Dormant(self.cwd, self.mcp_servers, self.backend_session_id, self.settings.current, self.root_known)

    def between_turns(self) -> TurnTranslator:
        """The cards of questions asked between turns, made on the first one: most sessions never
        see one, and every live Session would carry an empty translator (~0.4 KiB)."""
        if self.cards is None:
            self.cards = TurnTranslator(message_id="ix", lang=self.config.lang)
        return self.cards

    def close_cards_between_turns(self) -> list[dict[str, Any]]:
        return self.cards.close_open_cards() if self.cards is not None else []

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

    def deliver_feed(self, updates_: list[dict[str, Any]]) -> None:
        """What the v4 feed translated from the conversation's state: a snapshot replay holds it."""
        deliver(self.clients, self.session_id, updates_, FEED_LINES)

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
                self.lost()
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
        if step is Step.CREATE:
            self.path.create(self.cwd, self.mcp_servers, functools.partial(self._materialized, Step.CREATE))
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

    def fork_made(self, backend_session_id: str | None, reply_to: Any, request_id: Any, as_command: bool) -> None:
        self.supervisor.tell(Forked(reply_to, request_id, self.session_id, backend_session_id, self.cwd,
                                    self.mcp_servers, self.settings.current, as_command))

    def renamed(self, title: str, kept: bool = False) -> None:
        """The engine accepted a rename (or, ``kept``, cannot rename and the bridge's records keep
        the title): announce the title unless the engine's own event already did."""
        if kept:
            self.supervisor.tell(TitleKept(self.session_id, title))
        if title != self.title:
            self.deliver_in_order([updates.session_title(title, iso_time(time.time() * 1000))])
            self.titled(title)

    def task_cancelled(self, task_id: str) -> None:
        self._background_tasks().tell(TaskCancelled(task_id))

    def start_turns(self, keys: list[int]) -> None:
        self.path.compaction_over()  # what the path held itself (the v4 path's prompts)
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

    @handles(LearnCatalog)
    def on_learn_catalog(self, message: LearnCatalog) -> None:
        """Made in the engine now rather than at its first use: the create lists the models. A
        failure here is the first prompt's to report (it tries again, with the same words)."""
        self.when_live(lambda: None, lambda error: log.info("session %s: no model catalog yet: %s",
                                                            self.session_id, error.message))

    @handles(Resumed)
    def on_resumed(self, message: Resumed) -> None:
        self._materialized(Step.RESUME, message.result, message.error)

    def _materialized(self, step: Step, result: Any, error: ErrorDict | None) -> None:
        session = result.get("session") if isinstance(result, dict) else None
        backend_id = session.get("sessionId") if isinstance(session, dict) else None
        if self.lifecycle.closed:  # work in flight at close must not bring the session back
            if step is Step.CREATE and self.create_settled is not None:
                made = error is None and isinstance(backend_id, str)
                catalog = model_catalog.catalog_of(result.get("settings")) if made else None
                self.create_settled.set((backend_id, catalog) if made else None)
            return
        if error is not None or not isinstance(backend_id, str):
            if step is Step.CREATE:
                failure = self.path.create_refused(error)
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

    def call(self, method: str, params: dict[str, Any], then: Callable[[Any, Any], None],
             timeout: float | None = None) -> None:
        self._call(method, params, functools.partial(Answered, then), timeout)

    def remember_catalog(self, catalog: dict[str, Any]) -> None:
        self.supervisor.tell(CatalogSeen(catalog))  # the next run's first session/new offers it

    def workspace_of(self, session: Any) -> dict[str, Any]:
        ref = own_workspace({"sessions": [session]}, session.get("sessionId")) if isinstance(session, dict) else None
        return ref or self.workspace_ref or workspace(self.cwd)

    def _resume_failure(self, error: ErrorDict | None) -> RpcError:
        """A resume the backend refused: a session it does not know is "not found" to the client.

        The 0.16 engine answers an unknown session's resume ``-32004 "Session not found"``
        (the seed's, ``-32002``); both are ACP's resource-not-found ``-32002``.
        """
        unknown = isinstance(error, dict) and error.get("code") in (SESSION_NOT_FOUND, BACKEND_SESSION_NOT_ACTIVE)
        if unknown or not self.root_known:
            self.supervisor.tell(Forget(self.session_id))
            return session_not_found(self.session_id)
        return from_backend_error(error or {"message": "no session in the answer"}, "session/resume")

    def _subscribe(self) -> None:
        self.lifecycle.subscribe_sent()
        self.path.subscribe(self._subscribed)

    def _subscribed(self, result: Any, error: ErrorDict | None) -> None:
        if not self.lifecycle.subscribing():
            return
        if error is not None:
            if error.get("timeout") and self.lifecycle.subscribe_attempts < 2:
                self._subscribe()  # a real backend sometimes needs a second ask
                return
            self.backend.tell(UnregisterRoute(self.backend_session_id, self.actor_ref))  # type: ignore[arg-type]
            if error.get("code") == METHOD_NOT_FOUND:
                self.lifecycle.subscribe_failed(cli_too_old(error, self.config.lang))
                return
            self.lifecycle.subscribe_failed(from_backend_error(error, "session/subscribe"))
            return
        event_seq = result.get("eventSeq") if isinstance(result, dict) else None
        self._apply(self.sequencer.start(event_seq if isinstance(event_seq, int) else 0))
        self.lifecycle.became_live()  # then the uses that waited (a turn's StartTurn, a load)

    def lost(self) -> None:
        """The engine holds the session no more (evicted, or let go of): the next use resumes it."""
        if self.lifecycle.lost():
            self.backend.tell(UnregisterRoute(self.backend_session_id, self.actor_ref))  # type: ignore[arg-type]
        self.sequencer.reset()

    # -- the port the engine paths use (path.py's SessionPort; call, request, when_live, lost above) -----

    def terminal_output(self) -> bool:
        return supports_terminal_output(self.capabilities)

    def answer_backend(self, generation: int, request_ids: list[Any], result: dict[str, Any]) -> None:
        self.backend.tell(AnswerBackend(generation, request_ids, result))

    def surface_seen(self, announce: bool, answer: dict[str, Any]) -> None:
        self.surface.materialized(announce, answer, False)

    def activity(self, busy: bool, outcome: str = "", answer: str = "") -> None:
        self.supervisor.tell(SessionActivity(self.session_id, busy, outcome=outcome, answer=answer))

    def remind(self, delay: float, message: V4Expire) -> None:
        gevent.spawn_later(delay, safe_tell, self.actor_ref, message)

    def quota_at_failure(self, then: Callable[[Any], None]) -> None:
        """As the legacy Turn asks (actors/turn.py): through the Supervisor, answered by a message
        (``QuotaForFailure``), or by this Session's own deadline at ``QUOTA_WAIT``."""
        from zcode_acp.actors import turn  # its QUOTA_WAIT, read when asked (a test shortens it)

        waits = self.quota_waits = self.quota_waits or {}
        key = self.next_key  # one counter with the Turns': the keys never meet
        self.next_key += 1
        waits[key] = then
        self.supervisor.tell(QuotaAtFailure(self.actor_ref, key))
        gevent.spawn_later(turn.QUOTA_WAIT, safe_tell, self.actor_ref, QuotaForFailure(key, None, timed_out=True))

    def quota_for_failure(self, message: QuotaForFailure) -> None:
        then = self.quota_waits.pop(message.key, None) if self.quota_waits else None
        if not self.quota_waits:
            self.quota_waits = None
        if then is not None:  # (None: answered already, by the snapshot or the deadline)
            then(message.snapshot)

    def quota_told(self, meter: Any) -> None:
        self.supervisor.tell(QuotaToldAtTurnEnd.of(self.session_id, meter))

    def compaction_holds_prompt(self) -> bool:
        return self.controls.hold_prompt()

    def compaction_running(self) -> bool:
        return self.controls.compaction is not None

    def compaction_answer(self) -> dict[str, Any] | None:
        return self.controls.compaction.answer if self.controls.compaction is not None else None

    def compaction_ended(self, reason: str) -> None:
        self.controls.compaction_ended(reason)

    # -- what the layers above fill in (prompting.py, stream.py) -----------------------------------

    def _apply(self, ready: Ready, token: Any = None) -> None:
        raise NotImplementedError  # SessionStream

    def sequence(self, events: list[dict[str, Any]], token: object) -> None:
        raise NotImplementedError  # SessionStream (the legacy path's events)

    def titled(self, title: Any) -> None:
        raise NotImplementedError  # SessionStream

    def run_turn(self, conn: Ref, request_id: Json, prompt: BackendPrompt) -> None:
        raise NotImplementedError  # SessionPrompts (the legacy path's prompts)

    def close_and_resume(self) -> None:
        raise NotImplementedError  # SessionPrompts (the v4 path's stop fallback)

    def deliver_in_order(self, session_updates: list[dict[str, Any]]) -> None:
        raise NotImplementedError  # SessionPrompts

    def steer_delivery(self, command_id: str) -> str | None:
        raise NotImplementedError  # SessionPrompts (Controls' port)

    def turn_running(self) -> bool:
        raise NotImplementedError  # SessionPrompts (Controls' port)

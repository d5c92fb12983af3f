"""Session: one ACP session and, once used, its backend session.

Owns (state-machines.md, Session and Preemption):

* the lifecycle placeholder → materializing → live, and lost → resuming → live
  (after a restart of the bridge or the backend, or an eviction). Every use
  (prompt, load, setting) waits for "live"; uses that arrive while a create or
  resume is in flight wait for that same one: one create, one resume.
* sequencing: ``last_seq`` and a reorder buffer. A duplicate is dropped, a gap
  is fetched once with ``session/subscribe {afterSeq}``, events are applied in
  ``seq`` order, and a gap that stays open past a bound is skipped (logged)
  rather than stalling the stream.
* preemption: at most one current Turn. A new prompt cancels the current one
  (it answers ``cancelled`` at once) and becomes current.
* history replay for ``session/load`` (to the requesting client only, with that
  client's live updates for this session held until the replay is written).
* what is not a prompt's: usage updates, mode/model/thought settings, the title,
  the plan, and the events of background-notification turns.

One actor, four files: this one (lifecycle, prompts, backend replies, the
end), ``session_history.py`` (load/resume), ``session_controls.py`` (settings,
extension methods, slash commands), ``session_events.py`` (the event stream).
"""

from __future__ import annotations

import logging
import uuid
from typing import Any, Callable

from zcode_acp.protocol import commands, interactions
from zcode_acp.protocol.errors import (
    INTERNAL_ERROR,
    SESSION_NOT_FOUND,
    RpcError,
    from_backend_error,
    is_not_active,
    session_not_found,
)
from zcode_acp.protocol.handshake import supports_terminal_output
from zcode_acp.protocol.session_config import SessionSettings
from zcode_acp.protocol.translator import TurnTranslator

from zcode_acp.actors.background_tasks import BackgroundTasks
from zcode_acp.actors.base import BridgeActor, deliver
from zcode_acp.actors.cli.config import Config
from zcode_acp.actors.messages import (
    BackendCall,
    BackendLost,
    CancelInteractions,
    CancelTurn,
    CloseTasks,
    FailTurn,
    Forget,
    InteractionAsked,
    Materialized,
    RegisterRoute,
    Reply,
    ShowInteraction,
    StartTurn,
    UnregisterRoute,
)
from zcode_acp.actors.session.controls import SessionControls
from zcode_acp.actors.session.events import EventStream
from zcode_acp.actors.session.history import HistoryReplay
from zcode_acp.actors.turn import Turn

log = logging.getLogger(__name__)


def workspace(cwd: str) -> dict[str, str]:
    return {"workspacePath": cwd, "workspaceKey": cwd}


class Session(HistoryReplay, SessionControls, EventStream, BridgeActor):
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
        self.root_known = root_known  # False for a raw backend id until resume tells us
        self.mcp_servers = mcp_servers
        self.settings = settings
        self.backend = backend
        self.router = router
        self.supervisor = supervisor
        self.clients = list(clients)
        self.capabilities = capabilities
        self.config = config
        self.backend_session_id = backend_session_id
        # placeholder | materializing | subscribing | live | lost | resuming | closed
        self.phase = "lost" if backend_session_id else "placeholder"
        self.waiters: list[tuple[Callable[[], None], Callable[[RpcError], None]]] = []
        self.last_seq = 0
        self.reorder: dict[int, dict[str, Any]] = {}
        self.gap_pending = False
        self.subscribe_attempts = 0
        self.turns: dict[int, Any] = {}
        self.turn_requests: dict[int, tuple[str, Any]] = {}
        self.current: int | None = None
        self.next_key = 1
        self.background_turns: set[str] = set()
        self.plan: list[dict[str, str]] | None = None
        self.calls: dict[int, tuple[Callable[[Any], None], Callable[[Any], None]]] = {}
        self.next_call = 1
        self.replays: list[Any] = []  # Attach messages waiting for the history
        self.history: Any = None  # (messages, reads) while a history read is in flight
        self.interaction_cards: set[str] = set()  # cards shown for questions asked between turns
        # Card reuse: background Bash calls, and their launch cards left open for the task.
        self.background_calls: set[str] = set()
        self.launch_cards: dict[str, bool] = {}  # toolCallId → rendered as a terminal
        self.compacting = False  # a compaction's internal turn holds the session
        self.deferred_starts: list[int] = []
        self.tasks: Any = None

    def on_start(self) -> None:
        self.tasks = BackgroundTasks.start(self.session_id, self.clients,
                                           supports_terminal_output(self.capabilities))

    # -- delivery and calls ---------------------------------------------------------------

    def _deliver(self, updates: list[dict[str, Any]]) -> None:
        deliver(self.clients, self.session_id, updates)

    def _call(self, method: str, params: dict[str, Any], tag: Any = None, timeout: float | None = None) -> None:
        self.backend.tell(BackendCall(method, params, self.actor_ref if tag else None, tag, timeout))

    def _request(self, method: str, params: dict[str, Any], on_result: Callable[[Any], None],
                 on_error: Callable[[Any], None], timeout: float | None = None, retry_evicted: bool = True) -> None:
        """A backend call whose answer comes back to a callback, here, in pipe order.

        ``-32004`` (the backend evicted the session) resumes it and retries once.
        """
        def failed(error: Any) -> None:
            if retry_evicted and is_not_active(error) and self.phase == "live":
                self._lost()
                self._when_live(
                    lambda: self._request(method, params, on_result, on_error, timeout, retry_evicted=False),
                    lambda exc: on_error(exc.to_dict()))
            else:
                on_error(error)

        key = self.next_call
        self.next_call += 1
        self.calls[key] = (on_result, failed)
        self._call(method, {**params, "sessionId": self.backend_session_id}, tag=("call", key), timeout=timeout)

    def handle_ClientsChanged(self, message: Any) -> None:
        self.clients = list(message.clients)
        self.capabilities = message.capabilities
        self.tasks.tell(message)
        for turn in self.turns.values():
            turn.tell(message)

    # -- becoming live ----------------------------------------------------------------------

    def _when_live(self, action: Callable[[], None], on_error: Callable[[RpcError], None]) -> None:
        if self.phase == "live":
            action()
            return
        self.waiters.append((action, on_error))
        if self.phase == "placeholder":
            self.phase = "materializing"
            params = {"workspace": workspace(self.cwd), "mode": self.settings.mode}
            if self.mcp_servers:
                params["mcpServers"] = self.mcp_servers
            self._call("session/create", params, tag=("create",))
        elif self.phase == "lost":
            self.phase = "resuming"
            params = {"sessionId": self.backend_session_id, "workspace": workspace(self.cwd)}
            if self.mcp_servers:
                params["mcpServers"] = self.mcp_servers
            self._call("session/resume", params, tag=("resume",))
        elif self.phase == "closed":
            self._fail_waiters(RpcError(INTERNAL_ERROR, f"Session {self.session_id} is closed"))

    def _became_live(self) -> None:
        waiters, self.waiters = self.waiters, []
        for action, _ in waiters:
            action()

    def _fail_waiters(self, error: RpcError) -> None:
        waiters, self.waiters = self.waiters, []
        for _, on_error in waiters:
            on_error(error)

    def _created(self, result: Any, error: Any, method: str) -> None:
        session = result.get("session") if isinstance(result, dict) else None
        backend_id = session.get("sessionId") if isinstance(session, dict) else None
        if error is not None or not isinstance(backend_id, str):
            if method == "session/create":
                self.phase = "placeholder"
                failure = from_backend_error(error or {"message": "no session id in the answer"}, method)
            else:
                self.phase = "lost"
                failure = self._resume_failure(error)
            self._fail_waiters(failure)
            return
        self.settings = self.settings.with_backend_settings(result.get("settings"))
        if method == "session/create":
            self.backend_session_id = backend_id
            self.supervisor.tell(Materialized(self.session_id, backend_id))
        else:
            root = (session.get("workspace") or {}).get("workspacePath") if isinstance(session, dict) else None
            if not self.root_known and isinstance(root, str):
                self.cwd, self.root_known = root, True
        self.backend.tell(RegisterRoute(self.backend_session_id, self.actor_ref))
        self.phase = "subscribing"
        self.subscribe_attempts = 0
        self._subscribe()

    def _resume_failure(self, error: Any) -> RpcError:
        """A resume the backend refused: a session it does not know is "not found" to the client."""
        unknown = isinstance(error, dict) and error.get("code") == SESSION_NOT_FOUND
        if unknown or not self.root_known:
            self.supervisor.tell(Forget(self.session_id))
            return session_not_found(self.session_id)
        return from_backend_error(error or {"message": "no session in the answer"}, "session/resume")

    def _subscribe(self) -> None:
        self.subscribe_attempts += 1
        params = {"sessionId": self.backend_session_id, "deliveryKind": "desktop-continuous", "includeSnapshot": False}
        self._call("session/subscribe", params, tag=("subscribe",), timeout=self.config.subscribe_timeout)

    def _subscribed(self, result: Any, error: Any) -> None:
        if self.phase != "subscribing":
            return
        if error is not None:
            if error.get("timeout") and self.subscribe_attempts < 2:
                self._subscribe()  # a real backend sometimes needs a second ask
                return
            self.phase = "lost"
            self.backend.tell(UnregisterRoute(self.backend_session_id, self.actor_ref))
            self._fail_waiters(from_backend_error(error, "session/subscribe"))
            return
        event_seq = result.get("eventSeq") if isinstance(result, dict) else None
        self.last_seq = event_seq if isinstance(event_seq, int) else 0
        self.phase = "live"
        buffered, self.reorder = self.reorder, {}
        self._accept_all([buffered[s] for s in sorted(buffered) if s > self.last_seq])
        self._became_live()

    def _lost(self) -> None:
        if self.phase in ("live", "subscribing", "resuming"):
            self.phase = "lost"
            self.backend.tell(UnregisterRoute(self.backend_session_id, self.actor_ref))
        elif self.phase == "materializing":
            self.phase = "placeholder"
        self.reorder.clear()
        self.gap_pending = False

    # -- prompts ------------------------------------------------------------------------------

    def handle_Prompt(self, message: Any) -> None:
        if self.phase == "closed":
            message.conn.tell(Reply(message.request_id, None, RpcError(
                INTERNAL_ERROR, f"Session {self.session_id} is closed").to_dict()))
            return
        command = None if message.prompt.attachments else commands.parse(message.prompt.text)
        if command is not None:
            self._run_command(message, command)
            return
        if self.current is not None:
            self.turns[self.current].tell(CancelTurn("preempted"))  # the latest prompt wins
            self.router.tell(CancelInteractions(self.session_id, "superseded by a new prompt"))
        key = self.next_key
        self.next_key += 1
        turn = Turn.start(
            key=key,
            session=self.actor_ref,
            backend=self.backend,
            router=self.router,
            session_id=self.session_id,
            conn=message.conn,
            request_id=message.request_id,
            prompt=message.prompt,
            clients=self.clients,
            terminal_output=supports_terminal_output(self.capabilities),
            message_id=uuid.uuid4().hex,
            config=self.config,
        )
        self.turns[key] = turn
        self.turn_requests[key] = (message.conn.actor_urn, message.request_id)
        self.current = key
        self._start_when_live(key)

    def _start_when_live(self, key: int) -> None:
        def start() -> None:
            if self.compacting:
                self.deferred_starts.append(key)  # runs when the compaction is over
            elif self.current == key:  # a preempted turn never starts
                self.turns[key].tell(StartTurn(self.backend_session_id))

        def fail(error: RpcError) -> None:
            if key in self.turns:
                self.turns[key].tell(FailTurn(error))

        self._when_live(start, fail)

    def handle_Evicted(self, message: Any) -> None:
        """The backend evicted the session under a turn's send: resume, then send again."""
        self._lost()
        self._start_when_live(message.key)

    def handle_CancelTurn(self, message: Any) -> None:
        if self.current is not None:
            self.turns[self.current].tell(CancelTurn(message.reason))
        self.router.tell(CancelInteractions(self.session_id, "cancelled by user"))

    def handle_BackendRequest(self, message: Any) -> None:
        """A backend question about this session: its card first, then the dialog."""
        if self.current is not None:
            self.turns[self.current].tell(ShowInteraction(message.frame))
            return
        tool_call_id, name, value, tool_call = interactions.dialog_tool_call(message.frame)
        if tool_call_id not in self.interaction_cards:
            self.interaction_cards.add(tool_call_id)
            self._deliver(TurnTranslator(message_id="ix").ensure_card(tool_call_id, name, value))
        self.router.tell(InteractionAsked(message.frame, self.session_id, self.backend_session_id, tool_call))

    def handle_CancelPromptRequest(self, message: Any) -> None:
        for key, request in self.turn_requests.items():
            if request == (message.conn.actor_urn, message.request_id):
                self.turns[key].tell(CancelTurn("request cancelled"))

    def handle_TurnSettled(self, message: Any) -> None:
        if self.current == message.key:
            self.current = None
        if message.saw_tools and self.phase == "live":
            self._request("session/read", {}, self._plan_answered, lambda error: None,
                          timeout=self.config.read_timeout)

    def handle_TurnDone(self, message: Any) -> None:
        turn = self.turns.pop(message.key, None)
        self.turn_requests.pop(message.key, None)
        if turn is not None:
            turn.stop(block=False)

    # -- backend traffic -----------------------------------------------------------------------

    def handle_BackendReply(self, message: Any) -> None:
        kind = message.tag[0]
        if self.phase == "closed" and kind in ("create", "resume", "subscribe", "gap"):
            return  # work in flight at teardown/close must not bring the session back
        if kind in ("send", "probe"):
            turn = self.turns.get(message.tag[1])
            if turn is not None:
                turn.tell(message)
        elif kind == "call":
            callbacks = self.calls.pop(message.tag[1], None)
            if callbacks is not None:
                on_result, on_error = callbacks
                if message.error is not None:
                    on_error(message.error)
                else:
                    on_result(message.result)
        elif kind == "create":
            self._created(message.result, message.error, "session/create")
        elif kind == "resume":
            self._created(message.result, message.error, "session/resume")
        elif kind == "subscribe":
            self._subscribed(message.result, message.error)
        elif kind == "gap":
            self._gap_answered(message.result)

    def handle_BackendLost(self, message: Any) -> None:
        if self.phase in ("live", "subscribing", "resuming"):
            self.phase = "lost"  # the next use resumes on a new backend process
        elif self.phase == "materializing":
            self.phase = "placeholder"
        self.reorder.clear()
        self.gap_pending = False
        self._fail_waiters(RpcError(INTERNAL_ERROR, message.reason))
        for turn in list(self.turns.values()):
            turn.tell(BackendLost(message.reason))

    # -- the end ------------------------------------------------------------------------------------

    def handle_Teardown(self, message: Any) -> None:
        """Cancel every turn (each stops its backend turn) before the backend goes away."""
        self.phase = "closed"
        self.router.tell(CancelInteractions(self.session_id, "the session was closed"))
        futures = [turn.ask(CancelTurn("teardown"), block=False) for turn in self.turns.values()]
        for future in futures:
            try:
                future.get(timeout=1.0)
            except Exception:  # noqa: BLE001 - a dead turn has nothing left to stop
                pass
        self._fail_waiters(RpcError(INTERNAL_ERROR, f"Session {self.session_id} is closed"))
        try:  # tasks belong to the session: their cards fail with it
            self.tasks.ask(CloseTasks(), timeout=1.0)
        except Exception:  # noqa: BLE001
            pass
        if self.backend_session_id:
            self.backend.tell(UnregisterRoute(self.backend_session_id, self.actor_ref))

    def on_stop(self) -> None:
        for turn in self.turns.values():
            turn.stop(block=False)
        self.turns.clear()
        if self.tasks is not None:
            self.tasks.stop(block=False)

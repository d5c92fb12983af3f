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
"""

from __future__ import annotations

import logging
import uuid
from typing import Any, Callable

import gevent

from protocol import events as ev
from protocol import commands, framing, interactions, jsonrpc, tools
from protocol.errors import (
    INTERNAL_ERROR,
    SESSION_NOT_FOUND,
    RpcError,
    from_backend_error,
    invalid_params,
    is_not_active,
    session_not_found,
)
from protocol.handshake import supports_terminal_output
from protocol.history import message_count, replay_updates
from protocol.session_config import SessionSettings, config_options, session_state, validate_config_value
from protocol.translator import TurnTranslator, agent_text
from protocol.usage import context_usage_update, projection_usage_update

from .base import BridgeActor, deliver, safe_tell
from .config import Config
from .messages import (
    BackendCall,
    BackendLost,
    CloseTasks,
    CancelInteractions,
    CancelTurn,
    ClientAttached,
    Deliver,
    FailTurn,
    Forget,
    Forked,
    GapTimeout,
    HistoryPoll,
    HoldSession,
    InteractionAsked,
    Materialized,
    RegisterRoute,
    ReleaseSession,
    Reply,
    ShowInteraction,
    StartTurn,
    TaskCancelled,
    TaskEvents,
    TurnEvents,
    UnregisterRoute,
)
from .background_tasks import BackgroundTasks
from .turn import Turn

log = logging.getLogger(__name__)

PLAN_STATUSES = {"pending", "in_progress", "completed"}
PLAN_PRIORITIES = {"high", "medium", "low"}
FINAL_TASK_STATUSES = {"completed", "failed", "cancelled", "killed"}
HISTORY_POLL_INTERVAL = 0.1
HISTORY_POLL_LIMIT = 20  # reads; after a resume the history fills up for a moment


def workspace(cwd: str) -> dict[str, str]:
    return {"workspacePath": cwd, "workspaceKey": cwd}


def plan_entries(todos: Any) -> list[dict[str, str]] | None:
    if not isinstance(todos, list):
        return None
    entries = []
    for todo in todos:
        if isinstance(todo, dict) and isinstance(todo.get("content"), str):
            status = todo.get("status") if todo.get("status") in PLAN_STATUSES else "pending"
            priority = todo.get("priority") if todo.get("priority") in PLAN_PRIORITIES else "medium"
            entries.append({"content": todo["content"], "status": status, "priority": priority})
    return entries


class Routed:
    """Where one batch of applied events goes: the current Turn, or BackgroundTasks."""

    __slots__ = ("turn", "tasks")

    def __init__(self) -> None:
        self.turn: list[dict[str, Any]] = []
        self.tasks: list[tuple[dict[str, Any], bool | None]] = []


def encode_updates(session_id: str, updates: list[dict[str, Any]]) -> bytes:
    return b"".join(framing.encode(jsonrpc.session_update(session_id, update)) for update in updates)


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

    # -- load / resume ---------------------------------------------------------------------------

    def handle_Attach(self, message: Any) -> None:
        if self.root_known and message.cwd != self.cwd:
            message.conn.tell(Reply(message.request_id, None, invalid_params(
                "cwd", f"does not match the session's workspace root {self.cwd}").to_dict()))
            return
        if message.replay:
            message.conn.tell(HoldSession(self.session_id))
        if self.backend_session_id is None:
            self._attached(message, [])  # never used: nothing to resume, nothing to replay
            return

        def fail(error: RpcError) -> None:
            if message.replay:
                message.conn.tell(ReleaseSession(self.session_id, b""))
            message.conn.tell(Reply(message.request_id, None, error.to_dict()))

        def live() -> None:
            if not self.root_known or message.cwd == self.cwd:
                if message.replay:
                    self._replay_to(message)
                else:
                    self._attached(message, None)
            else:
                fail(invalid_params("cwd", f"does not match the session's workspace root {self.cwd}"))

        self._when_live(live, fail)

    def _attached(self, message: Any, replay: list[dict[str, Any]] | None) -> None:
        if replay is not None:
            message.conn.tell(ReleaseSession(self.session_id, encode_updates(self.session_id, replay)))
        message.conn.tell(Reply(message.request_id, session_state(self.settings), None))
        self.handle_Announce(message)
        self.router.tell(ClientAttached(self.session_id, message.conn))  # open dialogs join it too

    def _replay_to(self, message: Any) -> None:
        self.replays.append(message)
        if self.history is None:  # one history read serves every load that waits for it
            self.history = {"count": -1, "reads": 0, "messages": []}
            self._read_history()

    def _read_history(self) -> None:
        self.history["reads"] += 1
        self._request("session/messages", {}, self._history_read, self._history_failed,
                      timeout=self.config.messages_timeout)

    def _history_read(self, result: Any) -> None:
        messages = result.get("messages") if isinstance(result, dict) else None
        count = message_count(messages)
        history = self.history
        if count != history["count"] and history["reads"] < HISTORY_POLL_LIMIT:
            # Still filling in after a resume: read again until it stops growing.
            history["count"], history["messages"] = count, messages
            gevent.spawn_later(HISTORY_POLL_INTERVAL, safe_tell, self.actor_ref, HistoryPoll())
            return
        history["messages"] = messages
        self._request("session/read", {}, self._history_state, lambda error: self._history_state({}),
                      timeout=self.config.read_timeout)

    def handle_HistoryPoll(self, message: Any) -> None:
        if self.history is not None:
            self._read_history()

    def _history_state(self, result: Any) -> None:
        replay = replay_updates(self.history["messages"])
        if isinstance(result, dict):
            entries = plan_entries(result.get("todos"))
            if entries:
                self.plan = entries
                replay.append({"sessionUpdate": "plan", "entries": entries})
            self.settings = self.settings.with_backend_settings(result.get("settings"))
            usage = projection_usage_update(result.get("projection"))
            if usage:
                replay.append(usage)
        self.history = None
        waiting, self.replays = self.replays, []
        for message in waiting:
            self._attached(message, replay)

    def _history_failed(self, error: Any) -> None:
        self.history = None
        waiting, self.replays = self.replays, []
        failure = from_backend_error(error, "session/messages")
        for message in waiting:
            message.conn.tell(ReleaseSession(self.session_id, b""))
            message.conn.tell(Reply(message.request_id, None, failure.to_dict()))

    # -- settings ---------------------------------------------------------------------------------

    def handle_SetSetting(self, message: Any) -> None:
        def done(settings_answer: dict[str, Any]) -> None:
            answer = {"configOptions": config_options(self.settings)} if message.answer == "config" else {}
            message.conn.tell(Reply(message.request_id, answer, None))

        def fail(error: RpcError) -> None:
            message.conn.tell(Reply(message.request_id, None, error.to_dict()))

        self._set_setting(message.config_id, message.value, done, fail)

    def _set_setting(self, config_id: str, value: Any, on_done: Callable[[Any], None],
                     on_error: Callable[[RpcError], None]) -> None:
        try:
            config_id, value = validate_config_value(self.settings, config_id, value)
        except RpcError as exc:
            on_error(exc)
            return
        if config_id == "mode":
            method, params = "session/setMode", {"mode": value}
        elif config_id == "model":
            method, params = "session/setModel", {"model": self.settings.model_ref(value)}
        else:
            method, params = "session/setThoughtLevel", {"thoughtLevel": value}

        def done(result: Any) -> None:
            before = self.settings
            self.settings = self.settings.with_setting(config_id, value).with_backend_settings(
                result.get("settings") if isinstance(result, dict) else None)
            on_done(result)
            self._announce_settings(before)

        def fail(error: Any) -> None:
            on_error(error if isinstance(error, RpcError) else from_backend_error(error, method))

        self._when_live(lambda: self._request(method, params, done, fail), fail)

    # -- extension methods and slash commands ------------------------------------------------------

    def handle_Extension(self, message: Any) -> None:
        name, params = message.name, message.params

        def reply(result: Any) -> None:
            message.conn.tell(Reply(message.request_id, result if isinstance(result, dict) else {}, None))

        def fail(error: Any) -> None:
            failure = error if isinstance(error, RpcError) else from_backend_error(error, name)
            message.conn.tell(Reply(message.request_id, None, failure.to_dict()))

        if name == "session/setMode":
            self._set_setting("mode", params.get("mode"), reply, fail)
        elif name == "session/setThoughtLevel":
            self._set_setting("thought", params.get("thoughtLevel"), reply, fail)
        elif name == "session/fork":
            self._fork(message.conn, message.request_id, params.get("target"), as_command=False, on_error=fail)
        else:
            self._extension(name, params, reply, fail)

    def _extension(self, name: str, params: dict[str, Any], on_result: Callable[[Any], None],
                   on_error: Callable[[Any], None]) -> None:
        params = {key: value for key, value in params.items() if key != "sessionId"}
        timeout = None
        if name == "session/compact":
            timeout = self.config.compact_timeout
            self.compacting = True  # prompts wait for the compaction's internal turn
            on_result, on_error = self._after_compaction(on_result), self._after_compaction(on_error)
        elif name == "session/cancelBackgroundTask":
            task_id = params.get("taskId")
            answer = on_result

            def on_result(result: Any) -> None:
                self.tasks.tell(TaskCancelled(task_id))
                answer(result)

        self._when_live(lambda: self._request(name, params, on_result, on_error, timeout=timeout), on_error)

    def _after_compaction(self, then: Callable[[Any], None]) -> Callable[[Any], None]:
        def finished(value: Any) -> None:
            self.compacting = False
            deferred, self.deferred_starts = self.deferred_starts, []
            for key in deferred:
                if self.current == key:
                    self.turns[key].tell(StartTurn(self.backend_session_id))
            then(value)

        return finished

    def _fork(self, conn: Any, request_id: Any, target: Any, as_command: bool,
              on_error: Callable[[Any], None]) -> None:
        def forked(result: Any) -> None:
            backend_id = None
            if isinstance(result, dict):
                backend_id = result.get("forkedSessionId") or (result.get("session") or {}).get("sessionId")
            if not isinstance(backend_id, str):
                on_error({"message": "the backend did not name the forked session"})
                return
            self.supervisor.tell(Forked(conn, request_id, self.session_id, backend_id, self.cwd,
                                        self.mcp_servers, as_command))

        params = {"target": target if isinstance(target, dict) else {"kind": "latestCheckpoint"}}
        self._when_live(lambda: self._request("session/fork", params, forked, on_error), on_error)

    def _run_command(self, message: Any, command: commands.Command) -> None:
        """A prompt that is one of our slash commands: run it, answer as an agent message."""
        def say(text: str) -> None:
            self._deliver([agent_text(text, uuid.uuid4().hex)])
            message.conn.tell(Reply(message.request_id, {"stopReason": "end_turn"}, None))

        def failed(error: Any) -> None:
            text = error.message if isinstance(error, RpcError) else str((error or {}).get("message") or error)
            say(f"/{command.name} failed: {text}")

        name, argument = command.name, command.argument
        if name == "compact":
            self._extension("session/compact", {}, lambda result: say("Conversation compacted."), failed)
        elif name == "goal":
            self._extension("session/goal", commands.goal_from_command(argument),
                            lambda result: say(commands.describe(result)), failed)
        elif name == "fork":
            self._fork(message.conn, message.request_id, None, as_command=True, on_error=failed)
        else:
            config_id = "thought" if name == "thought" else name
            if not argument:
                current = {"mode": self.settings.mode, "model": self.settings.model, "thought": self.settings.thought}
                say(f"Current {name}: {current[config_id]}")
                return
            self._set_setting(config_id, argument, lambda result: say(f"{name.capitalize()} set to {argument}."),
                              failed)

    def handle_Announce(self, message: Any) -> None:
        """After a new/load/resume answer (never before it): the commands this session offers."""
        message.conn.tell(Deliver(self.session_id, encode_updates(
            self.session_id, [commands.available_commands_update()])))

    def _announce_settings(self, before: SessionSettings) -> None:
        updates = []
        if before.mode != self.settings.mode:
            updates.append({"sessionUpdate": "current_mode_update", "currentModeId": self.settings.mode})
        if before != self.settings:
            updates.append({"sessionUpdate": "config_option_update", "configOptions": config_options(self.settings)})
        self._deliver(updates)

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

    def handle_SessionEvents(self, message: Any) -> None:
        if self.phase != "live":
            for event in message.events:
                seq = ev.seq(event)
                if seq is not None:
                    self.reorder[seq] = event
            return
        self._accept_all(message.events)

    def _accept_all(self, events: list[dict[str, Any]]) -> None:
        routed = Routed()
        for event in events:
            seq = ev.seq(event)
            if seq is None:
                self._apply(event, routed)
            elif seq <= self.last_seq:
                continue  # duplicate or already applied
            elif seq == self.last_seq + 1:
                self.last_seq = seq
                self._apply(event, routed)
                self._drain(routed)
            else:
                self.reorder[seq] = event
                self._request_gap()
        self._flush(routed)

    def _flush(self, routed: "Routed") -> None:
        if routed.turn and self.current is not None:
            self.turns[self.current].tell(TurnEvents(routed.turn))
        if routed.tasks:
            self.tasks.tell(TaskEvents(routed.tasks))

    def _drain(self, routed: "Routed") -> None:
        while self.last_seq + 1 in self.reorder:
            self.last_seq += 1
            self._apply(self.reorder.pop(self.last_seq), routed)

    def _request_gap(self) -> None:
        if self.gap_pending:
            return
        self.gap_pending = True
        params = {
            "sessionId": self.backend_session_id,
            "deliveryKind": "desktop-continuous",
            "includeSnapshot": False,
            "afterSeq": self.last_seq,
        }
        self._call("session/subscribe", params, tag=("gap",), timeout=self.config.subscribe_timeout)
        gevent.spawn_later(self.config.gap_wait, safe_tell, self.actor_ref, GapTimeout(self.last_seq))

    def _gap_answered(self, result: Any) -> None:
        self.gap_pending = False
        before = self.last_seq
        missed = result.get("events") if isinstance(result, dict) else None
        if isinstance(missed, list):
            self._accept_all([e for e in missed if isinstance(e, dict)])
        if self.reorder:
            if self.last_seq > before:
                self._request_gap()  # filled that hole; a later one is still open
            else:
                self._skip_gap()  # the backend does not have what is missing

    def handle_GapTimeout(self, message: Any) -> None:
        if self.gap_pending and self.last_seq == message.after_seq and self.reorder:
            self.gap_pending = False
            self._skip_gap()

    def _skip_gap(self) -> None:
        """The backend could not fill a hole: apply what is buffered, in order."""
        first = min(self.reorder)
        log.warning("session %s: events %d..%d never arrived; skipping the hole",
                    self.session_id, self.last_seq + 1, first - 1)
        self.last_seq = first - 1
        routed = Routed()
        self._drain(routed)
        self._flush(routed)
        if self.reorder:
            self._request_gap()

    def _apply(self, event: dict[str, Any], routed: "Routed") -> None:
        kind = event.get("type")
        body = ev.payload(event)
        if kind == "session.updated":
            if "taskId" in body:
                tool_call_id = body.get("toolCallId")
                routed.tasks.append((event, self.launch_cards.get(tool_call_id)))
                if str(body.get("status")) in FINAL_TASK_STATUSES:
                    self.launch_cards.pop(tool_call_id, None)
            elif self.current is not None:
                routed.turn.append(event)  # keeps its place among the turn's updates
            else:
                update = context_usage_update(body)
                if update:
                    self._deliver([update])
            return
        turn_id = ev.turn_id(event)
        if ev.is_background_start(event):
            if turn_id:
                self.background_turns.add(turn_id)
            routed.tasks.append((event, None))
            return
        if turn_id is not None and turn_id in self.background_turns:
            if kind in ev.TURN_END_TYPES:
                self.background_turns.discard(turn_id)
            routed.tasks.append((event, None))
            return
        if kind in ("turn.terminal", "turn.steerDrained"):
            return
        if kind in ("model.streaming", "tool.updated"):
            self._track_launch(body)
        routed.turn.append(event)

    def _track_launch(self, body: dict[str, Any]) -> None:
        """Card reuse: remember background Bash launches whose card must stay open."""
        tool_call_id = body.get("toolCallId")
        if not isinstance(tool_call_id, str):
            return
        tool_input = body.get("input")
        if body.get("toolName") == "Bash" and isinstance(tool_input, dict) and tool_input.get("run_in_background"):
            self.background_calls.add(tool_call_id)
        elif body.get("kind") == "result" and tool_call_id in self.background_calls:
            self.background_calls.discard(tool_call_id)
            if not tools.result_failed(body.get("result")):
                self.launch_cards[tool_call_id] = supports_terminal_output(self.capabilities)

    def handle_SessionNotice(self, message: Any) -> None:
        params = message.params
        if message.method == "state.updated":
            before = self.settings
            self.settings = self.settings.with_patch(params.get("patch"))
            self._announce_settings(before)
        elif message.method == "session.titleUpdated" and isinstance(params.get("title"), str):
            self._deliver([{"sessionUpdate": "session_info_update", "title": params["title"]}])

    def _plan_answered(self, result: Any) -> None:
        entries = plan_entries(result.get("todos")) if isinstance(result, dict) else None
        if entries is not None and entries != self.plan and (entries or self.plan):
            self.plan = entries
            self._deliver([{"sessionUpdate": "plan", "entries": entries}])

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

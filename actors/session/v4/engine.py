"""The v4 engine path's ``EnginePath``: the top layer of ``V4Path`` (docs/v4.md, "The v4 backend path").

``V4Subscription`` (the engine session, its subscriptions and frames) and ``V4Path`` (prompts,
cancels, dialogs, the end) do the work; this layer answers the Session's ``EnginePath`` calls
that they do not name themselves: a prompt held from its arrival, an extension method's handler
(its ``on_v4`` method, given this path as its ``V4Surface``), and the settings, compaction and fork
commands ``Controls`` ask for.
Imported only by a Session on ``ZCODE_ACP_ENGINE_API=v4`` (``paths.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import gevent

from zcode_acp.protocol.extension_calls import EngineCall
from zcode_acp.protocol.content import BackendPrompt
from zcode_acp.protocol.errors import INVALID_PARAMS, METHOD_NOT_FOUND, RpcError, cli_without_v4, from_backend_error
from zcode_acp.protocol.i18n import t
from zcode_acp.protocol.v4 import commands as v4
from zcode_acp.protocol.v4.row_actions import Action

from zcode_acp.actors.messages import ErrorDict, Json, Ref
from zcode_acp.actors.session.extensions.handler import ExtensionRequest, Handler
from zcode_acp.actors.session.compaction import COMPACT_BUSY_LIMIT, COMPACT_BUSY_RETRY
from zcode_acp.actors.session.path import OnError, OnResult
from zcode_acp.actors.session.v4.path import V4Path
from zcode_acp.actors.session.v4.settings import fork_target, settings_command


class V4Engine(V4Path):
    speaks_zcode_protocol = True  # an engine with a v4 data plane is 0.16+: the removed methods are refused
    resolves_dialogs = True  # resolveInteraction first, then the engine's legacy request (V4Path.resolve)

    def create_refused(self, error: ErrorDict | None) -> RpcError:
        if (error or {}).get("code") == METHOD_NOT_FOUND:
            return cli_without_v4(error, self.session.config.lang)  # asked for v4 of a CLI without it
        return from_backend_error(error or {"message": "no session id in the answer"}, "session/create")

    def events(self, events: list[dict[str, Any]], token: object) -> None:
        """A v4 session reads its conversation topic, not the legacy event stream."""

    def submit(self, conn: Ref, request_id: Json, prompt: BackendPrompt) -> None:
        """The engine's inputRouting decides what a prompt during a turn does (no preemption here)."""
        owed = self.hold(conn, request_id)
        self.session.when_live(lambda: self.prompt(owed, prompt.text, prompt.attachments),
                               lambda error: self.held_failed(owed, error))

    def leave_memory(self) -> None:
        self.end_subscriptions()  # each topic unsubscribed, the connection closed (v4/close.py)

    def compaction_over(self) -> None:
        self.release_held()  # the prompts our compaction held (this path keeps them, not Turns)

    # -- extensions, settings, compaction, fork, rename -------------------------------------------

    def run_extension(self, handler: Handler[Any], call: Any, request: ExtensionRequest) -> None:
        handler.on_v4(call, request, self)  # this path is the handler's V4Surface

    def when_live(self, action: Callable[[], None], on_error: OnError) -> None:
        self.session.when_live(action, on_error)

    def read_queue(self, on_result: OnResult, on_error: OnError) -> None:
        self.extras.read_queue(on_result, on_error)

    def read_file_changes(self, row_id: int | None, on_result: OnResult, on_error: OnError) -> None:
        self.extras.read_file_changes(row_id, on_result, on_error)

    def send_command(self, build: Callable[[str], v4.Command], on_result: OnResult, on_error: OnError,
                     on_ack: Callable[[v4.CommandAck], None] | None = None) -> None:
        self.extras.send(build, on_result, on_error, on_ack)

    def send_row_command(self, action: Action, row_id: int | None,
                         build: Callable[[str, v4.RowTarget], v4.Command], on_result: OnResult,
                         on_error: OnError) -> None:
        self.extras.send_row(action, row_id, build, on_result, on_error)

    def set_setting(self, config_id: str, value: Json, done: OnResult, fail: OnError) -> None:
        """``switchCollaborationMode`` / ``switchModelConfig`` (v4/settings.py); ``noop`` = already so."""
        engine_config = self.feed.state.state.get("config") if self.feed is not None else None
        try:
            command = settings_command(str(self.session.backend_session_id), self.session.settings.current,
                                       engine_config if isinstance(engine_config, dict) else None, config_id, value)
        except RpcError as exc:
            fail(exc)
            return
        self.commands.send(command, lambda ack, error: fail(error) if error is not None else done({}))

    def compact(self, call: EngineCall, answered: OnResult, failed: OnError, timeout: float) -> None:
        """The engine's compact command; its end is the conversation's (``compaction_ended``)."""
        deadline = time.monotonic() + COMPACT_BUSY_LIMIT
        self.session.when_live(lambda: self._compact(answered, failed, deadline), failed)

    def _compact(self, answered: OnResult, failed: OnError, deadline: float) -> None:
        """``v4/command compact``: accepted means it runs (its end is the turn's end, ``compaction_ended``);
        refused while a turn runs, tried again each second as on the legacy path, until the allowance ends."""
        def acked(ack: v4.CommandAck | None, error: RpcError | None) -> None:
            if error is None:
                answered({"compact": {"state": "accepted", "operationId": ack.command_id if ack else ""}})
            elif ack is not None and ack.status == "rejected" and self.turn_running() and \
                    time.monotonic() < deadline:
                gevent.spawn_later(COMPACT_BUSY_RETRY, lambda: self.session.when_live(
                    lambda: self._compact(answered, failed, deadline), failed))
            else:
                failed(error)

        self.commands.send(v4.compact(str(self.session.backend_session_id)), acked)

    def fork(self, call: EngineCall, forked: OnResult, forked_unused: Callable[[], None],
             on_error: OnError) -> None:
        """The engine's forkAssistant, from the newest settled assistant row."""
        rows = self.feed.state.rows if self.feed is not None else ()
        target = fork_target(rows)
        if target is None and not any(row.get("kind") == "userInput" for row in rows):
            # Nothing said yet: a fork of it is a new session with its settings, whose engine session
            # its first prompt makes (as session/new's), as the legacy session/fork forks an unused one.
            forked_unused()
            return
        if target is None:
            on_error(RpcError(INVALID_PARAMS, t(self.session.settings.current.lang, "error.nothing_to_fork")))
            return
        command = v4.fork_assistant(str(self.session.backend_session_id), target)

        def acked(ack: v4.CommandAck | None, error: RpcError | None) -> None:
            if error is not None:
                on_error(error)
                return
            result = ack.result if ack is not None and isinstance(ack.result, dict) else {}
            forked({"forkedSessionId": result.get("sessionId")})  # the ack names the new session

        self.commands.send(command, acked)

    def rename(self, title: str, on_done: Callable[[], None], on_error: OnError) -> bool:
        """Through this session's own ``V4Commands`` (acks judged there)."""
        self.extras.send(lambda sid: v4.rename_session(sid, title), lambda result: on_done(), on_error)
        return True

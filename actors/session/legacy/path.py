"""The legacy engine path: ``session/*`` methods and the ``seq``-ordered event stream.

The ``EnginePath`` of a Session on ``ZCODE_ACP_ENGINE_API=legacy`` (the default; docs/architecture.md,
"The Session's engine paths"). What it runs is mostly the Session's own machinery, which stays the
Session's whichever path feeds it: each event goes into the Session's ``Sequencer`` and from there
to the current Turn, BackgroundTasks or the Session's updates; each prompt becomes a Turn actor
(the Session preempts the current one). This object adds the legacy methods for what the v4 path
does with commands: create, subscribe, settings, a compaction retried while the engine is busy,
fork.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import gevent

from zcode_acp.protocol.extension_calls import EngineCall
from zcode_acp.protocol.content import BackendPrompt
from zcode_acp.protocol.errors import RpcError, from_backend_error, is_busy
from zcode_acp.protocol.sessions import workspace

from zcode_acp.actors.messages import ErrorDict, Json, Ref, V4Expire, V4Resolve
from zcode_acp.actors.session.extensions.handler import ExtensionRequest, Handler
from zcode_acp.actors.session.compaction import COMPACT_BUSY_LIMIT, COMPACT_BUSY_RETRY
from zcode_acp.actors.session.path import OnError, OnResult, SessionPort, Then, Updates


class LegacyPath:
    """The legacy path's ``EnginePath`` (the Session's Turns, sequencer and router do the rest)."""

    # Every live Session has one: slots, not a __dict__ (docs/performance.md, "Idle sessions").
    __slots__ = ("port",)
    speaks_zcode_protocol = False  # the 0.16 engine shows it is 0.16+ in its answers (EngineSurface)
    resolves_dialogs = False  # the router answers the engine's request itself

    def __init__(self, port: SessionPort) -> None:
        self.port = port

    @property
    def busy(self) -> bool:
        return False  # what a legacy session owes is its Turns' and tasks', which the Session counts

    # -- making and subscribing the engine session -----------------------------------------------

    def create(self, workspace_path: str, mcp_servers: list[Any], done: Then) -> None:
        params: dict[str, Any] = {"workspace": workspace(workspace_path), "mode": self.port.settings.current.mode}
        if mcp_servers:
            params["mcpServers"] = mcp_servers
        self.port.call("session/create", params, done)

    def create_refused(self, error: ErrorDict | None) -> RpcError:
        return from_backend_error(error or {"message": "no session id in the answer"}, "session/create")

    def subscribe(self, done: Then) -> None:
        params = {"sessionId": self.port.backend_session_id, "deliveryKind": "desktop-continuous",
                  "includeSnapshot": False}
        self.port.call("session/subscribe", params, done, timeout=self.port.config.subscribe_timeout)

    # -- what the engine says ---------------------------------------------------------------------

    def events(self, events: list[dict[str, Any]], token: object) -> None:
        self.port.sequence(events, token)

    def frames(self, frames: list[dict[str, Any]]) -> None:
        """A legacy session subscribes to no topic: nothing of it comes as frames."""

    def expire(self, message: V4Expire) -> None:
        """No timers of its own: its Turns keep theirs."""

    def resolve(self, message: V4Resolve) -> None:
        self.port.answer_backend(message.generation, message.request_ids, message.result)

    # -- prompts, turns, cards --------------------------------------------------------------------

    def submit(self, conn: Ref, request_id: Json, prompt: BackendPrompt) -> None:
        self.port.run_turn(conn, request_id, prompt)

    def cancel(self) -> None:
        """The Session cancels its current Turn, which stops the engine's turn."""

    def cancel_request(self, conn: Ref, request_id: Json, error: RpcError) -> bool:
        return False  # every prompt is a Turn's: the Session finds it

    def turn_running(self) -> bool:
        return False  # the Session's adopted Turn says so

    def declines_dialogs(self) -> bool:
        return False  # a cancelled Turn still stopping declines its own late question (the Session tells it)

    def owns_card(self, card_id: str) -> bool:
        return False  # a Turn's translator or the Session's cards between turns own every card

    def with_countdown(self, frame: dict[str, Any], tool_call: dict[str, Any]) -> dict[str, Any]:
        return tool_call  # the legacy engine runs no countdown on a question

    def compaction_over(self) -> None:
        """The Turns our compaction held are the Session's: it starts them."""

    # -- extensions, settings, compaction, fork, rename -------------------------------------------

    def run_extension(self, handler: Handler[Any], call: Any, request: ExtensionRequest) -> None:
        handler.on_legacy(call, request)  # a v4-only one refuses -32601 by itself (V4Only)

    def set_setting(self, config_id: str, value: Json, done: OnResult, fail: OnError) -> None:
        if config_id == "mode":
            method, params = "session/setMode", {"mode": value}
        elif config_id == "model":
            method, params = "session/setModel", {"model": self.port.settings.current.model_ref(value)}
        else:
            method, params = "session/setThoughtLevel", {"thoughtLevel": value}
        self.port.request(method, params, done, fail)

    def compact(self, call: EngineCall, answered: OnResult, failed: OnError, timeout: float) -> None:
        retry = self._retry_while_busy(call, answered, failed, timeout, time.monotonic() + COMPACT_BUSY_LIMIT)
        self.port.when_live(lambda: self.port.request(call.method, call.params, answered, retry, timeout=timeout),
                            retry)

    def _retry_while_busy(self, call: EngineCall, on_result: OnResult, on_error: OnError,
                          timeout: float, deadline: float) -> OnError:
        """The 0.16 engine answers a compaction -32010 while a turn holds the session: try again."""
        def failed(error: Any) -> None:
            if isinstance(error, dict) and is_busy(error) and time.monotonic() < deadline:
                retry = self._retry_while_busy(call, on_result, on_error, timeout, deadline)
                gevent.spawn_later(COMPACT_BUSY_RETRY, lambda: self.port.when_live(
                    lambda: self.port.request(call.method, call.params, on_result, retry, timeout=timeout), retry))
                return
            on_error(error)

        return failed

    def fork(self, call: EngineCall, forked: OnResult, forked_unused: Callable[[], None],
             on_error: OnError) -> None:
        """The engine's ``session/fork`` (which forks an unused session too)."""
        self.port.request(call.method, call.params, forked, on_error)

    def rename(self, title: str, on_done: Callable[[], None], on_error: OnError) -> bool:
        return False  # Controls rename: the engine's v4/command if it speaks it, else the bridge keeps the title

    # -- load, loss, the end ----------------------------------------------------------------------

    def replay(self) -> Updates | None:
        return None  # the Session reads the engine's history

    def lost(self, error: RpcError) -> None:
        """Its Turns close their own cards; the Session tells them."""

    def leave_memory(self) -> None:
        """The Session unregisters its route: the legacy engine has no subscription to end."""

    def close(self) -> None:
        """The Session cancels its Turns."""

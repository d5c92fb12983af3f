"""The Session's controls: settings changes, extension methods, slash commands.

``session/set_mode`` / ``set_config_option``, the ``_session/*`` extension
methods (one table in ``protocol/commands.py``), and the slash commands the
bridge runs itself (``/compact``, ``/goal``, ``/fork``, ``/mode``, …). A
compaction holds the session: prompts that arrive meanwhile start after it.

It works through a narrow port (``SessionPort``), which the Session actor
implements; tests give it a fake one.
"""

from __future__ import annotations

import uuid
from typing import Any, Protocol
from collections.abc import Callable

from zcode_acp.protocol import commands
from zcode_acp.protocol.errors import RpcError, from_backend_error
from zcode_acp.protocol.session_config import config_options, validate_config_value
from zcode_acp.protocol.translator import agent_text

from zcode_acp.actors.session.settings import Settings

OnResult = Callable[[Any], None]
OnError = Callable[[Any], None]


class SessionPort(Protocol):
    settings: Settings
    compact_timeout: float

    def when_live(self, action: Callable[[], None], on_error: Callable[[RpcError], None]) -> None: ...

    def request(self, method: str, params: dict[str, Any], on_result: OnResult, on_error: OnError,
                timeout: float | None = None) -> None: ...

    def deliver(self, updates: list[dict[str, Any]]) -> None: ...

    def fork_made(self, backend_session_id: str, reply_to: Any, request_id: Any, as_command: bool) -> None: ...

    def task_cancelled(self, task_id: str) -> None: ...

    def start_turns(self, keys: list[int]) -> None: ...


def as_rpc_error(error: Any, method: str) -> RpcError:
    return error if isinstance(error, RpcError) else from_backend_error(error, method)


class Controls:
    def __init__(self, port: SessionPort) -> None:
        self.port = port
        self.compacting = False  # a compaction's internal turn holds the session
        self.deferred: list[int] = []  # turns that start when it is over

    def hold_turn(self, key: int) -> bool:
        """True if a compaction is running: the turn starts after it."""
        if self.compacting:
            self.deferred.append(key)
        return self.compacting

    # -- settings -----------------------------------------------------------------------------

    def set_setting(self, config_id: str, value: Any, on_done: OnResult, on_error: OnError) -> None:
        settings = self.port.settings
        try:
            config_id, value = validate_config_value(settings.current, config_id, value)
        except RpcError as exc:
            on_error(exc)
            return
        if config_id == "mode":
            method, params = "session/setMode", {"mode": value}
        elif config_id == "model":
            method, params = "session/setModel", {"model": settings.current.model_ref(value)}
        else:
            method, params = "session/setThoughtLevel", {"thoughtLevel": value}

        def done(result: Any) -> None:
            changed = settings.current.with_setting(config_id, value).with_backend_settings(
                result.get("settings") if isinstance(result, dict) else None)
            self.port.deliver(settings.change(changed))  # before the answer: a turn's updates precede it
            on_done(result)

        def fail(error: Any) -> None:
            on_error(as_rpc_error(error, method))

        self.port.when_live(lambda: self.port.request(method, params, done, fail), fail)

    def config_answer(self) -> dict[str, Any]:
        return {"configOptions": config_options(self.port.settings.current)}

    # -- extension methods ---------------------------------------------------------------------

    def extension(self, name: str, call: commands.ExtensionCall, reply_to: Any, request_id: Any,
                  on_result: OnResult, on_error: OnError) -> None:
        fail = lambda error: on_error(as_rpc_error(error, name))  # noqa: E731
        if call.setting is not None:
            self.set_setting(call.setting[0], call.setting[1], on_result, fail)
        elif call.fork:
            self._fork(call, reply_to, request_id, as_command=False, on_error=fail)
        else:
            self._call(call, on_result, fail)

    def _call(self, call: commands.ExtensionCall, on_result: OnResult, on_error: OnError) -> None:
        timeout = None
        if call.long_running:
            timeout = self.port.compact_timeout
            self.compacting = True  # prompts wait for the compaction's internal turn
            on_result, on_error = self._after_compaction(on_result), self._after_compaction(on_error)
        elif call.cancels_task is not None:
            task_id, answer = call.cancels_task, on_result

            def on_result(result: Any) -> None:
                self.port.task_cancelled(task_id)
                answer(result)

        self.port.when_live(lambda: self.port.request(call.method, call.params, on_result, on_error,
                                                      timeout=timeout), on_error)

    def _after_compaction(self, then: Callable[[Any], None]) -> Callable[[Any], None]:
        def finished(value: Any) -> None:
            self.compacting = False
            deferred, self.deferred = self.deferred, []
            self.port.start_turns(deferred)
            then(value)

        return finished

    def _fork(self, call: commands.ExtensionCall, reply_to: Any, request_id: Any, as_command: bool,
              on_error: OnError) -> None:
        def forked(result: Any) -> None:
            backend_id = None
            if isinstance(result, dict):
                backend_id = result.get("forkedSessionId") or (result.get("session") or {}).get("sessionId")
            if not isinstance(backend_id, str):
                on_error({"message": "the backend did not name the forked session"})
                return
            self.port.fork_made(backend_id, reply_to, request_id, as_command)

        self.port.when_live(lambda: self.port.request(call.method, call.params, forked, on_error), on_error)

    # -- slash commands ---------------------------------------------------------------------------

    def command(self, command: commands.Command, reply_to: Any, request_id: Any,
                answer: Callable[[dict[str, Any]], None]) -> None:
        """A prompt that is one of our slash commands: run it, answer as an agent message."""
        def say(text: str) -> None:
            self.port.deliver([agent_text(text, uuid.uuid4().hex)])
            answer({"stopReason": "end_turn"})

        def failed(error: Any) -> None:
            text = error.message if isinstance(error, RpcError) else str((error or {}).get("message") or error)
            say(f"/{command.name} failed: {text}")

        name, argument = command.name, command.argument
        if name == "compact":
            self._call(commands.extension_call("session/compact", {}), lambda result: say("Conversation compacted."),
                       failed)
        elif name == "goal":
            self._call(commands.ExtensionCall("session/goal", commands.goal_from_command(argument)),
                       lambda result: say(commands.describe(result)), failed)
        elif name == "fork":
            self._fork(commands.extension_call("session/fork", {}), reply_to, request_id, as_command=True,
                       on_error=failed)
        else:
            config_id = "thought" if name == "thought" else name
            if not argument:
                current = self.port.settings.current
                values = {"mode": current.mode, "model": current.model, "thought": current.thought}
                say(f"Current {name}: {values[config_id]}")
                return
            self.set_setting(config_id, argument, lambda result: say(f"{name.capitalize()} set to {argument}."),
                             failed)

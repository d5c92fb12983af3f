"""Session, part 3: settings, extension methods and slash commands.

A mixin of the Session actor: mode/model/thought changes, ``session/fork``,
``goal``, ``compact`` (prompts wait for it), ``steer``, ``rewind``,
``cancelBackgroundTask``, the slash commands, and ``available_commands_update``.
"""

from __future__ import annotations

import uuid
from typing import Any, Callable

from zcode_acp.protocol import commands
from zcode_acp.protocol.errors import RpcError, from_backend_error
from zcode_acp.protocol.session_config import SessionSettings, config_options, validate_config_value
from zcode_acp.protocol.translator import agent_text

from zcode_acp.actors.base import encode_updates
from zcode_acp.actors.messages import Deliver, Forked, Reply, StartTurn, TaskCancelled


class SessionControls:
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


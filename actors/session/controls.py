"""The Session's controls: settings changes, what extension methods ask, slash commands.

``session/set_mode`` / ``set_config_option``, the work the ``_session/*`` extension
methods' handlers ask for (one table in ``actors/session/extensions/table.py``, each handler
deciding per engine path which of these it runs), and the slash commands the
bridge runs itself (``/compact``, ``/goal``, ``/fork``, ``/mode``, …). A
compaction holds the session: prompts that arrive meanwhile start after it.

Both engines (docs/backend-protocol.md §11), detected by what they answer:
steering goes to ``session/steer`` or, on an engine that named a foreground
execution in ``turn.started`` (or said ``session/steer`` does not exist), to
``v4/command sendText`` with ``requestedDelivery: "guide"``; a goal ``set``
refused with ``-32602`` is sent again as ``replace`` (and from then on as
``replace``); a compaction waits minutes, retries while the engine is busy, and
its ``response`` is what the user sees.

It works through a narrow port (``ControlsPort``), which the Session actor
implements; tests give it a fake one. What differs between the engine paths (a setting's
call or command, the compaction, the fork, the rename) the port's ``EnginePath`` does.
"""

from __future__ import annotations

import uuid
from typing import Any, Protocol
from collections.abc import Callable


from zcode_acp.protocol import commands, compaction_updates, extension_calls, model_catalog
from zcode_acp.protocol.extension_calls import EngineCall
from zcode_acp.protocol.errors import INVALID_PARAMS, METHOD_NOT_FOUND, RpcError, from_backend_error
from zcode_acp.protocol.i18n import EN, t
from zcode_acp.protocol.session_config import config_options, validate_config_value
from zcode_acp.protocol.translator import agent_text, between_turns_notice

from zcode_acp.actors.session.compaction import Compaction
from zcode_acp.actors.session.path import EnginePath
from zcode_acp.actors.session.settings import Settings

OnResult = Callable[[Any], None]
OnError = Callable[[Any], None]
SETTING_METHODS = {"mode": "session/setMode", "model": "session/setModel"}  # named in a refusal


class ControlsPort(Protocol):
    settings: Settings
    compact_timeout: float
    speaks_v4: bool  # the 0.16 engine: learned from turn.started's foregroundExecutionId
    backend_session_id: str | None

    @property
    def path(self) -> EnginePath: ...

    def turn_running(self) -> bool: ...

    def steer_delivery(self, command_id: str) -> str | None: ...

    def when_live(self, action: Callable[[], None], on_error: Callable[[RpcError], None]) -> None: ...

    def request(self, method: str, params: dict[str, Any], on_result: OnResult, on_error: OnError,
                timeout: float | None = None) -> None: ...

    def deliver(self, updates: list[dict[str, Any]]) -> None: ...

    def fork_made(self, backend_session_id: str | None, reply_to: Any, request_id: Any, as_command: bool) -> None: ...

    def task_cancelled(self, task_id: str) -> None: ...

    def renamed(self, title: str, kept: bool = False) -> None: ...


    def start_turns(self, keys: list[int]) -> None: ...


def compacted(result: Any, lang: str = EN) -> str:
    """What the user sees after ``/compact``: the engine's own summary, when it gives one."""
    compact = result.get("compact") if isinstance(result, dict) else None
    if isinstance(compact, dict) and compact.get("state") == "cancelled":
        return t(lang, "notice.compact_cancelled")
    response = result.get("response") if isinstance(result, dict) else None
    return response if isinstance(response, str) and response else t(lang, "notice.compacted")


def as_rpc_error(error: Any, method: str) -> RpcError:
    return error if isinstance(error, RpcError) else from_backend_error(error, method)


class Controls:
    # Every live Session has one: slots, not a __dict__ (docs/performance.md, "Idle sessions").
    __slots__ = ("compacting", "compaction", "compaction_callers", "deferred", "goal_replace", "port")

    def __init__(self, port: ControlsPort) -> None:
        self.port = port
        self.compacting = False  # a compaction's internal turn holds the session
        self.compaction: Compaction | None = None  # ours, until the engine says it is over
        self.compaction_callers: list[tuple[OnResult, OnError]] = []  # answered when it is over, once each
        self.deferred: list[int] = []  # turns that start when it is over
        self.goal_replace = False  # the engine refused a goal "set": send "replace"

    def hold_turn(self, key: int) -> bool:
        """True if a compaction is running: the turn starts after it (and the user reads why it waits)."""
        if self.compacting:
            self.deferred.append(key)
            self.port.deliver([self._notice(t(self.port.settings.current.lang, "notice.compact_waiting"))])
        return self.compacting

    def hold_prompt(self) -> bool:
        """The v4 path's ``hold_turn``: True if a compaction runs (the V4Path keeps the prompt meanwhile)."""
        if self.compacting:
            self.port.deliver([self._notice(t(self.port.settings.current.lang, "notice.compact_waiting"))])
        return self.compacting

    def _notice(self, text: str) -> dict[str, Any]:
        """The bridge's own word: a ``notice`` for a client that declared ``session.notices``, else an
        agent message set off as its own paragraph (protocol/session_notices.py)."""
        return between_turns_notice(text, getattr(self.port, "capabilities", None), uuid.uuid4().hex)

    # -- settings -----------------------------------------------------------------------------

    def set_setting(self, config_id: str, value: Any, on_done: OnResult, on_error: OnError) -> None:
        if config_id == "model" and not model_catalog.known(self.port.settings.current):
            # The engine lists its models when the session is made: the choice is checked then.
            self.port.when_live(lambda: self._set_setting(config_id, value, on_done, on_error),
                                lambda error: on_error(as_rpc_error(error, "session/setModel")))
            return
        self._set_setting(config_id, value, on_done, on_error)

    def _set_setting(self, config_id: str, value: Any, on_done: OnResult, on_error: OnError) -> None:
        settings = self.port.settings
        try:
            config_id, value = validate_config_value(settings.current, config_id, value)
        except RpcError as exc:
            on_error(exc)
            return
        def done(result: Any) -> None:
            changed = settings.current.with_setting(config_id, value).with_backend_settings(
                result.get("settings") if isinstance(result, dict) else None)
            self.port.deliver(settings.change(changed))  # before the answer: a turn's updates precede it
            on_done(result)

        def fail(error: Any) -> None:
            on_error(as_rpc_error(error, SETTING_METHODS.get(config_id, "session/setThoughtLevel")))

        path = self.port.path  # the engine path's own call or command for it
        self.port.when_live(lambda: path.set_setting(config_id, value, done, fail), fail)

    def config_answer(self) -> dict[str, Any]:
        return {"configOptions": config_options(self.port.settings.current)}

    # -- what the extension methods' handlers ask (actors/session/extensions/) --------------------

    def call(self, call: EngineCall, on_result: OnResult, on_error: OnError) -> None:
        """The engine's method as the client named it (one 0.16 removed is refused, never sent)."""
        def send() -> None:
            if self.port.speaks_v4 and call.method in commands.REMOVED_IN_0_16:
                on_error(RpcError(METHOD_NOT_FOUND, t(self.port.settings.current.lang, "error.removed_in_0_16",
                                                      method=call.method), {"removedIn": "0.16"}))
                return
            self.port.request(call.method, call.params, on_result, on_error)

        self.port.when_live(send, on_error)

    def cancel_task(self, task_id: str, on_result: OnResult, on_error: OnError) -> None:
        """``session/cancelBackgroundTask``; the task's card is cancelled unless the engine says it was not."""
        def cancelled(result: Any) -> None:
            if not (isinstance(result, dict) and result.get("cancelled") is False):
                self.port.task_cancelled(task_id)  # {cancelled: false}: the task runs on, its card too
            on_result(result)

        self.call(EngineCall("session/cancelBackgroundTask", {"taskId": task_id}), cancelled, on_error)

    def goal(self, params: dict[str, Any], on_result: OnResult, on_error: OnError) -> None:
        replaced = commands.goal_as_replace(params)
        if replaced is not None and self.goal_replace:
            params, replaced = replaced, None

        def failed(error: Any) -> None:
            if replaced is not None and isinstance(error, dict) and error.get("code") == INVALID_PARAMS:
                self.goal_replace = True  # the 0.16 engine: goal actions without "set"
                self.goal(replaced, on_result, on_error)
                return
            on_error(error)

        self.port.when_live(lambda: self.port.request("session/goal", params, on_result, failed), on_error)

    # -- steering ------------------------------------------------------------------------------

    def steer(self, text: str, on_result: OnResult, on_error: OnError) -> None:
        """Text into the running turn; answered ``{applied, queued, delivery}``."""
        if not self.port.turn_running():
            on_error(RpcError(INVALID_PARAMS, t(self.port.settings.current.lang, "error.nothing_to_steer"),
                              {"reason": "noRunningTurn"}))
            return
        if self.port.speaks_v4:
            self._steer_v4(text, on_result, on_error, retries=1)
            return

        def steered(result: Any) -> None:
            queued = isinstance(result, dict) and result.get("queued") is False
            on_result({"applied": not queued, "queued": False, "delivery": "steer"})

        def failed(error: Any) -> None:
            if isinstance(error, dict) and error.get("code") == METHOD_NOT_FOUND:
                self.port.speaks_v4 = True  # session/steer is gone (0.16+): today's command instead
                self._steer_v4(text, on_result, on_error, retries=1)
                return
            on_error(error)

        self.port.request("session/steer", {"content": text}, steered, failed)

    def _steer_v4(self, text: str, on_result: OnResult, on_error: OnError, retries: int) -> None:
        # imported here: only the 0.16 engine steers so, and a legacy bridge imports no protocol/v4 at start
        from zcode_acp.actors.v4_sender import command_params
        from zcode_acp.protocol.v4.commands import send_text

        params = command_params(send_text(str(self.port.backend_session_id), text, requested_delivery="guide"))
        command_id = params["commandId"]

        def decided(result: Any) -> None:
            result = result if isinstance(result, dict) else {}
            status = result.get("status")
            if status == "accepted":
                # What was admitted: the steerQueued event names it. The ack cannot: the engine acks
                # only queue|startNow, and a guided input is acked "queue" (kept in its queue as
                # admitted "guide" and drained into the running turn), so a queue ack of this guided
                # request is the steer; startNow means no turn ran any more and it started one.
                acked = (result.get("result") or {}).get("delivery")
                delivery = self.port.steer_delivery(command_id) or ("guide" if acked == "queue" else acked)
                applied = delivery == "guide"
                on_result({"applied": applied, "queued": not applied, "delivery": delivery})
            elif status == "failed" and retries and "FOREIGN KEY" in str(result.get("message")):
                self._steer_v4(text, on_result, on_error, retries - 1)  # transient: the turn's row was not written yet
            else:
                on_error({"message": f"the engine did not take the text ({status}: "
                                     f"{result.get('reasonCode') or result.get('message')})"})

        self.port.request("v4/command", params, decided, on_error)

    # -- renaming ---------------------------------------------------------------------------------

    def rename(self, title: str, on_result: OnResult, on_error: OnError) -> None:
        """The engine's ``v4/command renameSession``; answered ``{title}`` once it is accepted.

        The engine announces the new title itself (``session.titleUpdated``, source ``custom``);
        the Session announces it too if that event did not come first, so the editor's list and the
        hub's see it either way.
        """
        def decided(result: Any) -> None:
            result = result if isinstance(result, dict) else {}
            if result.get("status") in ("accepted", "duplicate"):
                self.port.renamed(title)
                on_result({"title": title})
            else:
                on_error({"message": t(self.port.settings.current.lang, "error.rename_refused",
                                       status=result.get("status"),
                                       reason=result.get("reasonCode") or result.get("message"))})

        def send() -> None:
            def accepted() -> None:
                self.port.renamed(title)
                on_result({"title": title})

            if self.port.path.rename(title, accepted, on_error):
                return  # the path's own command (v4's, its acks judged there)
            # An engine older than 0.16 (no ZCode Protocol in its create answer) has no v4/command at
            # all: the bridge keeps the title itself, in its session records (docs/decisions.md).
            if not self.port.speaks_v4:
                self.port.renamed(title, kept=True)
                on_result({"title": title})
                return
            # imported here: only the 0.16 engine renames so (a legacy bridge imports no protocol/v4 at start)
            from zcode_acp.actors.v4_sender import command_params
            from zcode_acp.protocol.v4.commands import rename_session

            params = command_params(rename_session(str(self.port.backend_session_id), title))
            self.port.request("v4/command", params, decided, on_error)

        self.port.when_live(send, on_error)

    # -- compaction -------------------------------------------------------------------------------

    def compact(self, call: EngineCall, on_result: OnResult, on_error: OnError) -> None:
        """Prompts are held until the engine says the compaction is over (not merely accepted).

        A second compaction asked for while ours runs joins it (the engine would answer
        ``already_running``): both callers are answered when it is over, each once.
        """
        self.compaction_callers.append((on_result, on_error))
        if self.compaction is not None:
            return
        operation = Compaction()
        self.compacting, self.compaction = True, operation
        self._show_compaction(operation, None)

        def answered(result: Any) -> None:
            if self.compaction is operation and operation.answered(result):
                self._compaction_over(operation)  # else: the end comes as a state.updated

        def failed(error: Any) -> None:
            if self.compaction is operation:  # (a lost backend answered the callers already)
                self._show_compaction(operation, "failed", error)
                for _, caller_failed in self._release_held():
                    caller_failed(error)

        # The engine path asks (v4: its compact command, whose end is the conversation's).
        self.port.path.compact(call, answered, failed, self.port.compact_timeout)

    def compaction_ended(self, reason: Any) -> None:
        """A ``state.updated`` whose reason may end our compaction (the Session hands every reason here)."""
        operation = self.compaction
        if operation is not None and operation.engine_ended(reason):
            self._compaction_over(operation)

    def compaction_lost(self, error: Any) -> None:
        """The backend went away mid-compaction: its end will never come."""
        if self.compaction is not None:
            self._show_compaction(self.compaction, "failed", error)
            for _, caller_failed in self._release_held():
                caller_failed(error)

    def _show_compaction(self, operation: Compaction, status: str | None, error: Any = None) -> None:
        """The compaction as ``compaction_update`` (and its summary), for a client that declared
        ``session.compaction``; ``status`` None: it starts (protocol/compaction_updates.py)."""
        if not compaction_updates.supports_compaction(getattr(self.port, "capabilities", None)):
            return
        if status is None:
            self.port.deliver(compaction_updates.started(operation.compaction_id))
            return
        message = error.get("message") if isinstance(error, dict) else getattr(error, "message", None)
        self.port.deliver(compaction_updates.ended(operation.compaction_id, status,
                                                   compaction_updates.summary_of(operation.answer),
                                                   message if isinstance(message, str) else None))

    def _compaction_over(self, operation: Compaction) -> None:
        self._show_compaction(operation, operation.outcome or "completed")
        for caller_done, caller_failed in self._release_held():
            if operation.outcome == "failed":
                caller_failed({"message": t(self.port.settings.current.lang, "error.compact_failed")})
            else:
                caller_done(operation.result())

    def _release_held(self) -> list[tuple[OnResult, OnError]]:
        """The compaction is over: held prompts start; returns the callers still owed an answer."""
        callers, self.compaction_callers = self.compaction_callers, []
        self.compacting, self.compaction = False, None
        deferred, self.deferred = self.deferred, []
        self.port.start_turns(deferred)
        return callers

    def fork(self, call: EngineCall, reply_to: Any, request_id: Any, as_command: bool, on_error: OnError) -> None:
        def forked(result: Any) -> None:
            backend_id = None
            if isinstance(result, dict):
                backend_id = result.get("forkedSessionId") or (result.get("session") or {}).get("sessionId")
            if not isinstance(backend_id, str):
                on_error({"message": "the backend did not name the forked session"})
                return
            self.port.fork_made(backend_id, reply_to, request_id, as_command)

        path = self.port.path  # the legacy fork, or v4's forkAssistant from the newest settled assistant row
        self.port.when_live(lambda: path.fork(
            call, forked, lambda: self.port.fork_made(None, reply_to, request_id, as_command), on_error), on_error)

    # -- slash commands ---------------------------------------------------------------------------

    def command(self, command: commands.Command, reply_to: Any, request_id: Any,
                answer: Callable[[dict[str, Any]], None]) -> None:
        """A prompt that is one of our slash commands: run it, answer as an agent message."""
        lang = self.port.settings.current.lang

        def say(text: str) -> None:
            self.port.deliver([agent_text(text, uuid.uuid4().hex)])
            answer({"stopReason": "end_turn"})

        def failed(error: Any) -> None:
            text = error.message if isinstance(error, RpcError) else str((error or {}).get("message") or error)
            say(t(lang, "command.failed", command=command.name, message=text))

        name, argument = command.name, command.argument
        if name == "compact":
            self.compact(extension_calls.compact({}), lambda result: say(compacted(result, lang)), failed)
        elif name == "goal":
            self.goal(commands.goal_from_command(argument), lambda result: say(commands.describe(result, lang)),
                       failed)
        elif name == "rename":
            if not argument:
                say(t(lang, "command.rename_usage"))
                return
            try:
                title = commands.session_title(argument)
            except RpcError as exc:
                failed(exc)
                return
            self.rename(title, lambda result: say(t(lang, "command.renamed", title=title)), failed)
        elif name == "fork":
            self.fork(extension_calls.fork({}), reply_to, request_id, as_command=True, on_error=failed)
        else:
            config_id = "thought" if name == "thought" else name
            if not argument:
                def show() -> None:
                    say(commands.current_setting(self.port.settings.current, config_id, lang))

                if config_id == "model" and not model_catalog.known(self.port.settings.current):
                    self.port.when_live(show, failed)  # the engine lists its models when the session is made
                else:
                    show()
                return
            self.set_setting(config_id, argument, lambda result: say(t(lang, f"command.set.{name}", value=argument)),
                             failed)

"""Slash commands the bridge handles itself, and the ACP extension methods.

A prompt that is exactly one of these commands is run by the bridge and
answered as an agent message; anything else that starts with ``/`` (a pasted
path, a command the backend knows) goes to the backend as text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

from . import air
from .errors import invalid_params
from .i18n import EN, t
from .session_config import DEFAULT_MODEL, MODE_IDS, SessionSettings, offered_modes, validate_mode

# (name, catalog key of its description, catalog key of its input hint); the texts are in protocol/i18n.
COMMANDS = (
    ("compact", "command.compact", None),
    ("goal", "command.goal", "command.hint.objective"),
    ("fork", "command.fork", None),
    ("mode", "command.mode", "command.hint.mode"),
    ("model", "command.model", "command.hint.model"),
    ("thought", "command.thought", "command.hint.level"),
    ("rename", "command.rename", "command.hint.title"),
)
TITLE_LIMIT = 200  # characters: a title is a list entry, not a paragraph
GOAL_ACTIONS = ("show", "set", "replace", "clear", "pause", "resume")



@dataclass(frozen=True, slots=True)
class ExtensionCall:
    """What one ACP extension method asks of its Session, validated."""

    method: str  # the backend method
    params: dict[str, Any] = field(default_factory=dict)  # backend params, without sessionId
    setting: tuple[str, Any] | None = None  # a settings change (config id, value) instead of a plain call
    fork: bool = False  # answered with the new session once the Supervisor has given it an id
    long_running: bool = False  # compaction: minutes, and prompts wait for it
    cancels_task: str | None = None  # the background task whose card is cancelled on success
    steer: str | None = None  # text for the running turn (session/steer or v4 sendText, whichever the engine has)
    rename: str | None = None  # the session's new title (the engine's v4 renameSession command)
    v4_only: bool = False  # what only the v4 data plane offers: ``method`` is the v4 command (docs/v4.md)
    # The AIR set's answer shape (actors/session/air_answers.py): "steering" or "async_task_stop".
    air_answer: str | None = None
    prompt_required_when_idle: bool = False  # _session/steering's _meta.steering.idleBehavior opt-in


# What each backend method takes besides ``sessionId``: today's engine checks its params with
# strict schemas (an unknown key fails the whole call), so a client's extra keys stay here.
BACKEND_KEYS: dict[str, tuple[str, ...]] = {
    "session/compact": ("instructions",),
    "session/cancelBackgroundTask": ("taskId",),
    "session/steer": ("content",),
    "session/rewind": ("target", "checkpointId"),
}
# Gone from 0.16 on: on today's engine the bridge refuses them itself, never calls them.
REMOVED_IN_0_16 = frozenset({"session/steer", "session/rewind", "session/rewindCascade"})


def _passed_through(params: dict[str, Any], method: str) -> dict[str, Any]:
    return {key: params[key] for key in BACKEND_KEYS[method] if key in params}


def _required_string(params: dict[str, Any], name: str) -> str:
    value = params.get(name)
    if not isinstance(value, str):
        raise invalid_params(name, "invalid.must_be_string")
    return value


def _fork(params: dict[str, Any]) -> ExtensionCall:
    target = params.get("target")
    return ExtensionCall("session/fork", {"target": target if isinstance(target, dict) else {
        "kind": "latestCheckpoint"}}, fork=True)


def _steer(params: dict[str, Any]) -> ExtensionCall:
    return ExtensionCall("session/steer", _passed_through(params, "session/steer"),
                         steer=_required_string(params, "content"))


def _steering(params: dict[str, Any]) -> ExtensionCall:
    """``_session/steering {sessionId, prompt}`` (claude-agent-acp, codex-acp): text or ACP content blocks."""
    prompt = params.get("prompt")
    if isinstance(prompt, list):
        texts = [block.get("text") for block in prompt if isinstance(block, dict) and block.get("type") == "text"]
        prompt = "\n".join(text for text in texts if isinstance(text, str))
    if not isinstance(prompt, str) or not prompt.strip():
        raise invalid_params("prompt", "invalid.must_be_text")
    idle = air.steering_idle_behaviour(params)
    return ExtensionCall("session/steer", {"content": prompt}, steer=prompt, air_answer="steering",
                         prompt_required_when_idle=idle == air.PROMPT_REQUIRED_BEHAVIOUR)


def _async_task_stop(params: dict[str, Any]) -> ExtensionCall:
    """``_session/async_task/stop {sessionId, asyncTaskId}`` (the AIR set): a background task
    stopped as ``session/cancelBackgroundTask`` stops it, answered ``{stopped}``."""
    task_id = _required_string(params, "asyncTaskId").strip()
    if not task_id:
        raise invalid_params("asyncTaskId", "invalid.must_be_nonempty_string")
    return ExtensionCall("session/cancelBackgroundTask", {"taskId": task_id}, cancels_task=task_id,
                         air_answer="async_task_stop")


def _cancel_task(params: dict[str, Any]) -> ExtensionCall:
    task_id = _required_string(params, "taskId")
    return ExtensionCall("session/cancelBackgroundTask", _passed_through(params, "session/cancelBackgroundTask"),
                         cancels_task=task_id)


def session_title(value: Any) -> str:
    """A title the user gave: text, trimmed, one line, at most ``TITLE_LIMIT`` characters."""
    if not isinstance(value, str) or not value.strip():
        raise invalid_params("title", "invalid.must_be_nonempty_string")
    title = " ".join(value.split())
    if len(title) > TITLE_LIMIT:
        raise invalid_params("title", "invalid.too_long", limit=TITLE_LIMIT)
    return title


def _rename(params: dict[str, Any]) -> ExtensionCall:
    """``_session/rename {sessionId, title}``: ACP has no method for it (schema v1.19: a title only
    travels agent → client in ``session_info_update``)."""
    return ExtensionCall("v4/command", rename=session_title(params.get("title")))


def _v4(command: str, *required: str) -> Callable[[dict[str, Any]], ExtensionCall]:
    """A v4-only extension: its required strings, and an optional integer ``rowId`` (a row to target)."""
    def build(params: dict[str, Any]) -> ExtensionCall:
        out: dict[str, Any] = {name: _required_string(params, name) for name in required}
        row_id = params.get("rowId")
        if row_id is not None:
            if not isinstance(row_id, int) or isinstance(row_id, bool):
                raise invalid_params("rowId", "invalid.row_id")
            out["rowId"] = row_id
        return ExtensionCall(command, out, v4_only=True)
    return build


# ACP-side extension methods, one table (each also accepted with a leading "_", as SDKs send them).
EXTENSIONS: dict[str, Callable[[dict[str, Any]], ExtensionCall]] = {
    "session/fork": _fork,
    "session/goal": lambda params: ExtensionCall("session/goal", goal_params(params)),
    "session/compact": lambda params: ExtensionCall("session/compact", _passed_through(params, "session/compact"),
                                                    long_running=True),
    "session/steer": _steer,
    "session/steering": _steering,
    "session/rewind": lambda params: ExtensionCall("session/rewind", _passed_through(params, "session/rewind")),
    "session/setMode": lambda params: ExtensionCall(
        "session/setMode", setting=("mode", validate_mode(params.get("mode")))),
    "session/setThoughtLevel": lambda params: ExtensionCall(
        "session/setThoughtLevel", setting=("thought", params.get("thoughtLevel"))),
    "session/cancelBackgroundTask": _cancel_task,
    "session/async_task/stop": _async_task_stop,  # the AIR name of the same stop
    # Only on the v4 data plane (ZCODE_ACP_ENGINE_API=v4); the legacy path answers -32601.
    "session/queue": _v4("listQueue"),  # the engine's queue: {items: [{queueItemId, text, …}]}
    "session/queueEdit": _v4("editQueueItem", "queueItemId", "text"),
    "session/queueRemove": _v4("deleteQueueItem", "queueItemId"),
    "session/queueSendNow": _v4("sendQueuedNow", "queueItemId"),
    "session/retry": _v4("retryTurn"),  # the latest turn, or the one of rowId
    "session/editPrompt": _v4("editUserQuery", "text"),  # the latest prompt, or the userInput row rowId
    "session/fileChanges": _v4("fileChanges"),  # a turn's file changes as diffs: the latest turn, or rowId's
    "session/rename": _rename,  # both paths: the engine's renameSession command
}


def extension_call(name: str, params: dict[str, Any]) -> ExtensionCall:
    """Validate an extension method's params (raises ``-32602`` naming the field)."""
    return EXTENSIONS[name](params)


@dataclass(frozen=True)
class Command:
    """A slash command the user typed: its name and the rest of the line."""

    name: str
    argument: str


def engine_commands(snapshot: Any) -> tuple[tuple[str, str, str], ...]:
    """The engine's own slash commands ``(name, description, hint)`` from a snapshot or a
    ``workspace/readPresentation`` answer (``slashCommands: [{name, description, inputHint?, source?}]``:
    its built-in ones and the user's ``.zcode/commands``)."""
    listed = snapshot.get("slashCommands") if isinstance(snapshot, dict) else None
    found = []
    for item in listed if isinstance(listed, list) else []:
        if isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"].strip():
            hint = item.get("inputHint")
            found.append((item["name"].strip(), str(item.get("description") or ""),
                          hint if isinstance(hint, str) else ""))
    return tuple(found)


def available_commands_update(engine: tuple[tuple[str, str, str], ...] = (), lang: str = EN) -> dict[str, Any]:
    """The bridge's own commands (in ``lang``), then the engine's under the other names (the engine
    runs those: a prompt ``/name …`` goes to it as text; their descriptions are its own words)."""
    own = {name for name, _, _ in COMMANDS}
    ours = [(name, t(lang, description, modes="|".join(MODE_IDS)), t(lang, hint) if hint else None)
            for name, description, hint in COMMANDS]
    commands = []
    for name, description, hint in [*ours, *((n, d, h) for n, d, h in engine if n not in own)]:
        command: dict[str, Any] = {"name": name, "description": description}
        if hint:
            command["input"] = {"hint": hint}
        commands.append(command)
    return {"sessionUpdate": "available_commands_update", "availableCommands": commands}


def current_setting(settings: SessionSettings, config_id: str, lang: str = EN) -> str:
    """What ``/mode``, ``/model`` or ``/thought`` alone answers: the current value, then every value
    the selector offers (issue 32: ``/model`` named the current model only, so none could be picked)."""
    if config_id == "mode":
        current, offered = settings.mode, [mode_id for mode_id, _, _ in offered_modes(settings)]
    elif config_id == "model":
        current, offered = settings.model, [value for value, _ in settings.models if value != DEFAULT_MODEL]
    else:
        current, offered = settings.thought, [value for value, _ in settings.thought_levels]
    name = "thought" if config_id == "thought" else config_id
    text = t(lang, f"command.current.{name}", value=current)
    if offered:
        text += "\n" + t(lang, "command.available", values=", ".join(offered))
    return text


def parse(text: str) -> Command | None:
    """The command a prompt consists of, or None."""
    stripped = text.strip()
    if not stripped.startswith("/") or "\n" in stripped:
        return None
    name, _, argument = stripped[1:].partition(" ")
    if name not in {command for command, _, _ in COMMANDS}:
        return None
    argument = argument.strip()
    if name in ("compact", "fork") and argument:
        return None  # "/fork something" is not our command
    return Command(name, argument)


def extension_name(method: str) -> str | None:
    """``session/fork`` or ``_session/fork`` → ``session/fork``; None if not one of ours."""
    name = method[1:] if method.startswith("_") else method
    return name if name in EXTENSIONS else None


def goal_params(params: dict[str, Any]) -> dict[str, Any]:
    action = params.get("action", "show")
    if action not in GOAL_ACTIONS:
        raise invalid_params("action", "invalid.must_be_one_of", choices=", ".join(GOAL_ACTIONS))
    out = {"action": action}
    if action in ("set", "replace"):
        objective = params.get("objective")
        if not isinstance(objective, str) or not objective.strip():
            raise invalid_params("objective", "invalid.objective_required", action=action)
        out["objective"] = objective
    return out


def goal_as_replace(params: dict[str, Any]) -> dict[str, Any] | None:
    """Today's engine has no ``set``: the same goal as ``replace`` (None if it is not a ``set``)."""
    return {**params, "action": "replace"} if params.get("action") == "set" else None


def goal_from_command(argument: str) -> dict[str, Any]:
    if not argument:
        return {"action": "show"}
    if argument in ("clear", "pause", "resume", "show"):
        return {"action": argument}
    return {"action": "set", "objective": argument}


def describe(result: Any, lang: str = EN) -> str:
    """A short readable line for a backend result shown as an agent message."""
    if isinstance(result, dict):
        if isinstance(result.get("response"), str) and result["response"]:
            return str(result["response"])  # today's engine words it for the user
        goal = result.get("goal")
        if isinstance(goal, dict):
            objective = goal.get("objective")
            status = goal.get("status")
            if objective:
                return t(lang, "command.goal_is_with_status", objective=objective, status=status) if status \
                    else t(lang, "command.goal_is", objective=objective)
            return t(lang, "command.no_goal")
        if result.get("message"):
            return str(result["message"])
    return t(lang, "command.done")

"""Slash commands the bridge handles itself (the extension methods' params: extension_calls.py).

A prompt that is exactly one of these commands is run by the bridge and
answered as an agent message; anything else that starts with ``/`` (a pasted
path, a command the backend knows) goes to the backend as text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import invalid_params
from .i18n import EN, t
from .session_config import DEFAULT_MODEL, MODE_IDS, SessionSettings, offered_modes

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
# Gone from 0.16 on: on the 0.16 engine the bridge refuses them itself, never calls them.
REMOVED_IN_0_16 = frozenset({"session/steer", "session/rewind", "session/rewindCascade"})


def session_title(value: Any) -> str:
    """A title the user gave: text, trimmed, one line, at most ``TITLE_LIMIT`` characters."""
    if not isinstance(value, str) or not value.strip():
        raise invalid_params("title", "invalid.must_be_nonempty_string")
    title = " ".join(value.split())
    if len(title) > TITLE_LIMIT:
        raise invalid_params("title", "invalid.too_long", limit=TITLE_LIMIT)
    return title


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
    """The 0.16 engine has no ``set``: the same goal as ``replace`` (None if it is not a ``set``)."""
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
            return str(result["response"])  # the 0.16 engine words it for the user
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

"""Slash commands the bridge handles itself, and the ACP extension methods.

A prompt that is exactly one of these commands is run by the bridge and
answered as an agent message; anything else that starts with ``/`` (a pasted
path, a command the backend knows) goes to the backend as text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import invalid_params
from .session_config import MODE_IDS

COMMANDS = (
    ("compact", "Compact the conversation history to free context", None),
    ("goal", "Show the goal, or set it: /goal <objective> (also: clear, pause, resume)", "objective"),
    ("fork", "Fork this conversation into a new session", None),
    ("mode", f"Switch mode: /mode <{'|'.join(MODE_IDS)}>", "mode"),
    ("model", "Switch model: /model <id>", "model id"),
    ("thought", "Set the thought level: /thought <low|high|max>", "level"),
)
GOAL_ACTIONS = ("show", "set", "replace", "clear", "pause", "resume")

# ACP-side extension methods (each also accepted with a leading "_", as SDKs send them).
EXTENSIONS = (
    "session/fork", "session/goal", "session/compact", "session/steer", "session/rewind",
    "session/setMode", "session/setThoughtLevel", "session/cancelBackgroundTask",
)


@dataclass(frozen=True)
class Command:
    name: str
    argument: str


def available_commands_update() -> dict[str, Any]:
    commands = []
    for name, description, hint in COMMANDS:
        command: dict[str, Any] = {"name": name, "description": description}
        if hint:
            command["input"] = {"hint": hint}
        commands.append(command)
    return {"sessionUpdate": "available_commands_update", "availableCommands": commands}


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
        raise invalid_params("action", f"must be one of {', '.join(GOAL_ACTIONS)}")
    out = {"action": action}
    if action in ("set", "replace"):
        objective = params.get("objective")
        if not isinstance(objective, str) or not objective.strip():
            raise invalid_params("objective", f"is required to {action} a goal")
        out["objective"] = objective
    return out


def goal_from_command(argument: str) -> dict[str, Any]:
    if not argument:
        return {"action": "show"}
    if argument in ("clear", "pause", "resume", "show"):
        return {"action": argument}
    return {"action": "set", "objective": argument}


def describe(result: Any) -> str:
    """A short readable line for a backend result shown as an agent message."""
    if isinstance(result, dict):
        goal = result.get("goal")
        if isinstance(goal, dict):
            objective = goal.get("objective")
            status = goal.get("status")
            if objective:
                return f"Goal: {objective}" + (f" ({status})" if status else "")
            return "No goal is set."
        if result.get("message"):
            return str(result["message"])
    return "Done."

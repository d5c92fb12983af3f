"""A ``workspace-config/<workspaceKey>`` topic's state: the workspace's config options and slash commands.

Snapshot ``{protocolVersion, workspaceId, logEpoch, config: {configOptions, slashCommands}}``;
its one delta op, ``config.updated {config}``, replaces ``config`` whole (a small catalog,
never patched field by field). Slash commands are ``{name, description, inputHint?,
source: builtin|custom}`` — the engine's own and the user's. Implements topic.Applier.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .conversation_apply import NotModelled


@dataclass(frozen=True, slots=True)
class ConfigReplaced:
    config: dict[str, Any]
    previous: dict[str, Any] | None


WorkspaceConfigChange = ConfigReplaced | NotModelled


def _config_problem(config: Any) -> str | None:
    if not isinstance(config, dict):
        return "config is not an object"
    if not isinstance(config.get("configOptions"), list) or not isinstance(config.get("slashCommands"), list):
        return "config needs configOptions and slashCommands arrays"
    return None


class WorkspaceConfigState:
    def __init__(self) -> None:
        self.config: dict[str, Any] | None = None

    def reset(self, snapshot: dict[str, Any]) -> list[WorkspaceConfigChange] | str:
        problem = _config_problem(snapshot.get("config"))
        if problem:
            return problem
        previous, self.config = self.config, snapshot["config"]
        return [ConfigReplaced(snapshot["config"], previous)]

    def apply(self, deltas: tuple[dict[str, Any], ...]) -> list[WorkspaceConfigChange] | str:
        for delta in deltas:
            if delta["op"] == "config.updated":
                problem = _config_problem(delta.get("config"))
                if problem:
                    return problem
        changes: list[WorkspaceConfigChange] = []
        for delta in deltas:
            if delta["op"] == "config.updated":
                previous, self.config = self.config, delta["config"]
                changes.append(ConfigReplaced(delta["config"], previous))
            else:
                changes.append(NotModelled(delta["op"], delta))
        return changes


def available_commands(slash_commands: Any) -> dict[str, Any]:
    """The engine's slash commands as an ACP ``available_commands_update``."""
    commands = []
    for entry in slash_commands if isinstance(slash_commands, list) else ():
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
            continue
        command: dict[str, Any] = {"name": entry["name"], "description": str(entry.get("description") or "")}
        if isinstance(entry.get("inputHint"), str) and entry["inputHint"]:
            command["input"] = {"hint": entry["inputHint"]}
        commands.append(command)
    return {"sessionUpdate": "available_commands_update", "availableCommands": commands}

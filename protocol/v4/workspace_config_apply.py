"""A ``workspace-config/<workspaceKey>`` topic's state: the workspace's config options and slash commands.

Snapshot ``{protocolVersion, workspaceId, logEpoch, config: {configOptions, slashCommands}}``;
its one delta op, ``config.updated {config}``, replaces ``config`` whole (a small catalog,
never patched field by field). Slash commands are ``{name, description, inputHint?,
source: builtin|custom}`` — the engine's own and the user's. Implements topic.Applier.
"""

from __future__ import annotations

from collections.abc import Sequence
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

    def apply(self, deltas: Sequence[dict[str, Any]]) -> list[WorkspaceConfigChange] | str:
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


def _level_label(level: str) -> str:
    return level[:1].upper() + level[1:]


def catalog_settings(config: Any) -> dict[str, Any] | None:
    """The workspace config's ``model`` option as the settings shape the legacy create answered
    (``{model: {available: [{ref, label, reasoning?}], current?}}``), so one reader folds either in.

    The engine lists each model as ``{value: "<providerId>/<modelId>", name, modelProviderId,
    modelProviderName?, modelThoughtLevels?, modelDefaultThoughtLevel?}``, the current one as the
    option's ``currentValue``; it names no context size there. None without a model option.
    """
    options = config.get("configOptions") if isinstance(config, dict) else None
    model = next((o for o in options if isinstance(o, dict) and o.get("id") == "model"), None) \
        if isinstance(options, list) else None
    if model is None or not isinstance(model.get("options"), list):
        return None
    available = []
    for option in model["options"]:
        value = option.get("value") if isinstance(option, dict) else None
        if not isinstance(value, str) or not value:
            continue
        provider, _, model_id = value.rpartition("/")
        provider = str(option.get("modelProviderId") or provider)
        if not provider or not model_id:
            continue
        entry: dict[str, Any] = {"ref": {"providerId": provider, "modelId": model_id},
                                 "label": str(option.get("name") or model_id)}
        if isinstance(option.get("modelProviderName"), str):
            entry["providerLabel"] = option["modelProviderName"]
        levels = [level for level in option.get("modelThoughtLevels") or () if isinstance(level, str) and level]
        if levels:
            reasoning: dict[str, Any] = {"levels": [{"value": level, "label": _level_label(level)} for level in levels]}
            default = option.get("modelDefaultThoughtLevel")
            if isinstance(default, str) and default in levels:
                reasoning["defaultLevel"] = default
            entry["reasoning"] = reasoning
        available.append(entry)
    if not available:
        return None
    found: dict[str, Any] = {"available": available}
    current = model.get("currentValue")
    if isinstance(current, str) and "/" in current:
        provider, _, model_id = current.rpartition("/")
        found["current"] = {"providerId": provider, "modelId": model_id}
    return {"model": found}

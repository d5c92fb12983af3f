"""The 0.16 engine outside any one session: ``runtime/capabilities``, ``workspace/readPresentation``
and ``mcp/list`` (docs/simulator.md, Dialects).

* ``runtime/capabilities {}`` answers ``{independentPlanState: true}`` from CLI 0.16.9 on (the
  captured 3.14.4 build); older builds answer ``{}`` (plan mode was accepted and did nothing there);
* ``workspace/readPresentation {workspace}`` answers ``{workspace, mode, slashCommands}``: the
  engine's own commands and the user's (``<workspace>/.zcode/commands/*.md``);
* MCP servers given at create/resume are only registered; ``mcp/list {workspace, mcpServers?,
  mode}`` (``mode`` defaults to ``connect``) connects them, ``status`` only reports.
"""

from __future__ import annotations

import os
import time
from datetime import datetime, UTC
from typing import Any

from .dialect import parse_version
from .model import SimError, SimSession

INDEPENDENT_PLAN_FROM = (0, 16, 9)
BUILTIN_COMMANDS = [
    {"name": "compact", "description": "Summarize the conversation to free context", "inputHint": "[instructions]",
     "source": "builtin"},
    {"name": "goal", "description": "Show, set, replace, pause, resume or clear the session goal",
     "inputHint": "[set|replace <objective>|pause|resume|clear]", "source": "builtin"},
    {"name": "init", "description": "Create or update AGENTS.md for this workspace", "inputHint": "", "source": "builtin"},
    {"name": "plan", "description": "Plan before editing", "inputHint": "<task>", "source": "builtin"},
]


def user_commands(workspace_path: str) -> list[dict[str, Any]]:
    """User-defined commands: ``<workspace>/.zcode/commands/<name>.md``, first line = description."""
    folder = os.path.join(workspace_path, ".zcode", "commands")
    if not os.path.isdir(folder):
        return []
    commands = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".md"):
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as handle:
                first = handle.readline().strip().lstrip("# ")
            commands.append({"name": name[:-3], "description": first, "inputHint": "", "source": "custom"})
    return commands


def slash_commands(workspace_path: str) -> list[dict[str, Any]]:
    return BUILTIN_COMMANDS + (user_commands(workspace_path) if workspace_path else [])


class WorkspaceMethods:
    """Mixed into ``Cli016SimServer``; needs ``dialect``, ``sessions`` and ``mcp_connected``."""

    dialect: Any
    sessions: dict[str, SimSession]
    mcp_connected: dict[str, dict[str, Any]]
    auto_resolution_enabled: bool = True
    """The server's default for questions that answer themselves (server.ts constructor: true)."""

    def plan_works(self) -> bool:
        return (parse_version(self.dialect.version) or ()) >= INDEPENDENT_PLAN_FROM

    def m_runtime_capabilities(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"independentPlanState": True} if self.plan_works() else {}

    def m_workspace_readPresentation(self, params: dict[str, Any]) -> dict[str, Any]:
        workspace = params["workspace"]
        return {"workspace": dict(workspace), "mode": "build",
                "slashCommands": slash_commands(str(workspace.get("workspacePath") or ""))}

    def m_workspace_updateInteractionPreferences(self, params: dict[str, Any]) -> dict[str, Any]:
        """The server-wide ``askUserQuestionAutoResolutionEnabled`` (server.ts: true until this sets it)."""
        workspace, preferences = params.get("workspace"), params.get("preferences")
        enabled = preferences.get("askUserQuestionAutoResolutionEnabled") if isinstance(preferences, dict) else None
        if not isinstance(workspace, dict) or not isinstance(enabled, bool) or set(preferences) != {
                "askUserQuestionAutoResolutionEnabled"}:
            raise SimError(-32602, "Invalid params: preferences.askUserQuestionAutoResolutionEnabled: "
                                   "expected a boolean, and nothing else")
        self.auto_resolution_enabled = enabled
        return {"workspace": dict(workspace), "askUserQuestionAutoResolutionEnabled": enabled,
                "snoozedInteractionCount": 0}

    def m_mcp_list(self, params: dict[str, Any]) -> dict[str, Any]:
        key = params["workspace"]["workspaceKey"]
        servers = list(params.get("mcpServers") or [])
        for session in self.sessions.values():
            if session.workspace.get("workspaceKey") == key:
                servers += session.mcp_servers
        connect = params.get("mode", "connect") == "connect"
        now = datetime.fromtimestamp(time.time(), tz=UTC).isoformat().replace("+00:00", "Z")
        statuses: dict[str, Any] = {}
        for server in servers:
            name = str(server.get("name") or "")
            if connect:
                self.mcp_connected.setdefault(key, {})[name] = server
            connected = name in self.mcp_connected.get(key, {})
            statuses[name] = {"status": "connected" if connected else "disconnected",
                              "transport": server.get("type") or "stdio",  # a stdio entry has no type
                              "toolCount": 1 if connected else 0, "updatedAt": now}
        return {"statuses": statuses}

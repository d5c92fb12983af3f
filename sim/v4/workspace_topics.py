"""The two workspace-wide topics: ``sessions-index/<workspaceKey>`` and ``workspace-config/<workspaceKey>``.

The sessions index is ``{protocolVersion, workspaceId, logEpoch, seq, sessions: [summary]}``
with ops ``session.upserted {session}`` (a summary replaced whole by ``sessionId``) and
``session.removed {sessionId}``; a summary carries ``sessionId``, ``title``, ``phase``,
``lastActivityAt`` (epoch ms) and, for a fork, ``parentSessionId``. The workspace config
is ``{protocolVersion, workspaceId, logEpoch, seq, config: {configOptions, slashCommands}}``
replaced whole by ``config.updated {config}``.
"""

from __future__ import annotations

from typing import Any

from .log import DeltaLog
from .snapshot import PROTOCOL_VERSION


class SessionsIndex:
    def __init__(self, workspace_key: str) -> None:
        self.workspace_key = workspace_key
        self.log = DeltaLog(f"sessions-index/{workspace_key}")
        self.sessions: dict[str, dict[str, Any]] = {}

    def snapshot(self) -> dict[str, Any]:
        return {"protocolVersion": PROTOCOL_VERSION, "workspaceId": self.workspace_key,
                "logEpoch": self.log.log_epoch, "seq": self.log.seq, "sessions": list(self.sessions.values())}

    def upsert(self, summary: dict[str, Any]) -> None:
        if self.sessions.get(summary["sessionId"]) == summary:
            return
        self.sessions[summary["sessionId"]] = summary
        self.log.commit([{"op": "session.upserted", "session": summary}])

    def remove(self, session_id: str) -> None:
        if self.sessions.pop(session_id, None) is not None:
            self.log.commit([{"op": "session.removed", "sessionId": session_id}])


class WorkspaceConfig:
    def __init__(self, workspace_key: str, slash_commands: list[dict[str, Any]] | None = None,
                 config_options: list[dict[str, Any]] | None = None) -> None:
        self.workspace_key = workspace_key
        self.log = DeltaLog(f"workspace-config/{workspace_key}")
        self.config = {"configOptions": list(config_options or []), "slashCommands": list(slash_commands or [])}

    def snapshot(self) -> dict[str, Any]:
        return {"protocolVersion": PROTOCOL_VERSION, "workspaceId": self.workspace_key,
                "logEpoch": self.log.log_epoch, "seq": self.log.seq, "config": self.config}

    def update(self, config: dict[str, Any]) -> None:
        if config == self.config:
            return
        self.config = config
        self.log.commit([{"op": "config.updated", "config": config}])

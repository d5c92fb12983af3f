"""The two workspace-wide topics: ``sessions-index/<workspaceKey>`` and ``workspace-config/<workspaceKey>``.

From the engine's ``zcode-protocol-v4/sessions-index.ts`` and ``workspace-config.ts``.
The sessions index is ``{protocolVersion, workspaceId, logEpoch, sessions: [summary]}``
(unordered) with ops ``session.upserted {session}`` (a summary replaced whole by
``sessionId``) and ``session.removed {sessionId}``; a summary carries ``sessionId``,
``workspaceId``, ``title``, ``titleSource``, ``phase``, ``sessionEnded``,
``hasBackgroundWork``, ``lastActivityAt``, ``createdAt`` (epoch ms), and when they apply
``parentSessionId``, ``pendingInteraction``, ``pendingInteractionSummary`` and
``lastAssistantPreview`` (at most 120 characters). The workspace config is
``{protocolVersion, workspaceId, logEpoch, config: {configOptions, slashCommands}}``
replaced whole by ``config.updated {config}``; ``config_options`` builds the options the
way the CLI publishes them (``v4-workspace-config.ts``): the ``mode`` option only.
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
                "logEpoch": self.log.log_epoch, "sessions": list(self.sessions.values())}

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
                "logEpoch": self.log.log_epoch, "config": self.config}

    def update(self, config: dict[str, Any]) -> None:
        if config == self.config:
            return
        self.config = config
        self.log.commit([{"op": "config.updated", "config": config}])


def config_options(config: dict[str, Any], modes: tuple[str, ...] = ("build", "plan")) -> list[dict[str, Any]]:
    """The workspace's options as the CLI publishes them (``v4-workspace-config.ts``
    ``toV4WorkspaceConfigState``): the ``mode`` option alone. No ``model`` and no ``thought_level``:
    "the model catalog is supplied by the host's ModelSelectionView", never by this topic; a session's
    current model is in its conversation's ``config``, the catalog in the ``session/create``/``resume``
    snapshot."""
    return [{"id": "mode", "name": "Mode", "category": "mode", "type": "select", "currentValue": config["mode"],
             "options": [{"value": mode, "name": mode.capitalize()} for mode in modes]}]

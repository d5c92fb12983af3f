"""The sessions the data plane knows, and the workspace topics that list them.

Each session's conversation projection is a topic source; each workspace gets a
``sessions-index`` and a ``workspace-config`` topic the first time one of its sessions
opens (or a client subscribes to them). A conversation commit that changes what its
summary shows (title, phase) updates the index.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .log import Commit
from .port import SessionSeed
from .projection import ConversationProjection
from .topics import TopicServer
from .workspace_topics import SessionsIndex, WorkspaceConfig, config_options

PREVIEW_CHARS = 120


class Sessions:
    def __init__(self, topics: TopicServer, *, clock: Callable[[], float],
                 slash_commands: list[dict[str, Any]] | None = None) -> None:
        self.topics = topics
        self.clock = clock
        self.slash_commands = slash_commands or []
        self.conversations: dict[str, ConversationProjection] = {}
        self.workspace_of: dict[str, str] = {}
        self.parent_of: dict[str, str] = {}
        self.created_at: dict[str, int] = {}
        self.indexes: dict[str, SessionsIndex] = {}
        self.configs: dict[str, WorkspaceConfig] = {}

    def get(self, session_id: Any) -> ConversationProjection | None:
        return self.conversations.get(session_id) if isinstance(session_id, str) else None

    def open(self, seed: SessionSeed, workspace_key: str, *, parent_session_id: str | None = None) -> ConversationProjection:
        projection = ConversationProjection(seed.session_id, seed.config, clock=self.clock,
                                            context_window=seed.context_window)
        self.conversations[seed.session_id] = projection
        self.workspace_of[seed.session_id] = workspace_key
        if parent_session_id:
            self.parent_of[seed.session_id] = parent_session_id
        self.created_at[seed.session_id] = int(self.clock())
        self.topics.add_source(projection)
        projection.log.listeners.append(lambda commit, sid=seed.session_id: self._summarise(sid, commit))
        _, workspace_config = self.workspace(workspace_key)
        if not workspace_config.config["configOptions"]:
            workspace_config.update({**workspace_config.config, "configOptions": config_options(seed.config)})
        self._summarise(seed.session_id, None)
        return projection

    def close(self, session_id: str) -> None:
        projection = self.conversations.pop(session_id, None)
        if projection is None:
            return
        self.topics.remove_source(projection.topic)
        workspace_key = self.workspace_of.pop(session_id, "")
        index = self.indexes.get(workspace_key)
        if index is not None:
            index.remove(session_id)

    def let_go(self, session_id: str) -> None:
        """The engine's resident pool drops the session from memory: its topic is no longer served and
        its commands are ``rejected proto.sessionNotFound`` until it is loaded back (a resume), but it
        stays in the store, so its line in the workspace's index stays."""
        projection = self.conversations.pop(session_id, None)
        if projection is not None:
            self.topics.remove_source(projection.topic)

    def workspace(self, workspace_key: str) -> tuple[SessionsIndex, WorkspaceConfig]:
        """The workspace's two topics, made (and served) the first time they are needed."""
        if workspace_key not in self.indexes:
            self.indexes[workspace_key] = SessionsIndex(workspace_key)
            self.configs[workspace_key] = WorkspaceConfig(workspace_key, self.slash_commands)
            self.topics.add_source(self.indexes[workspace_key])
            self.topics.add_source(self.configs[workspace_key])
        return self.indexes[workspace_key], self.configs[workspace_key]

    def _summarise(self, session_id: str, commit: Commit | None) -> None:
        """The session's line in its workspace's index, upserted when what it shows changed."""
        projection = self.conversations.get(session_id)
        index = self.indexes.get(self.workspace_of.get(session_id, ""))
        if projection is None or index is None:
            return
        previous = index.sessions.get(session_id) or {}
        summary = self._summary(session_id, projection, previous.get("lastActivityAt"))
        prompted = commit is not None and any(op["op"] == "row.appended" and op["row"]["kind"] == "userInput"
                                              for op in commit.ops)
        if prompted or "lastActivityAt" not in summary:
            summary["lastActivityAt"] = int(self.clock())
        if summary != previous:
            index.upsert(summary)

    def _summary(self, session_id: str, projection: ConversationProjection, activity: Any) -> dict[str, Any]:
        state = projection.state
        summary: dict[str, Any] = {
            "sessionId": session_id, "workspaceId": self.workspace_of[session_id], "title": state["meta"]["title"],
            "titleSource": state["meta"]["titleSource"], "phase": state["control"]["phase"],
            "sessionEnded": state["control"]["sessionEnded"], "hasBackgroundWork": bool(state["backgroundWorks"]),
            "createdAt": self.created_at[session_id]}
        if activity is not None:
            summary["lastActivityAt"] = activity
        if session_id in self.parent_of:
            summary["parentSessionId"] = self.parent_of[session_id]
        pending = state["pendingInteractions"]
        if pending:
            first = pending[0]
            line: dict[str, Any] = {"interactionId": first["interactionId"], "kind": first["kind"]}
            if first["payload"].get("toolName"):
                line["toolName"] = first["payload"]["toolName"]
            if "autoResolution" in first:
                line["autoResolution"] = first["autoResolution"]
            summary["pendingInteraction"] = line
            summary["pendingInteractionSummary"] = {
                "permissionCount": sum(1 for i in pending if i["kind"] == "permission"),
                "userInputCount": sum(1 for i in pending if i["kind"] == "userInput")}
        # A settled answer only: a preview per streamed delta would be an index frame per delta.
        answer = next((r for r in reversed(projection.rows.rows)
                       if r["kind"] == "assistantText" and r["state"] != "streaming" and r["text"]), None)
        if answer is not None:
            summary["lastAssistantPreview"] = answer["text"][:PREVIEW_CHARS]
        return summary

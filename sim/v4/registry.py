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
from .workspace_topics import SessionsIndex, WorkspaceConfig


class Sessions:
    def __init__(self, topics: TopicServer, *, clock: Callable[[], float],
                 slash_commands: list[dict[str, Any]] | None = None) -> None:
        self.topics = topics
        self.clock = clock
        self.slash_commands = slash_commands or []
        self.conversations: dict[str, ConversationProjection] = {}
        self.workspace_of: dict[str, str] = {}
        self.parent_of: dict[str, str] = {}
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
        self.topics.add_source(projection)
        projection.log.listeners.append(lambda commit, sid=seed.session_id: self._summarise(sid, commit))
        self.workspace(workspace_key)
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

    def workspace(self, workspace_key: str) -> tuple[SessionsIndex, WorkspaceConfig]:
        """The workspace's two topics, made (and served) the first time they are needed."""
        if workspace_key not in self.indexes:
            self.indexes[workspace_key] = SessionsIndex(workspace_key)
            self.configs[workspace_key] = WorkspaceConfig(workspace_key, self.slash_commands)
            self.topics.add_source(self.indexes[workspace_key])
            self.topics.add_source(self.configs[workspace_key])
        return self.indexes[workspace_key], self.configs[workspace_key]

    def _summarise(self, session_id: str, commit: Commit | None) -> None:
        projection = self.conversations.get(session_id)
        index = self.indexes.get(self.workspace_of.get(session_id, ""))
        if projection is None or index is None:
            return
        previous = index.sessions.get(session_id) or {}
        summary: dict[str, Any] = {"sessionId": session_id, "title": projection.state["meta"]["title"],
                                   "phase": projection.state["control"]["phase"],
                                   "lastActivityAt": previous.get("lastActivityAt", int(self.clock()))}
        if session_id in self.parent_of:
            summary["parentSessionId"] = self.parent_of[session_id]
        changed = {k: v for k, v in summary.items() if k != "lastActivityAt"} != {
            k: v for k, v in previous.items() if k != "lastActivityAt"}
        if changed or (commit is not None and any(op["op"] == "row.appended" and op["row"]["kind"] == "userInput"
                                                 for op in commit.ops)):
            summary["lastActivityAt"] = int(self.clock())
            index.upsert(summary)

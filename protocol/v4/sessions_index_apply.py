"""A ``sessions-index/<workspaceKey>`` topic's state: the workspace's sessions, for ``session/list``.

The snapshot is ``{protocolVersion, workspaceId, logEpoch, sessions: [summary]}`` (in no
order) and its deltas are ``session.upserted {session}`` (a summary replaced whole, keyed
by ``sessionId``) and ``session.removed {sessionId}``. A summary carries ``title``,
``phase``, ``lastActivityAt`` (epoch ms), ``parentSessionId`` for a fork, and the like.
Implements topic.Applier; an unknown op is skipped as ``NotModelled`` (docs/decisions.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..sessions import iso_time
from .conversation_apply import NotModelled
from zcode_acp.protocol.display_text import shown_title


@dataclass(frozen=True, slots=True)
class IndexReset:
    sessions: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class SessionUpserted:
    session: dict[str, Any]
    previous: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class SessionRemoved:
    session_id: str
    previous: dict[str, Any] | None


IndexChange = IndexReset | SessionUpserted | SessionRemoved | NotModelled


def _summary_problem(summary: Any) -> str | None:
    if not isinstance(summary, dict) or not isinstance(summary.get("sessionId"), str) or not summary["sessionId"]:
        return "a session summary without a sessionId"
    return None


def _activity(summary: dict[str, Any]) -> float:
    at = summary.get("lastActivityAt")
    return float(at) if isinstance(at, int | float) and not isinstance(at, bool) else 0.0


class SessionsIndexState:
    def __init__(self) -> None:
        self.sessions: dict[str, dict[str, Any]] = {}

    def reset(self, snapshot: dict[str, Any]) -> list[IndexChange] | str:
        sessions = snapshot.get("sessions")
        if not isinstance(sessions, list):
            return "the snapshot has no sessions array"
        for summary in sessions:
            problem = _summary_problem(summary)
            if problem:
                return problem
        self.sessions = {s["sessionId"]: s for s in sessions}
        return [IndexReset(tuple(sessions))]

    def apply(self, deltas: Sequence[dict[str, Any]]) -> list[IndexChange] | str:
        for delta in deltas:
            if delta["op"] == "session.upserted":
                problem = _summary_problem(delta.get("session"))
                if problem:
                    return problem
            elif delta["op"] == "session.removed" and not isinstance(delta.get("sessionId"), str):
                return "session.removed without a sessionId"
        changes: list[IndexChange] = []
        for delta in deltas:
            if delta["op"] == "session.upserted":
                summary = delta["session"]
                changes.append(SessionUpserted(summary, self.sessions.get(summary["sessionId"])))
                self.sessions[summary["sessionId"]] = summary
            elif delta["op"] == "session.removed":
                changes.append(SessionRemoved(delta["sessionId"], self.sessions.pop(delta["sessionId"], None)))
            else:
                changes.append(NotModelled(delta["op"], delta))
        return changes

    def session_infos(self, cwd: str) -> list[dict[str, Any]]:
        """ACP ``SessionInfo``s, most recent activity first (the engine sends them in no order)."""
        ordered = sorted(self.sessions.values(), key=_activity, reverse=True)
        infos = []
        for summary in ordered:
            info: dict[str, Any] = {"sessionId": summary["sessionId"], "cwd": cwd}
            if isinstance(summary.get("title"), str) and summary["title"]:
                info["title"] = shown_title(summary["title"])
            activity = summary.get("lastActivityAt")
            if isinstance(activity, int | float) and not isinstance(activity, bool):
                info["updatedAt"] = iso_time(activity)
            infos.append(info)
        return infos

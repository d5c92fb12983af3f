"""Session-level shapes shared by the Supervisor and the Session: workspaces, listings."""

from __future__ import annotations

from datetime import datetime, UTC
from typing import Any


def workspace(cwd: str) -> dict[str, str]:
    """The backend's workspace object for a project folder (its key is the folder)."""
    return {"workspacePath": cwd, "workspaceKey": cwd}


def iso_time(milliseconds: float) -> str:
    return datetime.fromtimestamp(milliseconds / 1000, tz=UTC).isoformat().replace("+00:00", "Z")


def list_sessions(result: Any, known: dict[str, str]) -> list[dict[str, Any]]:
    """Backend ``session/list`` → ACP ``SessionInfo``s (ISO 8601 ``updatedAt``).

    ``known`` maps backend session ids to the ACP ids the editor knows them by.
    """
    sessions = result.get("sessions") if isinstance(result, dict) else None
    out = []
    for item in sessions or []:
        if not isinstance(item, dict) or not isinstance(item.get("sessionId"), str):
            continue
        info: dict[str, Any] = {
            "sessionId": known.get(item["sessionId"], item["sessionId"]),
            "cwd": (item.get("workspace") or {}).get("workspacePath") or "/",
        }
        if isinstance(item.get("title"), str):
            info["title"] = item["title"]
        updated = item.get("updatedAt")
        if isinstance(updated, (int, float)) and not isinstance(updated, bool):
            info["updatedAt"] = iso_time(updated)
        out.append(info)
    return out

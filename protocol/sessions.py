"""Session-level shapes shared by the Supervisor and the Session: workspaces, listings."""

from __future__ import annotations

from datetime import datetime, UTC
from typing import Any
from zcode_acp.protocol.display_text import shown_title


def workspace(cwd: str) -> dict[str, str]:
    """The backend's workspace object for a project folder (its key is the folder)."""
    return {"workspacePath": cwd, "workspaceKey": cwd}


# The engine's workspace reference (zcodeWorkspaceRefSchema, strict): nothing else is sent back.
WORKSPACE_KEYS = ("workspacePath", "workspaceIdentity", "remoteSessionId", "workspaceKey")


def own_workspace(listing: Any, backend_session_id: Any) -> dict[str, str] | None:
    """The engine's own workspace reference for a session, from ``session/list`` (or a resume answer).

    The 0.16 engine keys a workspace by more than its folder; resuming a session
    under another key loses its model selection (docs/backend-protocol.md §11).
    Its ``workspaceIdentity`` (a remote or isolated workspace) and ``remoteSessionId``
    are kept too: a resume without them rebuilds the session on the wrong machine.
    """
    sessions = listing.get("sessions") if isinstance(listing, dict) else None
    for item in sessions if isinstance(sessions, list) else []:
        if isinstance(item, dict) and item.get("sessionId") == backend_session_id:
            found = item.get("workspace")
            if isinstance(found, dict) and isinstance(found.get("workspaceKey"), str) and found["workspaceKey"]:
                path = found.get("workspacePath")
                ref = {"workspacePath": str(path) if isinstance(path, str) else "", "workspaceKey": found["workspaceKey"]}
                for key in ("workspaceIdentity", "remoteSessionId"):
                    if isinstance(found.get(key), str) and found[key].strip():
                        ref[key] = found[key]
                return {key: ref[key] for key in WORKSPACE_KEYS if key in ref}
    return None


ZCODE_PROTOCOL = "ZCode Protocol"  # the name the 0.16 engine gives its protocol (``protocol.name``)


def speaks_the_zcode_protocol(result: Any) -> bool:
    """A create/resume answer that names ``protocol: {name: "ZCode Protocol"}``: the 0.16 engine (0.16+).

    Its snapshot says so before any turn runs, so the bridge never calls what 0.16 removed
    (``session/steer``, ``session/rewind``) to find out.
    """
    protocol = result.get("protocol") if isinstance(result, dict) else None
    return isinstance(protocol, dict) and protocol.get("name") == ZCODE_PROTOCOL


def iso_time(milliseconds: float) -> str:
    return datetime.fromtimestamp(milliseconds / 1000, tz=UTC).isoformat().replace("+00:00", "Z")


def list_sessions(result: Any, known: dict[str, str], titles: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Backend ``session/list`` → ACP ``SessionInfo``s (ISO 8601 ``updatedAt``).

    ``known`` maps backend session ids to the ACP ids the editor knows them by; ``titles``
    (by ACP id) are the ones the bridge keeps itself, and win over the engine's.
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
            info["title"] = shown_title(item["title"])
        if titles and info["sessionId"] in titles:
            info["title"] = shown_title(titles[info["sessionId"]])
        updated = item.get("updatedAt")
        if isinstance(updated, (int, float)) and not isinstance(updated, bool):
            info["updatedAt"] = iso_time(updated)
        out.append(info)
    return out


def without_deleted(result: Any, deleted: set[str]) -> Any:
    """A backend ``session/list`` result without the sessions ``session/delete`` removed."""
    if not deleted or not isinstance(result, dict) or not isinstance(result.get("sessions"), list):
        return result
    kept = [item for item in result["sessions"] if not (isinstance(item, dict) and item.get("sessionId") in deleted)]
    return {**result, "sessions": kept}

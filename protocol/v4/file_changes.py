"""A turn's file changes, from the engine's ledger to what an ACP client is given.

``v4/conversation/fileChanges`` answers, for one turn (its ``turnHeader`` row), each file the
turn wrote: lines added and removed, how many writes by which tools, and unified hunks whose
lines carry their ``" "``/``"+"``/``"-"`` prefix (``zcode-protocol-v4/transport.ts``). The
bridge passes that on (``session/fileChanges``, docs/protocol-mapping.md) and adds each file's
hunks as one unified-diff text, the form every editor and terminal already shows.
"""

from __future__ import annotations

from typing import Any

from .commands import Base, RowTarget

METHOD = "v4/conversation/fileChanges"


def request_params(session_id: str, target: RowTarget, base: Base) -> dict[str, Any]:
    """The request, pinned to what the client saw: the engine refuses a stale epoch or target."""
    if base.log_epoch is None:
        raise ValueError("fileChanges needs the conversation's log epoch (no snapshot yet)")
    return {"sessionId": session_id, "target": target.wire(), "baseRevision": base.revision,
            "baseLogEpoch": base.log_epoch}


def unified_diff(path: str, patches: list[dict[str, Any]]) -> str:
    """One file's hunks as unified-diff text (``--- a/…``, ``+++ b/…``, ``@@ … @@``, the lines)."""
    if not patches:
        return ""
    out = [f"--- a/{path}", f"+++ b/{path}"]
    for hunk in patches:
        out.append(f"@@ -{hunk.get('oldStart', 0)},{hunk.get('oldLines', 0)} "
                   f"+{hunk.get('newStart', 0)},{hunk.get('newLines', 0)} @@")
        out.extend(str(line) for line in hunk.get("lines") or [])
    return "\n".join(out) + "\n"


def for_client(result: Any, row_id: int) -> dict[str, Any]:
    """The engine's answer as ``session/fileChanges`` returns it: its totals and items, each with its diff."""
    answer = result if isinstance(result, dict) else {}
    items = []
    for item in answer.get("items") or []:
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            continue
        patches = [hunk for hunk in item.get("patches") or [] if isinstance(hunk, dict)]
        items.append({**item, "patches": patches, "diff": unified_diff(item["path"], patches)})
    return {"rowId": row_id, "files": answer.get("files", len(items)), "additions": answer.get("additions", 0),
            "deletions": answer.get("deletions", 0), "state": answer.get("state", "active"), "items": items}

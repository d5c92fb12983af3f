"""``v4/conversation/fileChanges``: what one turn wrote, as the engine's ledger answers it.

The desktop asks it for a turn's ``turnHeader`` row (``target: {rowId, entityId}``, pinned to
the revision and log epoch the client saw) and shows the answer as a diff: per file the lines
added and removed, how many writes, by which tools, and unified hunks whose lines carry their
``" "``/``"+"``/``"-"`` prefix (``zcode-protocol-v4/transport.ts``,
``v4ConversationFileChangesResultSchema``). The engine keeps that ledger from its write tools;
the simulator reads it back from the turn's settled ``toolCall`` rows (``Write``: the new
content against nothing, ``Edit``: ``old_string`` → ``new_string``, ``MultiEdit``: each edit).
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from .conversation_state import ConversationState
from .errors import INVALID_PARAMS, V4Error

WRITE_TOOLS = ("Write", "Edit", "MultiEdit")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def answer(projection: ConversationState, params: dict[str, Any]) -> dict[str, Any]:
    target = params.get("target")
    if not isinstance(target, dict) or not isinstance(target.get("rowId"), int) \
            or not isinstance(target.get("entityId"), str):
        raise V4Error(INVALID_PARAMS, "Invalid params: target: Required")
    if not isinstance(params.get("baseRevision"), int) or not isinstance(params.get("baseLogEpoch"), str):
        raise V4Error(INVALID_PARAMS, "Invalid params: baseRevision and baseLogEpoch: Required")
    if params["baseLogEpoch"] != projection.log.log_epoch:
        raise V4Error(INVALID_PARAMS, "the conversation's log epoch moved on", {"reasonCode": "proto.staleLogEpoch"})
    header = projection.rows.get(target["rowId"])
    if header is None or header.get("kind") != "turnHeader" or header.get("entityId") != target["entityId"]:
        raise V4Error(INVALID_PARAMS, "no such turn in this conversation", {"reasonCode": "proto.staleTarget"})
    files: dict[str, dict[str, Any]] = {}
    for row in turn_rows(projection.rows.rows, target["rowId"]):
        for path, old, new in writes(row):
            entry = files.setdefault(path, {"path": path, "additions": 0, "deletions": 0, "writeCount": 0,
                                            "toolNames": [], "patches": []})
            entry["writeCount"] += 1
            if row["toolName"] not in entry["toolNames"]:
                entry["toolNames"].append(row["toolName"])
            for hunk in hunks(old, new):
                entry["patches"].append(hunk)
                entry["additions"] += sum(1 for line in hunk["lines"] if line.startswith("+"))
                entry["deletions"] += sum(1 for line in hunk["lines"] if line.startswith("-"))
    items = list(files.values())
    return {"files": len(items), "additions": sum(i["additions"] for i in items),
            "deletions": sum(i["deletions"] for i in items), "state": "active", "items": items}


def turn_rows(rows: list[dict[str, Any]], header_row_id: int) -> list[dict[str, Any]]:
    """The rows of the turn a ``turnHeader`` opens: up to the next turn's header."""
    out: list[dict[str, Any]] = []
    inside = False
    for row in rows:
        if row.get("rowId") == header_row_id:
            inside = True
            continue
        if inside and row.get("kind") == "turnHeader":
            break
        if inside:
            out.append(row)
    return out


def writes(row: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(path, before, after) for each write a settled write tool's row made."""
    if row.get("kind") != "toolCall" or row.get("toolName") not in WRITE_TOOLS or row.get("status") != "success":
        return []
    tool_input = row.get("input") if isinstance(row.get("input"), dict) else {}
    path = tool_input.get("file_path")
    if not isinstance(path, str) or not path:
        return []
    if row["toolName"] == "Write":
        return [(path, "", str(tool_input.get("content") or ""))]
    edits = tool_input.get("edits") if row["toolName"] == "MultiEdit" else [tool_input]
    return [(path, str(edit.get("old_string") or ""), str(edit.get("new_string") or ""))
            for edit in edits or [] if isinstance(edit, dict)]


def hunks(before: str, after: str) -> list[dict[str, Any]]:
    """Unified hunks of ``before`` → ``after``, each line with its prefix, as the engine's ledger has them."""
    out: list[dict[str, Any]] = []
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=3):
        found = _HUNK.match(line)
        if found:
            old_start, old_lines, new_start, new_lines = found.groups()
            out.append({"oldStart": int(old_start), "oldLines": int(old_lines if old_lines is not None else 1),
                        "newStart": int(new_start), "newLines": int(new_lines if new_lines is not None else 1),
                        "lines": []})
        elif out and not line.startswith(("---", "+++")):
            out[-1]["lines"].append(line)
    return out

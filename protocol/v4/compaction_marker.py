"""Where a compaction the bridge asked for stands: its own ``timelineMarker`` (rows.ts, goal-compact.ts).

The engine takes a ``compact`` while a turn runs (``accepted``, no result) and queues it: the
compaction runs when its turn in the queue comes, after the turn that was running, so the end of
"a turn" is not the end of the compaction. Its marker ``{type: "compact", status}`` names the
command that asked for it (``sourceCommandId``) and says ``running``, then ``success``,
``cancelled`` or ``failed``: that is the compaction's own end.

Pure: rows in, a status out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

ENDED = {"success": "session_compacted", "cancelled": "session_compact_cancelled", "failed": "session_compact_failed"}
"""A final marker status → the legacy ``state.updated`` reason that ends a compaction (compaction.py)."""


def marker_status(rows: Sequence[Any], command_id: str) -> str | None:
    """The status of the compact marker made for ``command_id``, or None while there is none."""
    for row in reversed(rows):
        if not isinstance(row, dict) or row.get("kind") != "timelineMarker" or row.get("sourceCommandId") != command_id:
            continue
        marker = row.get("marker")
        if isinstance(marker, dict) and marker.get("type") == "compact" and isinstance(marker.get("status"), str):
            return str(marker["status"])
    return None


def ended_reason(rows: Sequence[Any], command_id: str) -> str | None:
    """The legacy reason that ends the compaction of ``command_id``, once its marker is final."""
    status = marker_status(rows, command_id)
    return ENDED.get(status) if status is not None else None

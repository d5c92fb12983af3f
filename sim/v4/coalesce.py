"""The engine's flush-window merge of conversation deltas (``zcode-protocol-v4/coalesce.ts``).

Within one flush window (``core.ts`` DELIVERY_PROFILES: 30 ms for the ``continuous`` profile)
the CLI sends what its log committed as one frame, merged so that applying the merged ops
ends in the same state as applying them one by one:

* adjacent ``row.delta`` ops on the same row and path become one append;
* adjacent ``state.updated`` ops become one patch, the later keys replacing the earlier;
* a ``row.upserted`` drops the earlier appends to that row (the whole row implies them), back
  to that row's previous append/upsert; adjacent upserts of one row keep the last;
* ``row.removed`` is a barrier no rule crosses.

Written here from those rules; ``workflowRun.*`` ops (never simulated) are left as they are.
"""

from __future__ import annotations

from typing import Any

FLUSH_WINDOW_MS = 30.0
"""The ``continuous`` delivery profile's flush window."""


def coalesce(ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    merged: list[dict[str, Any]] = []
    for op in ops:
        kind = op.get("op")
        if kind == "row.upserted":
            row_id = op["row"]["rowId"]
            index = len(merged) - 1
            while index >= 0:
                earlier = merged[index]
                if earlier["op"] == "row.removed":
                    break
                if earlier["op"] == "row.delta" and earlier["rowId"] == row_id:
                    del merged[index]
                elif earlier["op"] in ("row.upserted", "row.appended") and earlier["row"]["rowId"] == row_id:
                    break
                index -= 1
        last = merged[-1] if merged else None
        if last is not None and kind == "row.delta" and last["op"] == "row.delta" and \
                (last["rowId"], last["path"]) == (op["rowId"], op["path"]):
            merged[-1] = {**last, "append": last["append"] + op["append"]}
        elif last is not None and kind == "state.updated" and last["op"] == "state.updated":
            merged[-1] = {"op": "state.updated", "patch": {**last["patch"], **op["patch"]}}
        elif last is not None and kind == "row.upserted" and last["op"] == "row.upserted" and \
                last["row"]["rowId"] == op["row"]["rowId"]:
            merged[-1] = op
        else:
            merged.append(op)
    return merged

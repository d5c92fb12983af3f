"""The conversation's rows, kept as the engine's projection keeps them.

Rows are self-contained (``zcode-protocol-v4/rows.ts``): each carries ``rowId`` (grows,
never reused), ``turnId``, ``entityId``, ``createdAt`` and ``createdAtSeq``; structure
changes replace a row whole (``row.upserted``), text grows by appends (``row.delta``),
and an edit or retry cuts the branch (``row.removed {fromRowId}``: that row and every
later one). Every change is recorded as the op a subscriber receives. An op carries its
own copy of the row (and a snapshot its own copies), so ops already handed out stay what
they were while the store grows a streaming row's text in place: appending is then
amortised O(1) per delta instead of a copy of the whole text per delta (a long stream
would cost quadratic time).
"""

from __future__ import annotations

from typing import Any

_DROP = object()
"""A value in ``upsert`` changes that removes the key (the engine clears it at a terminal state)."""


class RowStore:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self._index: dict[int, int] = {}
        self.total_count = 0
        self.first_row_id: int | None = None
        self.next_row_id = 1
        self.ops: list[dict[str, Any]] = []
        """Ops of the commit being built; the projection takes them."""

    DROP = _DROP

    def get(self, row_id: int | None) -> dict[str, Any] | None:
        position = None if row_id is None else self._index.get(row_id)
        return None if position is None else self.rows[position]

    def window(self) -> dict[str, Any]:
        return {"window": [dict(row) for row in self.rows], "totalCount": self.total_count,
                "firstRowId": self.first_row_id}

    def append(self, kind: str, base: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
        row_id = self.next_row_id
        self.next_row_id += 1
        row = {"rowId": row_id, **base, "entityId": base.get("entityId") or f"{kind}-{row_id}", "kind": kind, **fields}
        self._index[row_id] = len(self.rows)
        self.rows.append(row)
        self.total_count += 1
        if self.first_row_id is None:
            self.first_row_id = row_id
        self.ops.append({"op": "row.appended", "row": dict(row)})
        return row

    def upsert(self, row_id: int, changes: dict[str, Any]) -> dict[str, Any] | None:
        position = self._index.get(row_id)
        if position is None:
            return None
        row = {k: v for k, v in {**self.rows[position], **changes}.items() if v is not _DROP}
        self.rows[position] = row
        self.ops.append({"op": "row.upserted", "row": dict(row)})
        return row

    def append_text(self, row_id: int, path: str, text: str) -> None:
        """``text`` added at ``path`` ("text", "inputText", "summaryText" or "output.text")."""
        position = self._index.get(row_id)
        if position is None or not text:
            return
        row = self.rows[position]
        if path == "output.text":
            output = row["output"]
            row["output"] = {**output, "text": output["text"] + text}  # a new dict: op copies share the old one
        else:
            # Taken out of the row first, the string is referenced once, so CPython grows it in place.
            grown = row.pop(path)
            grown += text
            row[path] = grown
        self.ops.append({"op": "row.delta", "rowId": row_id, "path": path, "append": text})

    def remove_from(self, row_id: int) -> list[dict[str, Any]]:
        removed = [row for row in self.rows if row["rowId"] >= row_id]
        if not removed:
            return []
        self.rows = [row for row in self.rows if row["rowId"] < row_id]
        if self.first_row_id is not None and row_id <= self.first_row_id:
            self.total_count, self.first_row_id = 0, None
        else:
            self.total_count -= len(removed)
        self._index = {row["rowId"]: position for position, row in enumerate(self.rows)}
        self.ops.append({"op": "row.removed", "fromRowId": row_id})
        return removed

    def take_ops(self) -> list[dict[str, Any]]:
        ops, self.ops = self.ops, []
        return ops

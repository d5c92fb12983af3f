"""A ``conversation/<sessionId>`` topic's state, and what each snapshot or delta changed.

The state is the engine's conversation snapshot: session-wide keys (``control``,
``inputRouting``, ``meta``, ``config``, ``usage``, ``queue``, ``pendingInteractions``,
``plan``, ``backgroundWorks``, …) and ``rows`` (a window of the newest rows, each
self-contained, keyed by a ``rowId`` that only grows). Its deltas are a closed set, and
are applied exactly as the engine's reference ``apply`` does:

* ``row.appended``: a row at the end (``totalCount`` + 1, ``firstRowId`` set if unset);
* ``row.upserted``: a row replaced whole by ``rowId``; a row outside the window is left
  alone (the engine only reaches evicted rows through ``rowsRange``);
* ``row.removed``: every row with ``rowId >= fromRowId`` goes (an edit or retry branch);
  removing from the first row resets the count and ``firstRowId``;
* ``row.delta``: text appended to a streaming row at ``text`` (assistantText, reasoning),
  ``inputText`` or ``output.text`` (toolCall), ``summaryText`` (subagent); a path the row
  does not have, or a row not in the window, is a no-op;
* ``state.updated``: each key of ``patch`` replaces that key whole, never merged into;
* ``pluginUi.*``: live-only notices, the state does not change.

Every apply returns typed change records (``RowAppended``, ``TextAppended``, …) so a
translator can turn them into ACP updates as deltas, never by resending what the client
already has. A frame's deltas are all checked before any is applied. The frames given
to it are never modified: a row that streams is copied once and then grown in place,
which keeps a row of N deltas linear instead of quadratic.

Two choices where the engine's own client is stricter (docs/decisions.md): an op this
module does not know, and ``workflowRun.*`` (whose state it does not keep), are reported
as ``NotModelled`` and skipped instead of failing the frame, because failing it would ask
a resync that brings the same op back, for ever; and a patch may carry keys the engine
added after this was written, which replace their key like any other (only ``rows``,
``seq``, ``logEpoch`` and ``sessionId``, which a patch never carries, are refused).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

STREAMABLE_PATHS = frozenset(("text", "inputText", "output.text", "summaryText"))
_PATCH_FORBIDDEN = frozenset(("rows", "seq", "logEpoch", "sessionId", "protocolVersion"))
_LIVE_ONLY = frozenset(
    ("pluginUi.resourceUpdated", "pluginUi.resourceListChanged", "pluginUi.instanceClosed", "pluginUi.appToolCall")
)


@dataclass(frozen=True, slots=True)
class Reset:
    """The whole state was replaced by a snapshot: re-read everything."""

    state: dict[str, Any]
    rows: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class RowAppended:
    row: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RowReplaced:
    row: dict[str, Any]
    previous: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RowsRemoved:
    from_row_id: int | float
    removed: tuple[dict[str, Any], ...]


class TextAppended(NamedTuple):
    """One per ``row.delta``, most of a streaming turn: a named tuple, as immutable as the
    other records and made in a third of a frozen dataclass's time."""

    row_id: int
    path: str
    text: str
    row: dict[str, Any]
    """The row after the append. A streaming row grows in place (see ``_append``): read
    it before the next frame is applied, which appends to the same dict."""


class TextsAppended(NamedTuple):
    """A run of ``row.delta`` ops to one row's text (``append_run``): each append as the
    client is to see it, and the row after the last."""

    row_id: int
    path: str
    texts: Sequence[str]
    row: dict[str, Any]
    """The row after the appends; it grows in place as ``TextAppended``'s does."""


@dataclass(frozen=True, slots=True)
class StateReplaced:
    key: str
    value: Any
    previous: Any
    """None when the key was absent before."""


@dataclass(frozen=True, slots=True)
class LiveNotice:
    delta: dict[str, Any]


@dataclass(frozen=True, slots=True)
class NotModelled:
    op: str
    delta: dict[str, Any]


Change = (Reset | RowAppended | RowReplaced | RowsRemoved | TextAppended | TextsAppended | StateReplaced | LiveNotice
          | NotModelled)


def _row_problem(row: Any) -> str | None:
    if not isinstance(row, dict):
        return "a row is not an object"
    row_id = row.get("rowId")
    if not isinstance(row_id, int) or isinstance(row_id, bool):
        return "a row has no integer rowId"
    if not isinstance(row.get("kind"), str):
        return f"row {row_id} has no kind"
    return None


def _delta_problem(delta: dict[str, Any]) -> str | None:
    op = delta["op"]
    if op == "row.delta":  # first: most of a streaming turn
        row_id, path, append = delta.get("rowId"), delta.get("path"), delta.get("append")
        # A path that is not a string is refused before the set is asked (a list would raise).
        if (not isinstance(row_id, int) or isinstance(row_id, bool) or not isinstance(path, str)
                or path not in STREAMABLE_PATHS or not isinstance(append, str)):
            return "row.delta needs an integer rowId, a streamable path and a string append"
        return None
    if op in ("row.appended", "row.upserted"):
        return _row_problem(delta.get("row"))
    if op == "row.removed":
        value = delta.get("fromRowId")
        return None if isinstance(value, int | float) and not isinstance(value, bool) else "row.removed without fromRowId"
    if op == "state.updated":
        patch = delta.get("patch")
        if not isinstance(patch, dict):
            return "state.updated without a patch object"
        forbidden = patch.keys() & _PATCH_FORBIDDEN
        return f"a patch may not replace {sorted(forbidden)}" if forbidden else None
    return None


def _text_location(row: dict[str, Any], path: str) -> tuple[str, str] | None:
    """Where ``path`` keeps its text in this row, as (outer key, inner key or ""); None when the row has none."""
    kind = row.get("kind")
    if path == "text" and kind in ("assistantText", "reasoning") and isinstance(row.get("text"), str):
        return ("text", "")
    if path == "inputText" and kind == "toolCall" and isinstance(row.get("inputText"), str):
        return ("inputText", "")
    if path == "output.text" and kind == "toolCall":
        output = row.get("output")
        if isinstance(output, dict) and isinstance(output.get("text"), str):
            return ("output", "text")
        return None
    if path == "summaryText" and kind == "subagent" and isinstance(row.get("summaryText"), str):
        return ("summaryText", "")
    return None


def _private_copy(row: dict[str, Any], outer: str, inner: str) -> dict[str, Any]:
    """A copy of ``row`` the applier may grow in place (the text's container copied too)."""
    copy = dict(row)
    if inner:
        copy[outer] = dict(copy[outer])
    return copy


def _grow(container: dict[str, Any], key: str, text: str) -> None:
    """Append ``text`` to ``container[key]`` in place.

    The string is taken out of the dict first so that this is its only reference:
    CPython then extends it where it lies instead of copying it whole, which keeps a
    row streamed in N deltas linear rather than quadratic. (On another interpreter
    this is an ordinary, correct, concatenation.)
    """
    grown = container.pop(key)
    grown += text
    container[key] = grown


def pack_json(value: Any) -> bytes | None:
    """``value`` as compressed JSON, or None when it is not JSON (made by hand, not decoded)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), check_circular=False)
    except (TypeError, ValueError):
        return None
    # surrogatepass: a decoded frame may hold a lone surrogate; it comes back as it was.
    return zlib.compress(text.encode("utf-8", "surrogatepass"))


def unpack_json(packed: bytes) -> Any:
    return json.loads(zlib.decompress(packed).decode("utf-8", "surrogatepass"))


class ConversationState:
    """The conversation as the engine last described it; implements topic.Applier."""

    def __init__(self) -> None:
        self._state: dict[str, Any] = {}
        self._rows: list[dict[str, Any]] = []
        self._packed: bytes | None = None
        """The window while the conversation rests (``pack``): its rows as compressed JSON."""
        self.total_count = 0
        self.first_row_id: int | None = None
        self._index: dict[int, int] = {}
        self._private: set[int] = set()
        """Rows whose dict in ``rows`` is the applier's own copy (never the caller's frame),
        so their text may grow in place. See ``_append``."""

    @property
    def state(self) -> dict[str, Any]:
        """Every snapshot key but ``rows`` (unpacked first if it rests packed)."""
        if self._packed is not None:
            self._unpack()
        return self._state

    @state.setter
    def state(self, state: dict[str, Any]) -> None:
        if self._packed is not None:
            self._unpack()
        self._state = state

    @property
    def rows(self) -> list[dict[str, Any]]:
        """The window of rows, oldest first (unpacked first if it rests packed)."""
        if self._packed is not None:
            self._unpack()
        return self._rows

    @rows.setter
    def rows(self, rows: list[dict[str, Any]]) -> None:
        if self._packed is not None:
            self._unpack()
        self._rows = rows
        self._reindex()

    def row(self, row_id: int) -> dict[str, Any] | None:
        rows = self.rows
        position = self._index.get(row_id)
        return None if position is None else rows[position]

    @property
    def packed(self) -> bool:
        """Whether the state and rows rest packed (reading either unpacks them)."""
        return self._packed is not None

    def pack(self) -> bool:
        """Hold the state and the window as compressed JSON until it is next read or changed; whether it is.

        A window of dicts costs ~1.5 KiB a row (a dict, its keys and values, each an object);
        packed, a 10-turn conversation is ~2 KiB. The owner calls it when no turn runs (an
        idle session), so the rows are unpacked at most once a turn, by the next frame (or a
        load, a fork, a turn's notice) — whatever reads them gets the same rows, as fresh dicts.
        """
        if self._packed is None:
            packed = pack_json([self._state, self._rows])
            if packed is None:
                return False
            self._packed, self._state, self._rows, self._index = packed, {}, [], {}
            self._private.clear()
        return True

    def _unpack(self) -> None:
        assert self._packed is not None
        state, rows = unpack_json(self._packed)
        self._packed, self._state, self._rows = None, state, rows
        self._reindex()
        # Every row is now this applier's own copy, never a caller's frame: it may grow in place.
        self._private = {row["rowId"] for row in rows}

    # -- topic.Applier -------------------------------------------------------------------

    def reset(self, snapshot: dict[str, Any]) -> list[Change] | str:
        if self._packed is not None:
            self._unpack()  # a refused snapshot leaves the state as it was
        rows = snapshot.get("rows")
        if not isinstance(rows, dict) or not isinstance(rows.get("window"), list):
            return "the snapshot has no rows.window"
        for row in rows["window"]:
            problem = _row_problem(row)
            if problem:
                return problem
        total, first = rows.get("totalCount"), rows.get("firstRowId")
        self.state = {k: v for k, v in snapshot.items() if k != "rows"}
        self.rows = list(rows["window"])  # and indexed
        self.total_count = total if isinstance(total, int) and not isinstance(total, bool) else len(self.rows)
        self.first_row_id = first if isinstance(first, int) and not isinstance(first, bool) else None
        self._private.clear()
        return [Reset(dict(self.state), tuple(self.rows))]

    def apply(self, deltas: Sequence[dict[str, Any]]) -> list[Change] | str:
        for delta in deltas:
            problem = _delta_problem(delta)
            if problem:
                return problem
        if self._packed is not None:
            self._unpack()
        changes: list[Change] = []
        shared: set[int] = set()  # rows a change of this frame already points to
        for delta in deltas:
            self._apply_one(delta, changes, shared)
        return changes

    def append_run(self, row_id: int, path: str, texts: Sequence[str]) -> list[Change]:
        """Apply a run of well-formed ``row.delta`` ops to one row (``streaming.text_run`` checked
        each as ``apply`` would): what ``apply`` does with them frame by frame, the row grown
        once. No such row, or no text at ``path``: nothing, as for each of them one by one."""
        if self._packed is not None:
            self._unpack()
        position = self._index.get(row_id)
        if position is None:
            return []
        row = self._append(position, path, "".join(texts), set())
        return [] if row is None else [TextsAppended(row_id, path, texts, row)]

    # -- inside --------------------------------------------------------------------------

    def _reindex(self) -> None:
        self._index = {row["rowId"]: position for position, row in enumerate(self._rows)}

    def _append(self, position: int, path: str, text: str, shared: set[int]) -> dict[str, Any] | None:
        """Append a ``row.delta`` to the row at ``position``: the row after it, or None (no such text).

        Copying the row and its text at every delta made streaming quadratic. The row is
        copied once, at its first append, and then grown in place while it streams; it is
        copied again only when a change of the same frame already points to it, so every
        change of a frame still shows the row as it was after that change (a ``TextAppended``
        of an earlier frame sees later appends: read it before applying the next frame).
        The caller's frames are never modified.
        """
        row = self.rows[position]
        location = _text_location(row, path)
        if location is None:
            return None
        outer, inner = location
        row_id = row["rowId"]
        if row_id not in self._private or row_id in shared:
            row = _private_copy(row, outer, inner)
            self.rows[position] = row
            self._private.add(row_id)
        _grow(row[outer] if inner else row, inner or outer, text)
        shared.add(row_id)
        return row

    def _apply_one(self, delta: dict[str, Any], changes: list[Change], shared: set[int]) -> None:
        op = delta["op"]
        if op == "row.delta":  # first: most of a streaming turn
            row_id, path, text = delta["rowId"], delta["path"], delta["append"]
            position = self._index.get(row_id)
            if position is None:
                return
            updated = self._append(position, path, text, shared)
            if updated is not None:
                changes.append(TextAppended(row_id, path, text, updated))
        elif op == "row.appended":
            row = delta["row"]
            self._index[row["rowId"]] = len(self.rows)
            self.rows.append(row)
            self._private.discard(row["rowId"])
            self.total_count += 1
            if self.first_row_id is None:
                self.first_row_id = row["rowId"]
            changes.append(RowAppended(row))
        elif op == "row.upserted":
            row = delta["row"]
            position = self._index.get(row["rowId"])
            if position is not None:
                previous, self.rows[position] = self.rows[position], row
                self._private.discard(row["rowId"])
                changes.append(RowReplaced(row, previous))
        elif op == "row.removed":
            self._remove_from(delta["fromRowId"], changes)
        elif op == "state.updated":
            for key, value in delta["patch"].items():
                before = self.state.get(key)
                self.state[key] = value
                changes.append(StateReplaced(key, value, before))
        elif op in _LIVE_ONLY:
            changes.append(LiveNotice(delta))
        else:
            changes.append(NotModelled(op, delta))

    def _remove_from(self, from_row_id: int | float, changes: list[Change]) -> None:
        kept = [row for row in self.rows if row["rowId"] < from_row_id]
        removed = tuple(row for row in self.rows if row["rowId"] >= from_row_id)
        whole_branch = self.first_row_id is not None and from_row_id <= self.first_row_id
        self.rows = kept
        self._private.difference_update(row["rowId"] for row in removed)
        if whole_branch:
            # Row ids keep growing after a rewind to the first turn; an old first row id
            # would make the gap look like older rows still to load.
            self.total_count, self.first_row_id = 0, None
        else:
            self.total_count = max(0, self.total_count - len(removed))
        self._reindex()
        if removed:
            changes.append(RowsRemoved(from_row_id, removed))

"""NDJSON framing: one JSON value per ``\\n``-terminated UTF-8 line.

Both sides of the bridge use it. Encoding goes through ujson with
``ensure_ascii=False`` (UTF-8 stays UTF-8) and ``escape_forward_slashes=False``
(paths stay readable), and refuses NaN/Infinity, which JSON does not have.
"""

from __future__ import annotations

import re
from typing import Any

import ujson

from .errors import INVALID_REQUEST, PARSE_ERROR, RpcError
from .i18n import EN, t
from .jsonrpc import is_response, request_id_or_none

# 50 MiB: an image prompt is base64 inside one line; anything bigger is an
# error, not a reason to grow memory without bound.
DEFAULT_MAX_LINE = 50 * 1024 * 1024

# ujson.loads accepts NaN, Infinity and numbers beyond double range (a big
# exponent, or 309+ digits with a fraction), which all become inf. Cheap byte
# scans decide whether the exact (walking) check is needed.
_OUT_OF_RANGE = re.compile(rb"[eE][+-]?[0-9]{3}|[0-9]{309}")

# What one client frame may cost (docs/reliability.md, item 14). Parsing makes
# one Python object per JSON value, ~64 bytes or more each: 50 MB of
# ``[{},{},…]`` would be 17 million dicts (1.3 GB). Every value but the first
# of a container follows a ``,``, and every container opens with ``{`` or
# ``[``, so counting those three bytes (a C loop each) bounds the object count
# before anything is parsed. Strings never count as more than one value, so a
# base64 image stays cheap whatever its size.
MAX_FRAME_VALUES = 1_000_000
_COUNT_FROM = 64 * 1024  # a shorter line cannot hold enough values to matter


class FrameError(RpcError):
    """A line that cannot become a frame; ``code`` says which JSON-RPC error, and ``request_id``
    the id to answer with: the frame's own wherever it could be read (issue 29), else null."""

    request_id: Any = None


def _frame_error(code: int, key: str, request_id: Any = None, /, **params: Any) -> FrameError:
    """The error for a line, in the bridge's words (the catalog's ``key``: the connection words it)."""

    def wording(lang: str) -> str:
        return t(lang, key, **params)

    error = FrameError(code, wording(EN), None, wording)
    error.request_id = request_id
    return error


# The leading members of an object whose values are simple (a string without escapes, a number,
# true/false/null), then ``"id"`` with a string or number: an id read from a line that is not
# (or not all) JSON. Only members before the id, at the top level, so a nested "id" never counts.
_SIMPLE = rb'(?:"[^"\\]*"|-?[0-9][0-9.eE+-]*|true|false|null)'
_LEADING_ID = re.compile(rb'\s*\{\s*(?:"[^"\\]*"\s*:\s*' + _SIMPLE + rb'\s*,\s*)*?"id"\s*:\s*(-?[0-9]+|"[^"\\]*")\s*[,}]')


def readable_id(raw: bytes) -> Any:
    """The id a broken line names at its top level before anything unreadable, or None."""
    match = _LEADING_ID.match(raw[:4096])
    if match is None:
        return None
    text = match.group(1)
    try:
        value = ujson.loads(text)
    except (ValueError, TypeError):
        return None
    return value if isinstance(value, (str, int)) and request_id_or_none({"id": value}) is not None else None


def encode(obj: Any) -> bytes:
    """One frame → one line of bytes, newline included."""
    return ujson.dumps(
        obj, ensure_ascii=False, escape_forward_slashes=False, allow_nan=False
    ).encode("utf-8") + b"\n"


def dumps(obj: Any) -> str:
    return ujson.dumps(obj, ensure_ascii=False, escape_forward_slashes=False, allow_nan=False)


def decode(line: bytes | str, strict: bool = True) -> Any:
    """One line → one JSON value, or FrameError(-32700).

    ``strict`` is for input from a client, which the bridge does not trust: it
    also rejects numbers beyond double range (``1e999``, ``999…9.5``), which
    ujson would turn into infinity, and a frame of more than
    ``MAX_FRAME_VALUES`` values (-32600, before parsing it). The backend's hot
    path turns it off, because scanning every event costs more than decoding
    it, and ``encode`` refuses a non-finite number anyway, so one can never
    reach a client.
    """
    raw = line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass")
    if strict and len(raw) > _COUNT_FROM:
        values = raw.count(b",") + raw.count(b"{") + raw.count(b"[")
        if values > MAX_FRAME_VALUES:
            raise _frame_error(INVALID_REQUEST, "error.frame.too_many_values", readable_id(raw),
                               values=f"{values:,}", limit=f"{MAX_FRAME_VALUES:,}")
    try:
        value = ujson.loads(line)
    except (ValueError, TypeError) as exc:
        raise _frame_error(PARSE_ERROR, "error.frame.parse", readable_id(raw), detail=str(exc)) from None
    suspect = b"NaN" in raw or b"Infinity" in raw or (strict and _OUT_OF_RANGE.search(raw) is not None)
    if suspect and _has_non_finite(value):
        raise _frame_error(PARSE_ERROR, "error.frame.non_finite", request_id_or_none(value))
    return value


def decode_object(line: bytes | str, strict: bool = True) -> dict[str, Any]:
    """Decode a line that must hold one JSON object (a frame).

    A JSON array is a batch, which neither ACP nor this bridge supports:
    ``-32600``. Any other non-object is also ``-32600``, and so is an object
    with neither a ``method`` nor a usable ``id``.
    """
    value = decode(line, strict)
    if isinstance(value, dict):
        if "method" not in value and request_id_or_none(value) is None and not is_response(value):
            # Neither a request, a notification nor an answerable response
            # (``{}``, ``{"jsonrpc":"2.0"}``, an id that is not a valid id):
            # the only answer left is -32600 with a null id, which is this one.
            raise _frame_error(INVALID_REQUEST, "error.request.kind")
        return value
    if isinstance(value, list):
        raise _frame_error(INVALID_REQUEST, "error.frame.batch")
    raise _frame_error(INVALID_REQUEST, "error.frame.not_an_object")


def decode_backend_lines(lines: list[bytes]) -> tuple[list[dict[str, Any]], int, bytes | None]:
    """(frames, how many lines were skipped, the first skipped line) for one read of the
    backend's stdout; the first skipped line lets the caller say what a misbehaving CLI printed.

    The same rules as ``decode_object(line, strict=False)`` per line, but the
    NaN/Infinity test is one scan of the whole read, not one per line, and no
    exception is raised per bad line: this is the hot path (docs/performance.md).
    """
    loads = ujson.loads
    frames: list[dict[str, Any]] = []
    skipped = 0
    first_skipped: bytes | None = None
    for line in lines:
        try:
            value = loads(line)
        except (ValueError, TypeError):
            value = None
        if type(value) is dict and ("method" in value or request_id_or_none(value) is not None):
            frames.append(value)
            continue
        skipped += 1
        if first_skipped is None:
            first_skipped = line[:300]
    whole = b"\n".join(lines)  # one copy, two scans: cheaper than two tests per line
    if b"NaN" in whole or b"Infinity" in whole:
        kept = [frame for frame in frames if not _has_non_finite(frame)]
        skipped += len(frames) - len(kept)
        frames = kept
    return frames, skipped, first_skipped


def _has_non_finite(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            if item != item or item in (float("inf"), float("-inf")):
                return True
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


class LineSplitter:
    """Cuts a byte stream into lines, enforcing a maximum line size.

    ``feed`` returns the complete lines in the chunk (without the newline). A
    line longer than ``max_line`` is discarded whole and reported once as an
    ``oversized`` count so the caller can answer with an error; the splitter
    resynchronises at the next newline.
    """

    __slots__ = ("_max", "_parts", "_size", "_skipping", "oversized")

    def __init__(self, max_line: int = DEFAULT_MAX_LINE) -> None:
        self._max = max_line
        self._parts: list[bytes] = []
        self._size = 0
        self._skipping = False
        self.oversized = 0

    def feed(self, chunk: bytes) -> list[bytes]:
        lines = chunk.split(b"\n")
        tail = lines.pop()
        out: list[bytes] = []
        for piece in lines:
            if self._skipping:
                self._skipping = False
                continue
            if self._parts:
                self._parts.append(piece)
                piece = b"".join(self._parts)
                self._parts = []
                self._size = 0
            if len(piece) > self._max:
                self.oversized += 1
                continue
            if piece.strip():
                out.append(piece)
        if tail and not self._skipping:
            self._size += len(tail)
            if self._size > self._max:
                self.oversized += 1
                self._parts = []
                self._size = 0
                self._skipping = True
            else:
                self._parts.append(tail)
        return out

    def pending(self) -> bytes:
        """What is left without a newline (a partial last line at EOF)."""
        return b"".join(self._parts)

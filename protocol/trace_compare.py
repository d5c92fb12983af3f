"""Comparing two runs of a trace: normalisation, a readable diff, what the environment adds.

Pure, like ``trace.py``. Generated ids and timestamps are replaced by stable names in order of
appearance, so a replay's frames can be compared with the recorded ones (docs/traces.md,
"what is compared").
"""

from __future__ import annotations

import difflib
import re
from typing import Any

import ujson
from .shapes import obj
from .trace import REDACTED
from .trace_redaction import CONTENT, CONTENT_KEYED, MIN_LITERAL, SECRET_KEY, structural

# -- normalisation ----------------------------------------------------------------------

GENERATED = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?<![0-9a-zA-Z])[0-9a-f]{32}(?![0-9a-zA-Z])")
TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
# Numbers that are wall-clock times (the 0.16 engine: ``issuedAt``, ``timestamp`` in epoch milliseconds).
TIME_KEY = re.compile(r"(?:At|[Tt]imestamp|[Tt]ime)$")
EPOCH_FLOOR = 10**9  # seconds since 1970 are past this since 2001; milliseconds far past it


class Normaliser:
    """Makes what legitimately differs between two runs equal.

    Generated ids (UUIDs, 32-hex message ids, also inside longer strings such
    as ``<id>-thought``) become ``<id-N>`` in order of first appearance, so the
    same id stays the same name throughout; timestamps become ``<time>`` (text
    ones anywhere, epoch numbers under a ``…At`` / ``…time`` key); the
    ids of requests the bridge sends (and the ``requestId`` that withdraws one)
    become ``<req-N>``.
    """

    def __init__(self, content: bool = False, known: dict[str, str] | None = None) -> None:
        self.ids: dict[str, str] = {}
        self.requests: dict[Any, str] = {}
        self.content = content  # the trace's texts are ``<N chars, hash H>``: compare lengths
        self.known = known or {}  # hash → the stand-in a replay chose for it (see fill_content)

    def _text(self, value: str, key: str | None) -> str | None:
        """Content mode: a text, or a recorded placeholder, → ``<N chars>``.

        Only the length is compared: which texts were equal is not (one text
        built differently — ``\n`` made ``\r\n`` — would renumber every later
        one and bury the real difference). A placeholder the replay chose a
        stand-in for counts with the stand-in's length (docs/traces.md).
        """
        match = CONTENT.fullmatch(value)
        if match is not None:
            chosen = self.known.get(match.group(2))
            return f"<{len(chosen) if chosen is not None else int(match.group(1))} chars>"
        if structural(key) or value == REDACTED:
            return None
        return f"<{len(value)} chars>"

    def _id(self, match: re.Match[str]) -> str:
        value = match.group(0)
        name = self.ids.get(value)
        if name is None:
            name = self.ids[value] = f"<id-{len(self.ids) + 1}>"
        return name

    def value(self, value: Any, key: str | None = None) -> Any:
        if isinstance(value, str):
            if self.content:
                text = self._text(value, key)
                if text is not None:
                    return text
            return TIMESTAMP.sub("<time>", GENERATED.sub(self._id, value))
        if isinstance(value, int) and not isinstance(value, bool) and value >= EPOCH_FLOOR \
                and key is not None and TIME_KEY.search(key):
            return "<time>"
        if isinstance(value, dict):
            if self.content and key in CONTENT_KEYED:
                return {self._text(k, None) or k: self.value(v, k) for k, v in value.items()}
            return {k: self.value(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v, key) for v in value]
        return value

    def request_id(self, value: Any) -> str:
        name = self.requests.get(value)
        if name is None:
            name = self.requests[value] = f"<req-{len(self.requests) + 1}>"
        return name

    def frame(self, frame: dict[str, Any], outbound_requests: bool = True) -> dict[str, Any]:
        """A frame the bridge sent; with ``outbound_requests`` its own request ids are renamed."""
        out: dict[str, Any] = self.value(frame)
        if outbound_requests and "method" in frame and "id" in frame:
            out["id"] = self.request_id(frame["id"])
        params = out.get("params")
        if outbound_requests and frame.get("method") == "$/cancel_request" and isinstance(params, dict):
            params["requestId"] = self.request_id(frame["params"].get("requestId"))
        return out


def canonical(frame: Any) -> str:
    return ujson.dumps(frame, ensure_ascii=False, escape_forward_slashes=False, sort_keys=True)


def describe(frame: dict[str, Any]) -> str:
    """A short name for a frame: its method (and update kind), or what it answers."""
    method = frame.get("method")
    params = obj(frame.get("params"))
    if method == "session/update" and isinstance(params.get("update"), dict):
        return f"session/update {params['update'].get('sessionUpdate')}"
    if method == "session/event":
        return f"session/event {params.get('type')}"
    if method:
        return str(method)
    return f"answer to {frame.get('id')!r}" + (" (error)" if "error" in frame else "")


def field_differences(expected: Any, actual: Any, path: str = "") -> list[str]:
    """``path: expected → actual`` for every leaf that differs."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        out: list[str] = []
        for key in list(expected) + [k for k in actual if k not in expected]:
            sub = f"{path}.{key}" if path else str(key)
            if key not in actual:
                out.append(f"{sub}: {_short(expected[key])} → (missing)")
            elif key not in expected:
                out.append(f"{sub}: (missing) → {_short(actual[key])}")
            else:
                out.extend(field_differences(expected[key], actual[key], sub))
        return out
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        out = []
        for index, (e, a) in enumerate(zip(expected, actual, strict=True)):
            out.extend(field_differences(e, a, f"{path}[{index}]"))
        return out
    if expected != actual:
        return [f"{path or '(frame)'}: {_short(expected)} → {_short(actual)}"]
    return []


def _short(value: Any, limit: int = 160) -> str:
    text = canonical(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def diff_frames(expected: list[dict[str, Any]], actual: list[dict[str, Any]], title: str = "") -> list[str]:
    """A readable difference of two (normalised) frame sequences; [] when equal.

    Frames that changed are shown field by field; frames only one side has are
    shown whole, marked ``-`` (recorded, not sent now) or ``+`` (sent now, not recorded).
    """
    left = [canonical(f) for f in expected]
    right = [canonical(f) for f in actual]
    if left == right:
        return []
    out = [f"--- {title} (recorded: {len(expected)} frames, replayed: {len(actual)})" if title else
           f"--- recorded: {len(expected)} frames, replayed: {len(actual)}"]
    matcher = difflib.SequenceMatcher(a=left, b=right, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag == "replace":
            pairs = min(i2 - i1, j2 - j1)
            for k in range(pairs):
                e, a = expected[i1 + k], actual[j1 + k]
                out.append(f"~ frame {i1 + k + 1} ({describe(e)}) changed:")
                out.extend("    " + line for line in field_differences(e, a))
            for k in range(i1 + pairs, i2):
                out.append(f"- frame {k + 1} ({describe(expected[k])}): {_short(expected[k], 400)}")
            for k in range(j1 + pairs, j2):
                out.append(f"+ frame {k + 1} ({describe(actual[k])}): {_short(actual[k], 400)}")
        elif tag == "delete":
            for k in range(i1, i2):
                out.append(f"- frame {k + 1} ({describe(expected[k])}): {_short(expected[k], 400)}")
        elif tag == "insert":
            for k in range(j1, j2):
                out.append(f"+ frame {k + 1} ({describe(actual[k])}): {_short(actual[k], 400)}")
    return out


# -- what the bridge's environment contributes ---------------------------------------------

def literals_from_env(environ: dict[str, str]) -> list[str]:
    """Values of secret-looking variables (``*_TOKEN``, ``*_API_KEY`` …): scrubbed wherever they appear."""
    return [value for name, value in environ.items() if SECRET_KEY.search(name) and len(value) >= MIN_LITERAL]


def replay_env(environ: dict[str, str]) -> dict[str, str]:
    """The settings that change what the bridge sends, kept in the header so a replay runs alike."""
    return {name: value for name, value in sorted(environ.items())
            if (name.startswith("ZCODE_ACP_") or name == "ZCODE_DISALLOWED_TOOLS")
            and not name.startswith("ZCODE_ACP_TRACE") and not SECRET_KEY.search(name)}


def session_of(frame: dict[str, Any]) -> str | None:
    """The ``params.sessionId`` of a frame, if it has one."""
    params = frame.get("params")
    session_id = params.get("sessionId") if isinstance(params, dict) else None
    return session_id if isinstance(session_id, str) else None


# Updates whose place among a session's other updates is not deterministic in this
# build: the title (``session_info_update``) comes from a backend notification the
# Session handles itself, while the turn's events take one more actor hop, so it can
# overtake them. A replay compares these as a set (docs/traces.md, "what is compared").
UNORDERED_UPDATES: frozenset[str] = frozenset()  # none since the title keeps pipe order (docs/traces.md)


def split_unordered(frames: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(frames whose order counts, the others sorted canonically)."""
    ordered: list[dict[str, Any]] = []
    loose: list[dict[str, Any]] = []
    for frame in frames:
        params = obj(frame.get("params"))
        update = obj(params.get("update"))
        (loose if update.get("sessionUpdate") in UNORDERED_UPDATES else ordered).append(frame)
    return ordered, sorted(loose, key=canonical)

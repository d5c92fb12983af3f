"""The trace format: one JSON line per frame on either side of the bridge.

Pure: no I/O, no clocks. The writer (``actors/transport/trace.py``) hands in
bytes and times; the replay tools (``sim/replay.py``, ``cli/replay.py``)
read records back. docs/traces.md describes the format for users.

A trace file is a header line, then records::

    {"trace": "zcode-acp", "version": 1, "bridge": "0.1.0", "started": "...Z", ...}
    {"t": 0.0123, "dir": "client>bridge", "conn": "stdio", "frame": {...}}
    {"t": 0.0131, "dir": "bridge>backend", "conn": "backend-1", "frame": {...}}
    {"t": 0.0200, "dir": "backend>bridge", "conn": "backend-1", "raw": "not json"}
    {"t": 0.9000, "dir": "client>bridge", "conn": "stdio", "closed": true}
    {"t": 0.9050, "dir": "backend>bridge", "conn": "backend-1", "exit": 0}
    {"t": 0.9100, "dir": "backend>bridge", "conn": "backend-1", "dropped": {"chunks": 2, "bytes": 81920}}
    {"t": 0.9500, "end": {"droppedChunks": 2, "droppedBytes": 81920}}

``t`` is monotonic seconds since the trace started. This module also holds the
redaction rules (secrets always; content on request), the normalisation that
makes two runs comparable (generated ids, timestamps), and a readable diff.
"""

from __future__ import annotations

import difflib
import hashlib
import hmac
import re
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Iterable

import ujson
from .shapes import obj

FORMAT = "zcode-acp"
VERSION = 1

CLIENT_IN = "client>bridge"
CLIENT_OUT = "bridge>client"
BACKEND_OUT = "bridge>backend"
BACKEND_IN = "backend>bridge"
DIRECTIONS = (CLIENT_IN, CLIENT_OUT, BACKEND_OUT, BACKEND_IN)
INBOUND = frozenset({CLIENT_IN, BACKEND_IN})  # lines someone else wrote: may not be JSON

REDACTED = "[redacted]"


class TraceError(ValueError):
    """A file that is not a trace this build can read."""


# -- writing ---------------------------------------------------------------------------

def dumps(obj: Any) -> bytes:
    return ujson.dumps(obj, ensure_ascii=False, escape_forward_slashes=False).encode("utf-8")


def header(bridge_version: str, started: str, redact_content: bool, env: dict[str, str], part: int = 1) -> bytes:
    """The first line of every trace file (and of every rotated part)."""
    head = {"trace": FORMAT, "version": VERSION, "bridge": bridge_version, "started": started,
            "redacted": ["secrets", "content"] if redact_content else ["secrets"], "env": env}
    if part > 1:
        head["part"] = part
    return dumps(head) + b"\n"


def record_prefix(t: float, direction: str, conn: str) -> bytes:
    """Everything of a frame record before the frame itself: ``frame`` is spliced in as bytes."""
    return b'{"t":%.6f,"dir":"%s","conn":%s,"frame":' % (t, direction.encode(), dumps(conn))


def frame_records(prefix: bytes, lines: list[bytes]) -> bytes:
    """Records for lines that are known JSON objects, sharing one time (one read or write)."""
    if not lines:
        return b""
    return prefix + (b"}\n" + prefix).join(lines) + b"}\n"


def raw_record(t: float, direction: str, conn: str, line: bytes) -> bytes:
    return dumps({"t": round(t, 6), "dir": direction, "conn": conn,
                  "raw": line.decode("utf-8", "replace")}) + b"\n"


def closed_record(t: float, direction: str, conn: str) -> bytes:
    return dumps({"t": round(t, 6), "dir": direction, "conn": conn, "closed": True}) + b"\n"


def exit_record(t: float, direction: str, conn: str, code: int | None) -> bytes:
    return dumps({"t": round(t, 6), "dir": direction, "conn": conn, "exit": code}) + b"\n"


def dropped_record(t: float, direction: str, conn: str, chunks: int, size: int) -> bytes:
    return dumps({"t": round(t, 6), "dir": direction, "conn": conn,
                  "dropped": {"chunks": chunks, "bytes": size}}) + b"\n"


def end_record(t: float, dropped_chunks: int, dropped_bytes: int) -> bytes:
    return dumps({"t": round(t, 6), "end": {"droppedChunks": dropped_chunks, "droppedBytes": dropped_bytes}}) + b"\n"


def all_objects(blob: bytes, count: int) -> bool:
    """``count`` newline-joined lines each start with ``{`` (one C-level count) and the last ends with ``}``.

    A JSON line holds no raw newline, so ``\\n{`` occurs only where lines meet. A line that
    starts like an object but is cut short still gets through: the reader skips it (``corrupt``).
    """
    return blob[:1] == b"{" and blob[-1:] == b"}" and blob.count(b"\n{") == count - 1


def looks_like_object(line: bytes) -> bool:
    """Cheap shape check before a line is spliced into a record unparsed."""
    return line[:1] == b"{" and line.rstrip()[-1:] == b"}"


# -- redaction -------------------------------------------------------------------------

# Keys whose string values are secrets. Numbers under them stay (``outputTokens``: 42 is a count).
# Each alternative contains one of SCREEN_WORDS (lower-cased): the screen must never miss what this matches.
SECRET_KEY = re.compile(
    r"token|secret|passw(?:or)?d|cookie|credential|authoriz|^(?:x-)?auth$"
    r"|(?:api|private|access|client|session)[-_]?key$",
    re.IGNORECASE)
# Keys whose every value is a secret: MCP server environments and HTTP headers.
SECRET_MAPS = frozenset({"env", "headers", "httpHeaders", "environment"})
# A line that contains none of these (lower-cased) holds no secret key and no secret map:
# it is written as it came, unparsed. Few and long needles: each is one pass over the bytes.
SCREEN_WORDS = (b"token", b"secret", b"passw", b"cookie", b"credential", b"auth", b'key"', b'"env', b'headers"')
# Inside strings we look at (MCP args and URLs): ``--api-key=abc``, ``?token=abc``, ``user:pass@``.
INLINE_SECRET = re.compile(
    r"((?:token|api[-_]?key|secret|passw(?:or)?d|auth\w*|key|sig\w*)[\"']?\s*[=:]\s*)([^&\s\"',;]+)", re.IGNORECASE)
URL_USERINFO = re.compile(r"(://[^/@\s:]+:)([^/@\s]+)(@)")
# Under these keys a string is structure, not user content (kept by content redaction).
STRUCTURAL = frozenset({
    "jsonrpc", "method", "id", "type", "kind", "sessionUpdate", "status", "role", "seq", "outcome", "optionId",
    "stopReason", "mode", "modeId", "currentModeId", "providerId", "modelId", "currentModelId", "configId",
    "resultType", "inputSource", "inputVisibility", "code", "name", "toolName", "action", "decision", "priority",
    "protocolVersion", "reason", "source", "category", "current", "value", "thoughtLevel", "format", "encoding",
    "mimeType", "language", "level", "state", "phase", "event", "tool", "interaction",
})
# Under these keys a dict's keys are content too (a question's answers are keyed by its text).
CONTENT_KEYED = frozenset({"answers"})
MIN_LITERAL = 8  # secret values shorter than this are not searched for elsewhere (too many false hits)
MAX_LEARNED = 64  # values learned from redactions; past this the caller screens everything in full


def _inline_scrub(text: str) -> str:
    return URL_USERINFO.sub(r"\1" + REDACTED + r"\3", INLINE_SECRET.sub(r"\1" + REDACTED, text))


class Redactor:
    """Removes secrets (always) and, with ``content``, every user text from frames.

    ``literals`` are secret values known to the bridge (the remote token, its
    own secret-looking environment variables): they are replaced wherever they
    appear, in any string. Every value redacted under a secret key is learned
    as a literal too, so the same secret is caught wherever it shows up again
    (the bridge relays what it reads: docs/traces.md). ``salt`` keys the
    content hashes, so equal texts in one trace hash alike and nothing can be
    looked up across traces.
    """

    def __init__(self, literals: Iterable[str] = (), content: bool = False, salt: bytes = b"") -> None:
        self.literals: list[str] = []
        self.literal_bytes: list[bytes] = []
        self.learned = 0
        self.redactions = 0  # values replaced so far (secrets only)
        self.content = content
        self.salt = salt
        for literal in literals:
            self._add_literal(literal)

    def _add_literal(self, value: str) -> None:
        if len(value) < MIN_LITERAL or value == REDACTED or value in self.literals:
            return
        self.literals.append(value)
        self.literals.sort(key=len, reverse=True)
        self.literal_bytes = [s.encode("utf-8") for s in self.literals]

    def _secret(self, value: str) -> str:
        self.redactions += 1
        if self.learned < MAX_LEARNED and len(value) >= MIN_LITERAL and value not in self.literals:
            self.learned += 1
            self._add_literal(value)
        return REDACTED

    def has_literal(self, data: bytes) -> bool:
        return any(literal in data for literal in self.literal_bytes)

    def needs_look(self, data: bytes) -> bool:
        """False when ``data`` certainly holds nothing to redact (it may then be written as it is)."""
        if self.content or self.has_literal(data):
            return True
        low = data.lower()
        return any(word in low for word in SCREEN_WORDS)

    def text(self, text: str) -> str:
        for literal in self.literals:
            if literal in text:
                self.redactions += 1
                text = text.replace(literal, REDACTED)
        return text

    def _content(self, text: str) -> str:
        digest = hmac.new(self.salt, text.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:12]
        return f"<{len(text)} chars, hash {digest}>"

    def scrub_all(self, value: Any) -> Any:
        """Every string leaf of ``value`` is a secret (numbers, booleans and null stay)."""
        if isinstance(value, str):
            return self._secret(value)
        if isinstance(value, dict):
            return {k: self.scrub_all(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.scrub_all(v) for v in value]
        return value

    def scrub_map(self, value: Any) -> Any:
        """``env`` / ``headers``: a dict of name → value, or a list of ``{name, value}``; names stay."""
        if isinstance(value, dict):
            return {k: self.scrub_all(v) for k, v in value.items()}
        if isinstance(value, list):
            return [{k: (v if k == "name" else self.scrub_all(v)) for k, v in item.items()}
                    if isinstance(item, dict) else self.scrub_all(item) for item in value]
        return self.scrub_all(value)

    def redact(self, value: Any, key: str | None = None, in_mcp: bool = False) -> Any:
        if isinstance(value, str):
            text = self.text(value)
            if in_mcp and key in ("args", "url", "command"):
                scrubbed = _inline_scrub(text)
                if scrubbed != text:
                    self.redactions += 1
                    text = scrubbed
            if self.content and not _structural(key):
                return self._content(text)
            return text
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            pair_secret = isinstance(value.get("name"), str) and SECRET_KEY.search(value["name"]) is not None
            # A setting's choice ({"value", "label"}: a thought level, a mode) is named like a model: kept.
            choice = isinstance(value.get("value"), str) and isinstance(value.get("label"), str)
            for k, v in value.items():
                if choice and k == "label":
                    out[k] = self.redact(v, "name", in_mcp)
                elif self.content and k in CONTENT_KEYED and isinstance(v, dict):
                    out[k] = {self._content(self.text(name)): self.redact(item, name, in_mcp) for name, item in v.items()}
                elif k in SECRET_MAPS:
                    out[k] = self.scrub_map(v)
                elif (SECRET_KEY.search(k) and not isinstance(v, (int, float, bool)) and v is not None) \
                        or (pair_secret and k == "value"):
                    out[k] = self.scrub_all(v)
                else:
                    out[k] = self.redact(v, k, in_mcp or k == "mcpServers")
            return out
        if isinstance(value, list):
            return [self.redact(v, key, in_mcp) for v in value]
        return value

    def line(self, line: bytes) -> bytes | None:
        """A JSON line → the redacted frame as bytes; None when it is not a JSON object."""
        try:
            frame = ujson.loads(line)
        except (ValueError, TypeError):
            return None
        if not isinstance(frame, dict):
            return None
        return dumps(self.redact(frame))

    def raw(self, line: bytes) -> bytes:
        """A line that is not JSON: literals and inline secrets go, content goes when asked."""
        text = line.decode("utf-8", "replace")
        if self.content:
            return self._content(text).encode("utf-8")
        return _inline_scrub(self.text(text)).encode("utf-8")


def _structural(key: str | None) -> bool:
    return key is not None and (key in STRUCTURAL or key.endswith(("Id", "_id", "Ids")))


# -- replaying a content-redacted trace ------------------------------------------------------

CONTENT = re.compile(r"<(\d+) chars, hash ([0-9a-f]{12})>")
# Keys whose text must look like an absolute path for the bridge to take it (``cwd`` above all).
PATH_KEYS = frozenset({"cwd", "path", "paths", "workspacePath", "workspaceKey", "filePath", "file_path", "root",
                       "additionalDirectories"})
_LETTERS = str.maketrans("0123456789abcdef", "ghijklmnopqrstuv")  # no hex, digit or date: nothing to normalise


def stand_in(length: int, digest: str, key: str | None = None) -> str:
    """The text a replay puts where a redacted one was: same length, one per hash, under a path key a path."""
    letters = digest.translate(_LETTERS)
    body = (letters * (length // len(letters) + 1))[:length]
    return "/" + body[1:] if key in PATH_KEYS and length else body


def fill_content(value: Any, key: str | None = None, known: dict[str, str] | None = None) -> Any:
    """Every ``<N chars, hash H>`` of a content-redacted frame replaced by its stand-in.

    ``known`` maps hashes to chosen stand-ins (a workspace folder must exist:
    the replay makes one, of another length, and both of its sides use it).
    """
    if isinstance(value, str):
        match = CONTENT.fullmatch(value)
        if match is None:
            return value
        if known and match.group(2) in known:
            return known[match.group(2)]
        return stand_in(int(match.group(1)), match.group(2), key)
    if isinstance(value, dict):
        return {k: fill_content(v, k, known) for k, v in value.items()}
    if isinstance(value, list):
        return [fill_content(v, key, known) for v in value]
    return value


def workspace_placeholders(frames: Iterable[dict[str, Any]]) -> list[str]:
    """The hashes of redacted ``cwd`` values in these frames (the bridge needs them to be real folders)."""
    found: dict[str, None] = {}

    def walk(value: Any, key: str | None) -> None:
        if isinstance(value, str) and key == "cwd":
            match = CONTENT.fullmatch(value)
            if match:
                found.setdefault(match.group(2), None)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)

    for frame in frames:
        walk(frame, None)
    return list(found)


def is_content_redacted(header: dict[str, Any]) -> bool:
    redacted = header.get("redacted")
    return isinstance(redacted, list) and "content" in redacted


# -- reading ---------------------------------------------------------------------------

@dataclass
class Trace:
    header: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)
    corrupt: list[int] = field(default_factory=list)  # line numbers that were not JSON

    def frames(self, direction: str, conn: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("dir") == direction and (conn is None or r.get("conn") == conn)
                and "frame" in r]

    def conns(self, direction: str) -> list[str]:
        seen: dict[str, None] = {}
        for record in self.records:
            if record.get("dir") == direction and isinstance(record.get("conn"), str):
                seen.setdefault(record["conn"], None)
        return list(seen)

    def dropped(self) -> int:
        return sum(1 for r in self.records if "dropped" in r)


def parse(text: str | bytes) -> Trace:
    """Read a trace (rotated parts may be concatenated: later headers are skipped)."""
    lines: list[Any] = list(text.splitlines())
    head: dict[str, Any] | None = None
    trace = Trace(header={})
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = ujson.loads(line)
        except ValueError:
            trace.corrupt.append(number)
            continue
        if not isinstance(item, dict):
            trace.corrupt.append(number)
            continue
        if "trace" in item:
            if item.get("trace") != FORMAT:
                raise TraceError(f"line {number}: not a zcode-acp trace ({item.get('trace')!r})")
            if not isinstance(item.get("version"), int) or item["version"] > VERSION:
                raise TraceError(f"line {number}: trace version {item.get('version')!r}; this build reads "
                                 f"version {VERSION} and older")
            if head is None:
                head = item
            continue
        if head is None:
            raise TraceError("the first line is not a zcode-acp trace header")
        trace.records.append(item)
    if head is None:
        raise TraceError("empty file: no trace header")
    trace.header = head
    return trace


def serialise(trace: Trace) -> bytes:
    return dumps(trace.header) + b"\n" + b"".join(dumps(r) + b"\n" for r in trace.records)


# -- normalisation ----------------------------------------------------------------------

GENERATED = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?<![0-9a-zA-Z])[0-9a-f]{32}(?![0-9a-zA-Z])")
TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
# Numbers that are wall-clock times (today's engine: ``issuedAt``, ``timestamp`` in epoch milliseconds).
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
        if _structural(key) or value == REDACTED:
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

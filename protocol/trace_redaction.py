"""The trace's redaction: secrets always, a prompt's content on request (docs/traces.md).

Pure, like ``trace.py``. ``Redactor`` rewrites a frame before it is written; the second half
goes the other way for a replay: a content-redacted trace's stand-ins become text the bridge
takes again (paths that look like paths, the same stand-in for the same hash).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Any
from collections.abc import Iterable

import ujson

from .trace import REDACTED, dumps

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
            if self.content and not structural(key):
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


def structural(key: str | None) -> bool:
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

"""The 0.16 engine checks ``mcpServers`` strictly: one bad entry fails the whole call.

The accepted shapes (docs/simulator.md, Dialects):

* stdio: ``{name, command, args, env: [{name, value}]}`` — no ``type`` key;
* http/sse: ``{name, type: "http"|"sse", url, headers: [{name, value}]}``.

Every key is required and no other key is allowed (``_meta`` included). The
error lists each problem with its path, the way a schema validator reports it.
"""

from __future__ import annotations

from typing import Any

from .model import SimError

STDIO_KEYS = ("name", "command", "args", "env")
REMOTE_KEYS = ("name", "type", "url", "headers")
PAIR_KEYS = ("name", "value")


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if value is None:
        return "null"
    return {dict: "object", list: "array", str: "string"}.get(type(value), type(value).__name__)


class _Issues:
    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def add(self, code: str, path: list[Any], message: str, **extra: Any) -> None:
        self.items.append({"code": code, "path": path, "message": message, **extra})

    def expect(self, value: Any, wanted: str, path: list[Any]) -> bool:
        if _kind(value) == wanted:
            return True
        message = "Required" if value is None else f"Expected {wanted}, received {_kind(value)}"
        self.add("invalid_type", path, message, expected=wanted, received=_kind(value))
        return False


def _pairs(value: Any, path: list[Any], issues: _Issues) -> None:
    if not issues.expect(value, "array", path):
        return
    for index, pair in enumerate(value):
        where = path + [index]
        if not issues.expect(pair, "object", where):
            continue
        _keys(pair, PAIR_KEYS, where, issues)
        for key in PAIR_KEYS:
            issues.expect(pair.get(key), "string", where + [key])


def _keys(entry: dict[str, Any], allowed: tuple[str, ...], path: list[Any], issues: _Issues) -> None:
    extra = [key for key in entry if key not in allowed]
    if extra:
        listed = ", ".join(f"'{key}'" for key in extra)
        issues.add("unrecognized_keys", path, f"Unrecognized key(s) in object: {listed}", keys=extra)


def _entry(entry: Any, path: list[Any], issues: _Issues) -> None:
    if not issues.expect(entry, "object", path):
        return
    if entry.get("type") in ("http", "sse"):
        _keys(entry, REMOTE_KEYS, path, issues)
        issues.expect(entry.get("name"), "string", path + ["name"])
        issues.expect(entry.get("url"), "string", path + ["url"])
        _pairs(entry.get("headers"), path + ["headers"], issues)
        return
    # Anything else must be a stdio entry, which has no "type" at all ("stdio" included).
    _keys(entry, STDIO_KEYS, path, issues)
    issues.expect(entry.get("name"), "string", path + ["name"])
    issues.expect(entry.get("command"), "string", path + ["command"])
    if issues.expect(entry.get("args"), "array", path + ["args"]):
        for index, arg in enumerate(entry["args"]):
            issues.expect(arg, "string", path + ["args", index])
    _pairs(entry.get("env"), path + ["env"], issues)


def check_mcp_servers(servers: Any, field: str = "mcpServers") -> None:
    """Raise -32602 listing every problem when ``servers`` does not fit the strict schema."""
    if servers is None:
        return
    issues = _Issues()
    if issues.expect(servers, "array", [field]):
        for index, entry in enumerate(servers):
            _entry(entry, [field, index], issues)
    if issues.items:
        text = "; ".join(".".join(str(p) for p in issue["path"]) + ": " + issue["message"] for issue in issues.items)
        raise SimError(-32602, f"Invalid params: {text}", {"issues": issues.items})

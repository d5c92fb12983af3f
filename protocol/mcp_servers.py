"""ACP ``mcpServers`` → the strict entries the 0.16 engine accepts (docs/protocol-mapping.md, "MCP servers").

The 0.16 engine validates ``session/create`` / ``session/resume`` entries
strictly: one key it does not know fails the whole call. The shapes:

* stdio: ``{name, command, args: [string], env: [{name, value}]}`` (no ``type``);
* http / sse: ``{name, type, url, headers: [{name, value}]}``.

Editors send more than that: ``_meta``, ``type: "stdio"``, ``env`` or
``headers`` as a map instead of a list of pairs, ``args``/``env`` left out.
Every entry is rebuilt from the fields above (so anything else is dropped), and
the seed's engine takes the same shapes. An entry that cannot be expressed (no
name, a stdio entry without a command, an unknown transport, a value that is
not text) is refused with ``-32602`` naming the entry, before any backend call.
"""

from __future__ import annotations

from typing import Any

from .errors import invalid_params

REMOTE_TYPES = ("http", "sse")


class Unfit(ValueError):
    """Why an entry cannot be passed to ZCode: a catalog key (``invalid.mcp.*``) and its fields."""

    def __init__(self, key: str, **params: Any) -> None:
        super().__init__(key)
        self.key = key
        self.params = params


def _describe(index: int, entry: Any) -> str:
    name = entry.get("name") if isinstance(entry, dict) else None
    return f"mcpServers[{index}]" + (f" ({name!r})" if isinstance(name, str) and name else "")


def _text(value: Any) -> str | None:
    """A string, or a number written as one (editors' JSON configs have ``PORT: 8080``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def _pairs(value: Any, field: str) -> list[dict[str, str]]:
    """``[{name, value}]`` from a list of pairs or a ``{name: value}`` map; ``Unfit`` naming the field."""
    if value is None:
        return []
    items: list[tuple[Any, Any]]
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = []
        for pair in value:
            if not isinstance(pair, dict):
                raise Unfit("invalid.mcp.pairs", field=field)
            items.append((pair.get("name"), pair.get("value")))
    else:
        raise Unfit("invalid.mcp.pairs_or_object", field=field)
    pairs = []
    for name, raw in items:
        text = _text(raw)
        if not isinstance(name, str) or not name or text is None:
            raise Unfit("invalid.mcp.pair", field=field, name=repr(name))
        pairs.append({"name": name, "value": text})
    return pairs


def _entry(entry: Any) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise Unfit("invalid.mcp.not_an_object")
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise Unfit("invalid.mcp.no_name")
    kind = entry.get("type")
    if kind in REMOTE_TYPES:
        url = entry.get("url")
        if not isinstance(url, str) or not url:
            raise Unfit("invalid.mcp.no_url", kind=kind)
        return {"name": name, "type": kind, "url": url, "headers": _pairs(entry.get("headers"), "headers")}
    if kind not in (None, "stdio"):
        raise Unfit("invalid.mcp.transport", kind=repr(kind))
    command = entry.get("command")
    if not isinstance(command, str) or not command:
        raise Unfit("invalid.mcp.no_command")
    args = entry.get("args")
    if args is None:
        args = []
    if not isinstance(args, list) or any(_text(arg) is None for arg in args):
        raise Unfit("invalid.mcp.args")
    return {"name": name, "command": command, "args": [_text(arg) for arg in args],
            "env": _pairs(entry.get("env"), "env")}


def normalize_mcp_servers(servers: Any) -> list[dict[str, Any]]:
    """The engine's strict entries for ACP ``mcpServers``; ``RpcError(-32602)`` naming a bad one."""
    if servers is None:
        return []
    if not isinstance(servers, list):
        raise invalid_params("mcpServers", "invalid.must_be_array")
    out = []
    for index, entry in enumerate(servers):
        try:
            out.append(_entry(entry))
        except Unfit as exc:
            raise invalid_params(_describe(index, entry), exc.key, **exc.params) from None
    return out

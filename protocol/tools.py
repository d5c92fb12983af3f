"""How a backend tool call looks as an ACP tool card: kind, title, locations, diffs."""

from __future__ import annotations

import re
from typing import Any
from .shapes import integer

_KINDS = {
    "Bash": "execute",
    "Edit": "edit",
    "Write": "edit",
    "MultiEdit": "edit",
    "NotebookEdit": "edit",
    "Read": "read",
    "Grep": "search",
    "Glob": "search",
    "LS": "search",
    "WebFetch": "fetch",
    "WebSearch": "fetch",
    "ExitPlanMode": "switch_mode",
    "EnterPlanMode": "switch_mode",
}

# Order matters: the first key present is the most telling summary.
_SUMMARY_KEYS = ("command", "description", "file_path", "path", "pattern", "query", "url")
_PATH_KEYS = ("file_path", "path", "notebook_path")
TITLE_LIMIT = 80


def tool_kind(tool_name: str | None) -> str:
    return _KINDS.get(tool_name or "", "other")


def _shorten(value: str, key: str, limit: int = TITLE_LIMIT) -> str:
    value = value.strip()
    if key in ("command", "description", "query", "pattern"):
        value = value.splitlines()[0] if value else value
    if len(value) <= limit:
        return value
    if key in _PATH_KEYS or key == "url":
        # The end of a path (file name, last folders) tells more than its root.
        return "…" + value[-(limit - 1):]
    return value[: limit - 1] + "…"


def tool_title(tool_name: str | None, tool_input: Any) -> str:
    name = tool_name or "Tool"
    if isinstance(tool_input, dict):
        for key in _SUMMARY_KEYS:
            value = tool_input.get(key)
            if isinstance(value, str) and value.strip():
                return f"{name}: {_shorten(value, key)}"
    return name


def tool_locations(tool_input: Any) -> list[dict[str, Any]]:
    if not isinstance(tool_input, dict):
        return []
    for key in _PATH_KEYS:
        path = tool_input.get(key)
        if isinstance(path, str) and path:
            location: dict[str, Any] = {"path": path}
            line = tool_input.get("line", tool_input.get("offset"))
            if isinstance(line, int) and not isinstance(line, bool) and line >= 0:
                location["line"] = line
            return [location]
    return []


def diff_content(tool_name: str | None, tool_input: Any) -> list[dict[str, Any]]:
    """ACP ``diff`` content for Edit / Write / MultiEdit, from the tool's input."""
    if not isinstance(tool_input, dict):
        return []
    path = tool_input.get("file_path") or tool_input.get("path")
    if not isinstance(path, str):
        return []
    if tool_name == "Write" and isinstance(tool_input.get("content"), str):
        return [{"type": "diff", "path": path, "oldText": None, "newText": tool_input["content"]}]
    if tool_name == "Edit" and isinstance(tool_input.get("new_string"), str):
        old = tool_input.get("old_string")
        return [{"type": "diff", "path": path, "oldText": old if isinstance(old, str) else None,
                 "newText": tool_input["new_string"]}]
    if tool_name == "MultiEdit" and isinstance(tool_input.get("edits"), list):
        diffs = []
        for edit in tool_input["edits"]:
            if isinstance(edit, dict) and isinstance(edit.get("new_string"), str):
                old = edit.get("old_string")
                diffs.append({"type": "diff", "path": path, "oldText": old if isinstance(old, str) else None,
                              "newText": edit["new_string"]})
        return diffs
    return []


def text_content(text: str) -> list[dict[str, Any]]:
    return [{"type": "content", "content": {"type": "text", "text": text}}]


def result_text(result: Any) -> str:
    """The readable output of a ``tool.updated`` ``result``."""
    if result is None:
        return ""
    if isinstance(result, str):
        return result
    if isinstance(result, dict):
        for key in ("content", "message", "error"):
            value = result.get(key)
            if isinstance(value, str):
                return value
            if isinstance(value, list):  # content blocks
                return "\n".join(
                    part.get("text", "") for part in value if isinstance(part, dict)
                )
        return ""
    return str(result)


def raw_output(result: Any) -> dict[str, Any]:
    """``rawOutput`` for a card update, as keyword fields: a JSON object or nothing.

    The schema allows any JSON there, but Toad drops a whole ``tool_call_update``
    whose ``rawOutput`` is a string (issue 21), and the engine's results are often
    bare text (Read, Edit, ExitPlanMode...). So an object passes as it is, any
    other value is wrapped as ``{"output": value}`` and no result sends no field.
    """
    if result is None:
        return {}
    if isinstance(result, dict):
        return {"rawOutput": result}
    return {"rawOutput": {"output": result}}


def result_failed(result: Any) -> bool:
    return isinstance(result, dict) and (result.get("success") is False or bool(result.get("error")))


def result_exit_code(result: Any) -> int | None:
    if isinstance(result, dict):
        perf = result.get("perf")
        if isinstance(perf, dict) and integer(perf.get("exitCode")) is not None:
            return integer(perf.get("exitCode"))
        return integer(result.get("exitCode"))
    return None


_AGENT_ID = re.compile(r"agentId:\s*(agent_[\w-]+)")
_USAGE = re.compile(
    r"<usage>\s*subagent_tokens:\s*(\d+)\s+tool_uses:\s*(\d+)\s+duration_ms:\s*(\d+)\s*</usage>"
)


def subagent_meta(text: str) -> dict[str, Any] | None:
    """``_meta.subagent`` from a synchronous Agent/Task result (docs/background-tasks.md)."""
    agent = _AGENT_ID.search(text)
    usage = _USAGE.search(text)
    if not agent and not usage:
        return None
    meta: dict[str, Any] = {}
    if agent:
        meta["agentId"] = agent.group(1)
    if usage:
        meta["tokens"] = int(usage.group(1))
        meta["toolUses"] = int(usage.group(2))
        meta["durationMs"] = int(usage.group(3))
    return meta


def new_suffix(previous: str, snapshot: str) -> str:
    """What a cumulative output snapshot adds to what was already sent.

    Snapshots normally extend the previous one. A tail that was trimmed at the
    front still overlaps it: the longest end of what was sent that begins the
    snapshot is found, and only what follows it is new. (Only this rare path
    scans; tails are bounded by the backend, so the scan is too.)
    """
    if snapshot.startswith(previous):
        return snapshot[len(previous):]
    if snapshot in previous:
        return ""
    for start in range(max(0, len(previous) - len(snapshot)), len(previous)):
        if snapshot.startswith(previous[start:]):
            return snapshot[len(previous) - start:]
    return snapshot

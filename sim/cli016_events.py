"""Today's event payloads in the shapes the engine's strict schemas require (docs/simulator.md, Dialects).

The scenario steps (``sim/runner.py``) are written once for both dialects, in the
seed's loose shapes (a tool result or error as bare text, no timings). Today's
engine validates every event against ``.strict()`` zod schemas before it writes
it, so this module fills in what they require and drops what they refuse:

* ``tool.updated`` ``started`` carries ``startedAt`` (ms) and no ``inputOmitted``
  (only ``scheduled`` may say that);
* ``result`` carries ``duration`` (ms since ``started``) and a result *object*,
  as the engine's executor builds it: ``{success: true, content: <text>,
  truncated, originalBytes, returnedBytes, budgetStrategy}`` — the text the model
  saw lives in ``content``;
* ``error`` carries an error *detail* ``{type, message}``;
* ``turn.started`` always has ``turnNumber`` and ``input``.
"""

from __future__ import annotations

from typing import Any

import ujson

# The executor's default result budget strategy (result-serialization.ts, DEFAULT_RESULT_BUDGET).
BUDGET_STRATEGY = "truncate"
PERMISSION_PREFIX = "Permission denied"


def tool_result(result: Any) -> dict[str, Any]:
    """A tool's result as the executor sends it; an object already in that shape passes as it is."""
    if isinstance(result, dict) and "success" in result:
        return result
    if isinstance(result, dict):
        content = result.get("content")
        text = content if isinstance(content, str) else ujson.dumps(result)
        extra = {k: v for k, v in result.items() if k != "content"}
    else:
        text = result if isinstance(result, str) else ujson.dumps(result)
        extra = {}
    size = len(text.encode("utf-8"))
    return {"success": True, "content": text, "truncated": False, "originalBytes": size,
            "returnedBytes": size, "budgetStrategy": BUDGET_STRATEGY, **extra}


def tool_error(error: Any) -> dict[str, Any]:
    """A tool's failure as an error detail ``{type, message}``."""
    if isinstance(error, dict) and isinstance(error.get("type"), str) and isinstance(error.get("message"), str):
        return error
    message = error.get("message") if isinstance(error, dict) else error
    text = str(message or "The tool failed")
    kind = "permission_denied" if text.startswith(PERMISSION_PREFIX) else "tool_execution_error"
    return {"type": kind, "message": text}


class Cli016Events:
    """Reshapes one session connection's events; remembers when each tool started."""

    def __init__(self) -> None:
        self.started_at: dict[str, int] = {}  # tool call id → ms its ``started`` said

    def tool_updated(self, payload: dict[str, Any], now_ms: int) -> dict[str, Any]:
        body = dict(payload)
        kind = body.get("kind")
        tool_call_id = str(body.get("toolCallId") or "")
        if kind == "started":
            body.pop("inputOmitted", None)
            body.setdefault("startedAt", now_ms)
            self.started_at[tool_call_id] = int(body["startedAt"])
        elif kind == "result":
            body["result"] = tool_result(body.get("result"))
            began = self.started_at.pop(tool_call_id, now_ms)
            body.setdefault("duration", max(0, now_ms - began))
        elif kind == "error":
            body["error"] = tool_error(body.get("error"))
            self.started_at.pop(tool_call_id, None)
        return body


def turn_started(payload: dict[str, Any], turn_number: int) -> dict[str, Any]:
    body = dict(payload)
    body.setdefault("turnNumber", max(0, turn_number))
    body.setdefault("input", "")
    return body


def tool_text(value: Any) -> str:
    """A tool's result or error as text: the objects above carry it in ``content`` / ``message``."""
    if isinstance(value, dict):
        for key in ("content", "message"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return "" if value is None else value if isinstance(value, str) else str(value)

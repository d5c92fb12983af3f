"""ACP ``session/update`` payloads the bridge makes itself (not from a turn's events).

Everything that builds a ``sessionUpdate`` dict lives in ``protocol/``: the
per-turn ones in ``translator.py``, the rest here, so actors only move them.
"""

from __future__ import annotations

from typing import Any

from . import framing
from .subagents import CHILD
from zcode_acp.protocol.display_text import shown_title

Update = dict[str, Any]

PLAN_STATUSES = frozenset({"pending", "in_progress", "completed"})
PLAN_PRIORITIES = frozenset({"high", "medium", "low"})


def tool_call(tool_call_id: str, title: str, kind: str, status: str, meta: dict[str, Any], *,
              raw_input: dict[str, Any] | None = None, locations: list[dict[str, Any]] | None = None,
              content: list[dict[str, Any]] | None = None) -> Update:
    """A card opened (``sessionUpdate: tool_call``): every card the bridge opens, on either engine path
    (a turn's tool, a task, a retry, a subagent, a replayed tool), is built here; None leaves a field out."""
    update: Update = {"sessionUpdate": "tool_call", "toolCallId": tool_call_id, "title": title, "kind": kind,
                      "status": status}
    if raw_input is not None:
        update["rawInput"] = raw_input
    if locations is not None:
        update["locations"] = locations
    if content is not None:
        update["content"] = content
    update["_meta"] = meta
    return update


def tool_call_update(tool_call_id: str, **fields: Any) -> Update:
    """A card changed (``sessionUpdate: tool_call_update``): every such update, on either path, is built here."""
    update: Update = {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id}
    update.update(fields)
    return update


def tool_call_failed(tool_call_id: str) -> Update:
    return tool_call_update(tool_call_id, status="failed")


def terminal_output(tool_call_id: str, data: str) -> Update:
    """New bytes of a terminal card (``_meta.terminal_output``, docs/protocol-mapping.md)."""
    return tool_call_update(tool_call_id, _meta={"terminal_output": {"terminal_id": tool_call_id, "data": data}})


def terminal_exit(tool_call_id: str, status: str, exit_code: int, **extra: Any) -> Update:
    """A terminal card's one terminal status, with ``_meta.terminal_exit``."""
    meta = {"terminal_exit": {"terminal_id": tool_call_id, "exit_code": exit_code, "signal": None}}
    meta.update(extra.pop("_meta", {}))
    return tool_call_update(tool_call_id, status=status, content=[{"type": "terminal", "terminalId": tool_call_id}],
                            _meta=meta, **extra)


def plan_entries(todos: Any) -> list[dict[str, str]] | None:
    """The backend's todos → ACP plan entries; None when there are no todos to speak of."""
    if not isinstance(todos, list):
        return None
    entries = []
    for todo in todos:
        if isinstance(todo, dict) and isinstance(todo.get("content"), str):
            status = todo.get("status") if todo.get("status") in PLAN_STATUSES else "pending"
            priority = todo.get("priority") if todo.get("priority") in PLAN_PRIORITIES else "medium"
            entries.append({"content": todo["content"], "status": str(status), "priority": str(priority)})
    return entries


def user_text(text: str, message_id: str) -> Update:
    """A prompt echoed to the clients that did not send it."""
    return {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": text}, "messageId": message_id}


def plan(entries: list[dict[str, str]]) -> Update:
    return {"sessionUpdate": "plan", "entries": entries}


def session_title(title: str, updated_at: str | None = None) -> Update:
    """``session_info_update``: the new title and, when given, the time of the activity (ISO 8601)."""
    update: Update = {"sessionUpdate": "session_info_update", "title": shown_title(title)}
    if updated_at:
        update["updatedAt"] = updated_at
    return update


def current_mode(mode: str) -> Update:
    return {"sessionUpdate": "current_mode_update", "currentModeId": mode}


def config_options(options: list[dict[str, Any]]) -> Update:
    return {"sessionUpdate": "config_option_update", "configOptions": options}


def encode(session_id: str, updates: list[Update]) -> bytes:
    """``session/update`` notifications as NDJSON lines, each encoded once.

    The bytes ``framing.encode(jsonrpc.session_update(session_id, update))`` gives for each, made
    from the envelope's text around each update's (a dict and an encode fewer per update, and one
    UTF-8 encode for the batch): a 10,000-update history replay a third cheaper (docs/performance.md,
    "The cold load"). ujson writes a dict's keys in order with no spaces, so the envelope's text
    is fixed; ``tests/protocol/test_updates_encoding.py`` checks the equality.
    """
    if not updates:
        return b""
    dumps = framing.dumps
    head = f'{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":{dumps(session_id)},"update":'
    return "".join([f"{head}{dumps(update)}}}}}\n" if CHILD not in update else _child_line(update)
                    for update in updates]).encode("utf-8")


def _child_line(update: Update) -> str:
    """A sub-agent's update, in its child session's envelope (protocol/subagents.py)."""
    dumps = framing.dumps
    child = update[CHILD]
    shown = {key: value for key, value in update.items() if key != CHILD}
    return (f'{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":{dumps(child)},'
            f'"update":{dumps(shown)}}}}}\n')

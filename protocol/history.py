"""Backend ``session/messages`` → the updates a ``session/load`` replays (docs/sessions.md).

User text → ``user_message_chunk``, assistant text → ``agent_message_chunk``,
reasoning → ``agent_thought_chunk``, tool parts → one completed (or failed)
``tool_call`` card with its input and output. ``patch`` and ``step-start``
parts are skipped. Each message keeps its own ``messageId``.

Both engines' spellings are read (docs/backend-protocol.md §11): the message id
is ``info.messageId`` or ``info.id``; the role is ``info.role`` or, failing
that, ``info.semantics.kind`` (``user_input`` / ``assistant_response``); a tool
part's call id is ``callId``, ``callID`` or ``id`` (``partId`` names the part,
and is used only when nothing else does).
"""

from __future__ import annotations

from typing import Any

from . import tools
from .shapes import obj


SEMANTIC_ROLES = {"user_input": "user", "assistant_response": "assistant"}


def _first_string(value: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        if isinstance(value.get(key), str) and value[key]:
            return str(value[key])
    return None


def _role(info: dict[str, Any]) -> Any:
    role = info.get("role")
    if role is None:
        role = SEMANTIC_ROLES.get(str(obj(info.get("semantics")).get("kind")))
    return role


def _tool_card(part: dict[str, Any]) -> dict[str, Any] | None:
    tool_call_id = _first_string(part, "callId", "callID", "id", "partId")
    if not isinstance(tool_call_id, str):
        return None
    name = str(part.get("tool") or "Tool")
    state = obj(part.get("state"))
    tool_input = obj(state.get("input"))
    output = state.get("output")
    failed = state.get("status") in ("error", "failed")
    content = [] if failed else tools.diff_content(name, tool_input)
    text = tools.result_text(output)
    if not content and text:
        content = tools.text_content(text)
    card: dict[str, Any] = {
        "sessionUpdate": "tool_call",
        "toolCallId": tool_call_id,
        "title": state.get("title") if isinstance(state.get("title"), str) and state.get("title")
        else tools.tool_title(name, tool_input),
        "kind": tools.tool_kind(name),
        "status": "failed" if failed else "completed",
        "rawInput": tool_input,
        "locations": tools.tool_locations(tool_input),
        "content": content,
        "_meta": {"claudeCode": {"toolName": name}},
    }
    card.update(tools.raw_output(output))
    return card


def replay_updates(messages: Any) -> list[dict[str, Any]]:
    updates: list[dict[str, Any]] = []
    if not isinstance(messages, list):
        return updates
    for message in messages:
        if not isinstance(message, dict):
            continue
        info = obj(message.get("info"))
        role = _role(info)
        message_id = _first_string(info, "messageId", "id") or ""
        if role not in ("user", "assistant"):
            continue
        for part in message.get("parts") or []:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            text = part.get("text")
            if kind == "text" and isinstance(text, str) and text:
                update = "user_message_chunk" if role == "user" else "agent_message_chunk"
                updates.append({"sessionUpdate": update, "content": {"type": "text", "text": text},
                                "messageId": message_id})
            elif kind == "reasoning" and isinstance(text, str) and text and role == "assistant":
                updates.append({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": text},
                                "messageId": f"{message_id}-thought"})
            elif kind == "tool" and role == "assistant":
                card = _tool_card(part)
                if card:
                    updates.append(card)
    return updates


def message_count(messages: Any) -> int:
    return len(messages) if isinstance(messages, list) else 0

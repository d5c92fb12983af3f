"""Backend ``session/messages`` → the updates a ``session/load`` replays (docs/sessions.md).

User text → ``user_message_chunk``, assistant text → ``agent_message_chunk``,
reasoning → ``agent_thought_chunk``, tool parts → one completed (or failed)
``tool_call`` card with its input and output. ``patch`` and ``step-start``
parts are skipped. Each message keeps its own ``messageId``; text after a tool
card is a new message (``<messageId>-<n>`` after the n-th card), as it is live
(protocol/translator.py), so a client puts it below the card instead of joining
it to the text above.

Only what the user saw is replayed: a message the engine marks model-only
(``info.visibility: "model-only"``, or ``semantics.uiVisibility`` other than
``visible`` — a background-task notification, a reminder) is skipped. A failed
tool part (``state.status: "error"``) carries its text in ``state.error``,
which becomes the card's content. A sub-agent's tool part names its parent
(``parentToolCallId``, on the part or in its ``metadata``): the card says so in
``_meta`` and follows its parent.

Both engines' spellings are read (docs/backend-protocol.md §11): the message id
is ``info.messageId`` or ``info.id``; the role is ``info.role`` or, failing
that, ``info.semantics.kind`` (``user_input`` / ``assistant_response``); a tool
part's call id is ``callId``, ``callID`` or ``id`` (``partId`` names the part,
and is used only when nothing else does).
"""

from __future__ import annotations

from typing import Any

from . import tools, updates
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


def user_saw(info: dict[str, Any]) -> bool:
    """False for the engine's model-only messages (notifications, reminders): never shown, never replayed."""
    if info.get("visibility") == "model-only":
        return False
    visibility = obj(info.get("semantics")).get("uiVisibility")
    return visibility in (None, "visible")


def parent_tool_call(part: dict[str, Any]) -> str | None:
    return _first_string(part, "parentToolCallId") or _first_string(obj(part.get("metadata")), "parentToolCallId")


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
    error = state.get("error")
    if failed and output is None and error is not None:
        text = error if isinstance(error, str) else tools.result_text(error)
        output = {"error": text}
    else:
        text = tools.result_text(output)
    if not content and text:
        content = tools.text_content(text)
    title = state.get("title")
    card = updates.tool_call(tool_call_id, title if isinstance(title, str) and title else tools.tool_title(name, tool_input),
                             tools.tool_kind(name), "failed" if failed else "completed",
                             {"claudeCode": {"toolName": name}}, raw_input=tool_input,
                             locations=tools.tool_locations(tool_input), content=content)
    card.update(tools.raw_output(output))
    parent = parent_tool_call(part)
    if parent:
        card["_meta"]["claudeCode"]["parentToolUseId"] = parent
        card["_meta"]["zcode"] = {"parentToolCallId": parent}
    return card


def _under_parents(cards: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each sub-agent card right after its parent's (and its siblings), the rest in order."""
    children: dict[str, list[dict[str, Any]]] = {}
    ids = {card["toolCallId"] for card in cards}
    top: list[dict[str, Any]] = []
    for card in cards:
        parent = obj(card.get("_meta", {}).get("zcode")).get("parentToolCallId")
        if isinstance(parent, str) and parent in ids and parent != card["toolCallId"]:
            children.setdefault(parent, []).append(card)
        else:
            top.append(card)
    ordered: list[dict[str, Any]] = []

    def place(card: dict[str, Any], depth: int) -> None:
        ordered.append(card)
        for child in children.pop(card["toolCallId"], []) if depth < 16 else []:
            place(child, depth + 1)

    for card in top:
        place(card, 0)
    for rest in children.values():  # a cycle of parents: kept, in their order
        ordered.extend(rest)
    return ordered


def _message_updates(role: str, message_id: str, parts: Any) -> list[dict[str, Any]]:
    updates: list[dict[str, Any]] = []
    cards: list[dict[str, Any]] = []
    segment = message_id  # the id of the text from here on: a new one after each card
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        text = part.get("text")
        if kind == "text" and isinstance(text, str) and text:
            update = "user_message_chunk" if role == "user" else "agent_message_chunk"
            updates.append({"sessionUpdate": update, "content": {"type": "text", "text": text},
                            "messageId": segment})
        elif kind == "reasoning" and isinstance(text, str) and text and role == "assistant":
            updates.append({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": text},
                            "messageId": f"{segment}-thought"})
        elif kind == "tool" and role == "assistant":
            card = _tool_card(part)
            if card:
                cards.append(card)
                updates.append(card)
                segment = f"{message_id}-{len(cards)}"
    if any("zcode" in card["_meta"] for card in cards):
        # The cards' slots keep their places; sub-agent cards move to just after their parent.
        ordered = iter(_under_parents(cards))
        updates = [next(ordered) if update.get("sessionUpdate") == "tool_call" else update for update in updates]
    return updates


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
        if role not in ("user", "assistant") or not user_saw(info):
            continue
        updates.extend(_message_updates(role, message_id, message.get("parts")))
    return updates


def message_count(messages: Any) -> int:
    return len(messages) if isinstance(messages, list) else 0

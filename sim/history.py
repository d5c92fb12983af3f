"""History in the 0.16 engine's spelling (docs/simulator.md, Dialects).

The simulator stores messages in the seed's shape (``info.id``, tool part ``id``);
the 0.16 engine presents each as ``{info, parts}`` the way its strict message
schema says: ``info.messageId``, ``sessionId``, ``role``, ``time``, ``agent``
(and, for an assistant message, ``parentMessageId``, ``path``, ``cost``,
``tokens``); parts with ``partId``, ``sessionId`` and ``messageId``; a tool part
with ``callId``, ``tool`` and a ``state`` whose fields depend on its status (a
failed one carries ``error``, not ``output``); a model-only message (a
background-task notification) with ``visibility: "model-only"`` and hidden
``semantics``. Only the new spelling is sent.
"""

from __future__ import annotations

from typing import Any

from .cli016_events import tool_text

ZERO_TOKENS = {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}
HIDDEN = {"origin": "agent_runtime", "kind": "background_notification", "uiVisibility": "hidden",
          "providerVisibility": "visible", "transcriptVisibility": "hidden"}


def _tool_state(state: dict[str, Any], stamp: int) -> dict[str, Any]:
    tool_input = state.get("input") if isinstance(state.get("input"), dict) else {}
    output = tool_text(state.get("output"))
    if state.get("status") == "error":
        return {"status": "error", "input": tool_input, "error": output,
                "startedAt": stamp, "completedAt": stamp}
    return {"status": "completed", "input": tool_input, "output": output,
            "title": state.get("title") or "", "metadata": {}, "startedAt": stamp, "completedAt": stamp}


def present(message: dict[str, Any], session_id: str = "", cwd: str = "/", previous: str = "") -> dict[str, Any]:
    info = message.get("info") or {}
    message_id = str(info.get("id"))
    role = info.get("role")
    stamp = int(info.get("created") or 0)
    parts = []
    for index, part in enumerate(message.get("parts") or []):
        base = {"partId": f"{message_id}_p{index}", "sessionId": session_id, "messageId": message_id}
        if part.get("type") == "tool":
            shown = {**base, "type": "tool", "callId": part.get("id"), "tool": part.get("tool") or "Tool",
                     "state": _tool_state(part.get("state") or {}, stamp)}
            if part.get("parentToolCallId"):
                shown["metadata"] = {"parentToolCallId": part["parentToolCallId"]}
        else:
            shown = {**base, **{k: v for k, v in part.items() if k in ("type", "text")}}
        parts.append(shown)
    shown_info: dict[str, Any] = {"messageId": message_id, "sessionId": session_id, "role": role,
                                  "time": {"created": stamp}, "agent": "zcode-agent"}
    if role == "assistant":
        shown_info.update(parentMessageId=previous or message_id, path={"cwd": cwd, "root": cwd}, cost=0,
                          tokens=ZERO_TOKENS)
    elif info.get("visibility") == "model-only":
        shown_info.update(synthetic=True, source=info.get("source") or "background_task", visibility="model-only",
                          semantics=HIDDEN)
    return {"info": shown_info, "parts": parts}


def present_all(messages: list[dict[str, Any]], session_id: str, cwd: str) -> list[dict[str, Any]]:
    """Every message in order; an assistant message names the message before it as its parent."""
    shown, previous = [], ""
    for message in messages:
        shown.append(present(message, session_id, cwd, previous))
        previous = str((message.get("info") or {}).get("id"))
    return shown

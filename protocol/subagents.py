"""ZCode's sub-agents as the ACP subagents RFD's child sessions (unstable; docs/protocol-mapping.md).

A client that declares ``clientCapabilities.subagents`` (``{}``, the unstable v1 schema of the
TypeScript SDK 2.4.0) sees each blocking Agent/Task call as a child session: the parent session
gets ``subagent_update {sessionId: <child>, title, description, state: running}`` before any of
the child's traffic, the sub-agent's own tool calls (the ones naming the call as
``parentToolCallId``) and text go as ``session/update``s whose ``sessionId`` is the child's, and
the call's end sets ``state: idle``. The parent's Agent/Task card stays as it is
(docs/decisions.md, "Sub-agents as child sessions"). No mutation capability is granted, so a
request naming a child is answered "session not found" by the Supervisor, like any id it does not
serve. Any other client gets today's nested cards unchanged.

An update meant for a child carries its session id under ``CHILD``; ``updates.encode`` writes that
id in the envelope and drops the key, so the translators stay unaware of envelopes.
"""

from __future__ import annotations

from typing import Any

from .shapes import obj

CHILD = "\u2063childSessionId"  # never a key of a real ACP update; removed by updates.encode
SUBAGENT_TOOLS = frozenset({"Agent", "Task"})
_SEPARATOR = "/subagent/"


def supports_subagents(capabilities: Any) -> bool:
    subagents = capabilities.get("subagents") if isinstance(capabilities, dict) else None
    return isinstance(subagents, dict)


def child_session_id(parent_session_id: str, tool_call_id: str) -> str:
    """The child's id, derived so the same call always names the same child (a replayed turn too)."""
    return f"{parent_session_id}{_SEPARATOR}{tool_call_id}"


def in_child(update: dict[str, Any], child: str) -> dict[str, Any]:
    return {**update, CHILD: child}


def announce(child: str, tool_input: dict[str, Any], title: str) -> dict[str, Any]:
    """The first ``subagent_update`` for a child: who it is and that it runs."""
    description = tool_input.get("subagent_type")
    update: dict[str, Any] = {
        "sessionUpdate": "subagent_update",
        "sessionId": child,
        "title": str(tool_input.get("description") or title),
        "state": {"state": "running"},
    }
    if isinstance(description, str) and description:
        update["description"] = description
    return update


def prompt_messages(parent: str, child: str, tool_call_id: str, tool_input: dict[str, Any]) -> list[dict[str, Any]]:
    """The Agent/Task call's ``prompt`` as the inter-session message it is: the parent's outgoing view
    and the child's incoming one, each naming the other's ``messageId`` (the unstable schema's
    ``SessionMessage``). Ids derive from the call, so a replay names the same messages. The result
    goes back through the parent's card, not as a message (the RFD: an operation's result is
    reported by its tool call)."""
    prompt = tool_input.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return []
    sent, received = f"{tool_call_id}-prompt", f"{tool_call_id}-prompt-received"
    common = {"sessionUpdate": "session_message", "senderSessionId": parent, "recipientSessionId": child,
              "content": [{"type": "text", "text": prompt}]}
    return [{**common, "messageId": sent, "recipientMessageId": received},
            in_child({**common, "messageId": received, "senderMessageId": sent}, child)]


def state(child: str, current: str) -> dict[str, Any]:
    """A state snapshot without a stop reason: ``running`` or ``requires_action`` (a dialog waits)."""
    return {"sessionUpdate": "subagent_update", "sessionId": child, "state": {"state": current}}


def finished(child: str, completed: bool) -> dict[str, Any]:
    """The call's end: idle (the RFD has no failed state; a failed call says so in ``_meta``)."""
    state: dict[str, Any] = {"state": "idle"}
    if completed:
        state["stopReason"] = "end_turn"
    else:
        state["_meta"] = {"zcode": {"outcome": "failed"}}
    return {"sessionUpdate": "subagent_update", "sessionId": child, "state": state}


def replay_children(replayed: list[dict[str, Any]], parent: str) -> list[dict[str, Any]]:
    """A ``session/load`` replay (protocol/history.py) with each blocking Agent/Task card's sub-agent
    as the child session it was live: the card, its child announced with the call's prompt as
    messages, the sub-agent's own cards (placed after it by the history) in the child, and the
    child's end once a card that is not its own follows. The same frames as live, but for the
    tool cards, which a replay shows once, finished."""
    out: list[dict[str, Any]] = []
    agents: dict[str, str] = {}  # an Agent/Task call → its child session
    running: tuple[str, bool] | None = None  # the child not yet ended, and whether its call completed

    def end() -> None:
        nonlocal running
        if running is not None:
            out.append(finished(*running))
            running = None

    for update in replayed:
        if update.get("sessionUpdate") != "tool_call":
            out.append(update)
            continue
        meta = obj(update.get("_meta"))
        called_by = obj(meta.get("zcode")).get("parentToolCallId")
        if isinstance(called_by, str) and called_by in agents:
            out.append(in_child(update, agents[called_by]))
            continue
        end()
        out.append(update)
        tool_input = obj(update.get("rawInput"))
        if obj(meta.get("claudeCode")).get("toolName") in SUBAGENT_TOOLS and not tool_input.get("run_in_background"):
            tool_call_id = str(update["toolCallId"])
            child = agents[tool_call_id] = child_session_id(parent, tool_call_id)
            out.append(announce(child, tool_input, str(update.get("title") or "")))
            out.extend(prompt_messages(parent, child, tool_call_id, tool_input))
            running = (child, update.get("status") == "completed")
    end()
    return out

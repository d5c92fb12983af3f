"""A resumed session's rows, rebuilt from the history the engine keeps in its store.

The real engine reads a session it loads back (a new process, a session its resident
pool had let go) from its database, so the conversation topic of a resumed session shows
the turns it already had. The simulator's store keeps messages (``{info, parts}``,
sim/history.py); this module plays them into a fresh ``ConversationProjection`` as the
legacy events a live turn would have fed it (``turn.started``, ``model.streaming``,
``tool.updated``, ``turn.completed``), so the rows come out exactly as live ones do,
settled. Then the session's todos (the snapshot's ``plan``) and its context figures.
"""

from __future__ import annotations

from typing import Any

from .projection import ConversationProjection

_DELTA = {"text": "text_delta", "reasoning": "reasoning_delta"}


def _turn_events(user: dict[str, Any] | None, answers: list[dict[str, Any]], turn_id: str) -> list[dict[str, Any]]:
    """One stored turn: its user message (None: the history starts with an answer) and its answers."""
    events: list[dict[str, Any]] = []
    if user is not None:
        info = user.get("info") or {}
        text = "".join(str(p.get("text") or "") for p in user.get("parts") or [] if p.get("type") == "text")
        started: dict[str, Any] = {"input": text}
        if info.get("visibility") == "model-only":  # a background task's notification turn
            started.update(inputSource="background_task", inputVisibility="model-only")
        events.append({"type": "turn.started", "payload": started, "turnId": turn_id})
    for message in answers:
        for part in message.get("parts") or []:
            kind = part.get("type")
            if kind in _DELTA and part.get("text"):
                events.append({"type": "model.streaming", "payload": {"kind": _DELTA[kind], "delta": part["text"]},
                               "turnId": turn_id})
            elif kind == "tool" and part.get("id"):
                events.extend(_tool_events(part, turn_id))
    events.append({"type": "turn.completed", "payload": {"resultType": "success"}, "turnId": turn_id})
    return events


def _tool_events(part: dict[str, Any], turn_id: str) -> list[dict[str, Any]]:
    state = part.get("state") if isinstance(part.get("state"), dict) else {}
    tool_call_id = str(part["id"])
    scheduled = {"kind": "scheduled", "toolCallId": tool_call_id, "toolName": part.get("tool") or "Tool",
                 "input": state.get("input") if isinstance(state.get("input"), dict) else {}}
    ended = ({"kind": "error", "toolCallId": tool_call_id, "error": state.get("output")}
             if state.get("status") == "error" else
             {"kind": "result", "toolCallId": tool_call_id, "result": state.get("output")})
    payloads = [scheduled, {"kind": "started", "toolCallId": tool_call_id}, ended]
    parent = part.get("parentToolCallId") or (part.get("metadata") or {}).get("parentToolCallId")
    if isinstance(parent, str):  # a sub-agent's own call: named as live ones are (turn_parts.py keeps it out)
        payloads = [{**payload, "parentToolCallId": parent} for payload in payloads]
    return [{"type": "tool.updated", "payload": payload, "turnId": turn_id} for payload in payloads]


def turns(messages: list[dict[str, Any]]) -> list[tuple[dict[str, Any] | None, list[dict[str, Any]]]]:
    """The stored messages cut into turns: each user message with the answers after it."""
    cut: list[tuple[dict[str, Any] | None, list[dict[str, Any]]]] = []
    for message in messages:
        if (message.get("info") or {}).get("role") == "user" or not cut:
            is_user = (message.get("info") or {}).get("role") == "user"
            cut.append((message if is_user else None, [] if is_user else [message]))
        else:
            cut[-1][1].append(message)
    return cut


def rebuild(projection: ConversationProjection, messages: list[dict[str, Any]], *,
            todos: list[Any] | None = None, used_tokens: int | None = None) -> None:
    """Play the stored history into ``projection`` (fresh: no subscriber has seen it yet)."""
    for index, (user, answers) in enumerate(turns(messages)):
        for event in _turn_events(user, answers, f"turn-history-{index}"):
            projection.feed(event)
    if todos:
        projection.set_plan(todos)
    if used_tokens:
        projection.feed({"type": "session.updated", "payload": {"usage": {"inputTokens": used_tokens}}})
    projection.commit()


__all__ = ["rebuild", "turns"]

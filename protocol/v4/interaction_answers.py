"""A dialog's answer, written for the legacy request, as the v4 ``resolveInteraction`` answer.

The InteractionRouter turns a client's choice into the legacy request's answer (the
engine's own option ``response`` for a permission, ``{action, content}`` for questions).
On the v4 path the same choice goes to the engine as ``resolveInteraction``
(``zcode-protocol-v4/command.ts``: ``{interactionId, answer: {optionId?, freeText?,
action?, content?}}``), naming one of the pending interaction's own options
(``snapshot.ts`` ``pendingInteractions[].payload.options``, kinds ``allowOnce``,
``allowAlways``, ``deny``). Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

from zcode_acp.protocol.v4 import commands as v4
from zcode_acp.protocol.v4.conversation_view import PendingInteraction

_KIND_OF_DECISION = {"allow": "allowOnce", "allow_always": "allowAlways", "deny": "deny"}


def matching(pending: tuple[PendingInteraction, ...], frame: dict[str, Any]) -> PendingInteraction | None:
    """The pending interaction the legacy request ``frame`` stands for.

    The engine registers each interaction under the request's own ``requestId`` (its
    ``interaction-response-race.ts``: the v4 ``interactionId`` is that id), so that is the
    match; an engine that named them apart is still matched by kind and tool call.
    """
    raw = frame.get("params")
    params: dict[str, Any] = raw if isinstance(raw, dict) else {}
    kind = "permission" if frame.get("method") == "interaction/requestPermission" else "userInput"
    request_id, tool_call_id = params.get("requestId"), params.get("toolCallId")
    for item in pending:
        if request_id is not None and item.interaction_id == request_id:
            return item
    candidates = [p for p in pending if p.kind == kind]
    for item in candidates:
        if tool_call_id is not None and item.payload.get("toolCallId") == tool_call_id:
            return item
    return None


def _option_of_kind(item: PendingInteraction, kind: str) -> str | None:
    for option in item.payload.get("options") or ():
        if isinstance(option, dict) and option.get("kind") == kind and isinstance(option.get("optionId"), str):
            return str(option["optionId"])
    return None


def resolve_command(session_id: str, item: PendingInteraction, answer: dict[str, Any]) -> v4.Command | None:
    """``resolveInteraction`` carrying ``answer``; None when it names no option the engine offered."""
    if item.kind == "permission":
        for option in item.payload.get("options") or ():  # the engine's own option, answered verbatim
            if isinstance(option, dict) and option.get("response") == answer and isinstance(option.get("optionId"), str):
                return v4.resolve_interaction(session_id, item.interaction_id, option_id=str(option["optionId"]))
        decision = answer.get("decision")
        key = "allow_always" if decision == "allow" and answer.get("permissionUpdates") else str(decision)
        kind = _KIND_OF_DECISION.get(key)
        option_id = _option_of_kind(item, kind) if kind else None
        if option_id is None and kind == "allowAlways":
            option_id = _option_of_kind(item, "allowOnce")
        if option_id is None:
            return None
        return v4.resolve_interaction(session_id, item.interaction_id, option_id=option_id)
    action = answer.get("action")
    if action not in ("accept", "decline", "cancel"):
        return None
    if action != "accept" and answer.get("reason"):
        # A v4 answer has no field for a decline's reason, and the engine takes whichever channel
        # arrives first: sending both would let a race decide what it hears. The request alone.
        return None
    content = answer.get("content") if isinstance(answer.get("content"), dict) else None
    return v4.resolve_interaction(session_id, item.interaction_id, action=action, content=content)

"""The 0.16 engine's session-level shapes: settings, the session snapshot, ``state.updated``
(docs/simulator.md, Dialects; docs/backend-protocol.md, "Session state").

Read from the engine's public source (``zcode-protocol/index.ts`` and the legacy types,
``session-mapper.ts``, ``server-operations.ts`` of the CLI's app-server):

* create and resume answer the whole snapshot ``{protocol, session, settings, projection,
  runtime, messages, todos, slashCommands}`` with every model of the catalog; ``session/read``,
  the set* answers and every ``state.updated`` list **only the current model**
  (``modelAvailability: "current"``);
* every state change adds one to the session's ``stateRevision`` and sends
  ``state.updated {type, scope: "session", sessionId, workspace, revision, reason, patch}``:
  the patch of a set* is the current-only settings, a prompt's is ``{status: "running"}``.

The functions here only build dicts; ``sim/cli016.py`` decides when they go out.
"""

from __future__ import annotations

from typing import Any, Literal

from . import catalog
from .model import SimSession

PROTOCOL = {"name": "ZCode Protocol", "version": 1}
Availability = Literal["all", "current"]


def selection(session: SimSession) -> dict[str, Any] | None:
    """The session's model selection ``{providerId, modelId, options?}`` (None: lost by a resume)."""
    if session.model_lost:
        return None
    chosen: dict[str, Any] = {"providerId": catalog.PROVIDER, "modelId": session.model}
    if catalog.levels(catalog.find(catalog.PROVIDER, session.model)) and session.thought:
        chosen["options"] = {"reasoningLevel": session.thought}
    return chosen


def settings(session: SimSession, availability: Availability = "current") -> dict[str, Any]:
    """``settings`` as the engine maps them; ``current`` lists only the session's own model."""
    entry = catalog.find(catalog.PROVIDER, session.model)
    levels = catalog.levels(entry)
    chosen = selection(session)
    if availability == "all":
        available = list(catalog.MODELS)
    else:
        available = [entry] if entry is not None and chosen is not None else []
    model: dict[str, Any] = {"available": available}
    if chosen is not None:
        model["current"] = chosen
        model["lastUsed"] = {"providerId": catalog.PROVIDER, "modelId": session.model}
    thought: dict[str, Any] = {"enabled": bool(levels) and chosen is not None,
                               "available": [{"value": v, "label": v} for v in levels] if chosen else []}
    if chosen is not None and session.thought in levels:
        thought["current"] = session.thought
    default = catalog.default_level(entry)
    if chosen is not None and default in levels:
        thought["defaultLevel"] = default
    return {"mode": {"current": session.mode}, "model": model, "thoughtLevel": thought,
            "permission": {"mode": session.mode}}


def session_info(session: SimSession) -> dict[str, Any]:
    info: dict[str, Any] = {
        "sessionId": session.session_id, "workspace": dict(session.workspace), "sessionKind": "interactive",
        "title": session.title, "mode": session.mode, "status": "running" if session.lock else "idle",
        "createdAt": session.created_at or session.updated_at, "updatedAt": session.updated_at,
    }
    if session.trace_id:
        info["traceId"] = session.trace_id
    chosen = selection(session)
    if chosen is not None:
        info["model"] = {"providerId": chosen["providerId"], "modelId": chosen["modelId"]}
    return info


def projection(session: SimSession) -> dict[str, Any]:
    shown: dict[str, Any] = {
        "sessionId": session.session_id, "status": "running" if session.lock else "idle", "mode": session.mode,
        "turnCount": session.turns, "totalTokenCount": session.usage_total.get("totalTokens", 0),
        "contextUsed": session.context_used, "contextWindow": catalog.context_window(session.model),
        "pendingPermissions": [], "activeToolCalls": [], "backgroundJobs": [],
    }
    if session.lock is not None:
        shown["currentTurnId"] = session.lock.turn_id
    return shown


def runtime(session: SimSession) -> dict[str, Any]:
    state: dict[str, Any] = {"eventSeq": session.seq, "stateRevision": session.revision, "pendingRequestIds": [],
                             "contextUsage": {"used": session.context_used,
                                              "size": catalog.context_window(session.model)}}
    if session.delivery_kind:
        state["deliveryKind"] = session.delivery_kind
    if session.lock is not None:
        state["activeTurnId"] = session.lock.turn_id
    return state


def snapshot(session: SimSession, availability: Availability, messages: list[dict[str, Any]],
             slash_commands: list[dict[str, Any]]) -> dict[str, Any]:
    """The whole state snapshot: create/resume (``all``) and ``session/read`` (``current``).

    ``messages`` are already in the engine's history shape (``history.present_all``)."""
    return {
        "protocol": dict(PROTOCOL), "session": session_info(session), "settings": settings(session, availability),
        "projection": projection(session), "runtime": runtime(session),
        "messages": messages, "todos": list(session.todos),
        "slashCommands": slash_commands,
    }


def state_updated(session: SimSession, reason: str, patch: Any) -> dict[str, Any]:
    """The ``state.updated`` notification's params for a change already counted in ``revision``."""
    return {"type": "state.updated", "scope": "session", "sessionId": session.session_id,
            "workspace": dict(session.workspace), "revision": session.revision, "reason": reason, "patch": patch}

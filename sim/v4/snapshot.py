"""The conversation snapshot a new session starts from, key for key as the engine sends it.

Shapes from the engine's ``zcode-protocol-v4/snapshot.ts`` and the captured initial
frame of ZCode 3.14.4 (tests/fixtures/engine-captures/transport-v4-official.jsonl): a
draft session has an idle ``control``, ``inputRouting {mode: startNow}``, an empty queue
that drains itself, no interactions, works, goal or plan, and an empty row window.
"""

from __future__ import annotations

from typing import Any

PROTOCOL_VERSION = 1


def idle_control(phase: str = "draft") -> dict[str, Any]:
    return {"phase": phase, "sessionEnded": False, "canStop": False, "stopState": "idle",
            "stopTargetKind": "unknown", "activeWorks": [], "lastError": None, "apiRetry": None}


def availability(*, running: bool, has_rows: bool, goal: bool = False, compacting: bool = False) -> dict[str, Any]:
    """Which actions the engine allows now (``product-projection.ts`` computeAvailability): a running
    compaction locks compact, fork and send-now (``compactOperationLock``); a draft has nothing to fork or
    compact; a running turn neither stops a fork (of a stable row) nor a compaction (it is queued)."""
    def allowed(ok: bool, reason: str) -> dict[str, Any]:
        return {"allowed": True} if ok else {"allowed": False, "reasonCode": reason}

    def unlocked(verdict: dict[str, Any]) -> dict[str, Any]:
        return allowed(False, "compactOperationLock") if compacting else verdict

    return {
        "fork": unlocked(allowed(has_rows, "forkTargetNotStable")),
        "compact": unlocked(allowed(has_rows, "idleCannotCompact")),
        "switchModelConfig": {"allowed": True},
        "setFollowupMode": {"allowed": True},
        "queueEdit": {"allowed": True},
        "sendQueuedNow": unlocked(allowed(running, "sendQueuedNowRequiresRunning")),
        "pauseGoal": allowed(goal, "noGoalToPause"),
        "resumeGoal": allowed(False, "noGoalToResume"),
    }


def session_config(provider: str, model: str, thought: str, thought_levels: list[str], mode: str = "build",
                   followup_mode: str = "queue") -> dict[str, Any]:
    """The snapshot's ``config``: the current model, its reasoning level, the follow-up and collaboration modes."""
    selection: dict[str, Any] = {"providerId": provider, "modelId": model}
    if thought:
        selection["options"] = {"reasoningLevel": thought}
    return {"provider": provider, "model": model, "thought": thought, "thoughtLevels": list(thought_levels),
            "followupMode": followup_mode, "mode": mode, "modelSelection": selection, "planEnabled": mode == "plan"}


def initial_state(session_id: str, log_epoch: str, config: dict[str, Any]) -> dict[str, Any]:
    """Every snapshot key but ``rows`` (and ``seq``, which the log keeps)."""
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "sessionId": session_id,
        "logEpoch": log_epoch,
        "revision": 0,
        "control": idle_control(),
        "availability": availability(running=False, has_rows=False),
        "inputRouting": {"mode": "startNow"},
        "meta": {"title": "", "titleSource": "default"},
        "config": config,
        "modelTransition": None,
        "usage": {"contextWindow": None,
                  "cumulative": {"inputTokens": 0, "outputTokens": 0, "cacheReadTokens": 0, "cacheWriteTokens": 0}},
        "queue": {"items": [], "autoDrain": True},
        "pendingInteractions": [],
        "pendingCommands": [],
        "backgroundWorks": [],
        "subagents": {"revision": 0, "childSessionIds": [], "running": [], "endedTotal": 0},
        "goal": None,
        "plan": None,
        "workspaceHookAdmission": None,
    }

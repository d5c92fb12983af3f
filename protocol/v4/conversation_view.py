"""Typed readers for the parts of a conversation snapshot a bridge acts on.

The snapshot is kept as the engine sent it (conversation_apply.py); these readers pull
out what the translator and the session need, leniently: a field that is missing or
mistyped reads as absent rather than failing, because one odd field must not cost the
user the whole conversation (the engine's own client learnt that the hard way).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..shapes import integer, obj

# The phases in which a turn ended normally, and the ACP stop reason each one means. The
# ``error`` phase has none: a failed turn is answered with an error (``last_error``), not
# dressed up as an ``end_turn``.
STOP_REASONS = {"completedSuccess": "end_turn", "completedInterrupted": "cancelled"}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass(frozen=True, slots=True)
class ActiveWork:
    kind: str
    foreground_execution_id: str | None


@dataclass(frozen=True, slots=True)
class Control:
    phase: str
    can_stop: bool
    stop_state: str
    active_works: tuple[ActiveWork, ...]
    last_error: dict[str, Any] | None
    api_retry: dict[str, Any] | None

    @property
    def running(self) -> bool:
        return self.phase in ("prewarming", "running")

    @property
    def ended(self) -> bool:
        return self.phase in STOP_REASONS or self.phase == "error"

    @property
    def stop_reason(self) -> str | None:
        """The ACP stop reason of a turn that ended normally; None while it runs, or when it failed."""
        return STOP_REASONS.get(self.phase)


def control(state: dict[str, Any]) -> Control:
    raw = obj(state.get("control"))
    works = tuple(
        ActiveWork(str(w.get("kind", "")), _str(w.get("foregroundExecutionId")))
        for w in raw.get("activeWorks") or ()
        if isinstance(w, dict)
    )
    last_error = raw.get("lastError")
    api_retry = raw.get("apiRetry")
    return Control(
        phase=_str(raw.get("phase")) or "draft",
        can_stop=raw.get("canStop") is True,
        stop_state=_str(raw.get("stopState")) or "idle",
        active_works=works,
        last_error=last_error if isinstance(last_error, dict) else None,
        api_retry=api_retry if isinstance(api_retry, dict) else None,
    )


@dataclass(frozen=True, slots=True)
class InputRouting:
    """What a prompt sent now would do: ``startNow``, ``enqueue``, ``guide``, ``reject`` or ``choice``."""

    mode: str
    reason_code: str | None


def input_routing(state: dict[str, Any]) -> InputRouting:
    raw = obj(state.get("inputRouting"))
    return InputRouting(_str(raw.get("mode")) or "startNow", _str(raw.get("reasonCode")))


def title(state: dict[str, Any]) -> str | None:
    return _str(obj(state.get("meta")).get("title"))


@dataclass(frozen=True, slots=True)
class ContextWindow:
    used: int
    size: int


def context_window(state: dict[str, Any]) -> ContextWindow | None:
    raw = obj(obj(state.get("usage")).get("contextWindow"))
    used, size = _num(raw.get("usedTokens")), _num(raw.get("maxTokens"))
    if used is None or size is None:
        return None
    return ContextWindow(int(used), int(size))


@dataclass(frozen=True, slots=True)
class PlanItem:
    id: str
    content: str
    status: str
    """``pending``, ``inProgress`` or ``completed``, as the engine spells them."""


def plan(state: dict[str, Any]) -> tuple[PlanItem, ...] | None:
    """The plan's items; None when the session has no plan."""
    raw = state.get("plan")
    if not isinstance(raw, dict):
        return None
    return tuple(
        PlanItem(str(i.get("id", "")), i["content"], _str(i.get("status")) or "pending")
        for i in raw.get("items") or ()
        if isinstance(i, dict) and isinstance(i.get("content"), str)
    )


@dataclass(frozen=True, slots=True)
class PendingInteraction:
    interaction_id: str
    kind: str
    """``permission``, ``userInput`` or ``workspaceHookReview``."""
    anchor_row_id: int | None
    payload: dict[str, Any]
    countdown_deadline_at: float | None
    """When the engine will answer by itself (``autoResolution`` visible countdown), epoch ms."""


def pending_interactions(state: dict[str, Any]) -> tuple[PendingInteraction, ...]:
    items = []
    for raw in state.get("pendingInteractions") or ():
        if not isinstance(raw, dict) or not isinstance(raw.get("interactionId"), str):
            continue
        auto = obj(raw.get("autoResolution"))
        deadline = _num(auto.get("deadlineAt")) if auto.get("state") in ("hiddenGrace", "visibleCountdown") else None
        items.append(
            PendingInteraction(
                raw["interactionId"],
                _str(raw.get("kind")) or "",
                integer(raw.get("anchorRowId")),
                obj(raw.get("payload")),
                deadline,
            )
        )
    return tuple(items)


def collaboration_mode(state: dict[str, Any]) -> str | None:
    return _str(obj(state.get("config")).get("mode"))

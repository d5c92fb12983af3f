"""Small readers for backend ``session/event`` envelopes.

Newer backends put ``turnId`` on the envelope, older ones inside the payload:
every reader here looks in both places.
"""

from __future__ import annotations

from typing import Any

# Event types (``session/event`` params ``type``) the bridge reads.
TURN_STARTED = "turn.started"
TURN_COMPLETED = "turn.completed"
TURN_FAILED = "turn.failed"
TURN_STEER_QUEUED = "turn.steerQueued"  # a send merged into the turn still running
TURN_STEER_DRAINED = "turn.steerDrained"
TURN_TERMINAL = "turn.terminal"
MODEL_STREAMING = "model.streaming"
TOOL_UPDATED = "tool.updated"
SESSION_UPDATED = "session.updated"  # usage, background task status
TITLE_UPDATED = "session.titleUpdated"  # an event type on newer engines, a notification on older
STREAM_RECOVERY_UPDATED = "streamRecovery.updated"  # the engine recovering an interrupted model stream
MESSAGE_UPSERTED = "message.upserted"  # a stored message (user, assistant, system): already streamed
CHECKPOINT_CREATED = "checkpoint.created"  # a file checkpoint: no ACP counterpart
SESSION_CLOSED = "session.closed"

# Notification methods other than ``session/event`` that concern one session.
STATE_UPDATED = "state.updated"

BACKGROUND_INPUT = "background_task"
TURN_END_TYPES = frozenset({TURN_COMPLETED, TURN_FAILED})
# Read and dropped on purpose (docs/backend-protocol.md §6 says why, type by type): bookkeeping, or
# what the bridge already shows from model.streaming and tool.updated.
IGNORED_TYPES = frozenset({
    TURN_TERMINAL, TURN_STEER_DRAINED, MESSAGE_UPSERTED, CHECKPOINT_CREATED,
    "session.created", "session.resumed", "message.removed", "rewind.triggered",
    "part.started", "part.delta", "part.upserted", "part.removed",
})


def payload(event: dict[str, Any]) -> dict[str, Any]:
    body = event.get("payload")
    return body if isinstance(body, dict) else {}


def turn_id(event: dict[str, Any]) -> str | None:
    value = event.get("turnId")
    if value is None:
        value = payload(event).get("turnId")
    return value if isinstance(value, str) else None


def steer_target(event: dict[str, Any]) -> str | None:
    """The turn a ``turn.steerQueued`` input joins: ``payload.targetTurnId`` (today), else the envelope's."""
    value = payload(event).get("targetTurnId")
    return value if isinstance(value, str) and value else turn_id(event)


def is_background_start(event: dict[str, Any]) -> bool:
    return event.get("type") == TURN_STARTED and payload(event).get("inputSource") == BACKGROUND_INPUT


def seq(event: dict[str, Any]) -> int | None:
    value = event.get("seq")
    return value if isinstance(value, int) and not isinstance(value, bool) else None

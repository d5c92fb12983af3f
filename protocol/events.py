"""Small readers for backend ``session/event`` envelopes.

Newer backends put ``turnId`` on the envelope, older ones inside the payload:
every reader here looks in both places.
"""

from __future__ import annotations

from typing import Any

BACKGROUND_INPUT = "background_task"
TURN_END_TYPES = frozenset({"turn.completed", "turn.failed"})


def payload(event: dict[str, Any]) -> dict[str, Any]:
    body = event.get("payload")
    return body if isinstance(body, dict) else {}


def turn_id(event: dict[str, Any]) -> str | None:
    value = event.get("turnId")
    if value is None:
        value = payload(event).get("turnId")
    return value if isinstance(value, str) else None


def is_background_start(event: dict[str, Any]) -> bool:
    return event.get("type") == "turn.started" and payload(event).get("inputSource") == BACKGROUND_INPUT


def seq(event: dict[str, Any]) -> int | None:
    value = event.get("seq")
    return value if isinstance(value, int) and not isinstance(value, bool) else None

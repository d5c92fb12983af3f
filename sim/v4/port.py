"""The seam: what the v4 data plane needs from the simulated engine behind it.

The cli016 server implements ``Port``; the data plane decides (admission, routing, acks,
the queue) and asks the engine to act through it. What the engine then does comes back
as legacy events (``DataPlane.feed``), which the projection turns into v4 state, exactly
as the real CLI projects its own event log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class SessionSeed:
    """A new session as the engine made it."""

    session_id: str
    config: dict[str, Any]
    """The snapshot's ``config`` (``snapshot.session_config`` builds one)."""
    context_window: int | None = None


class Port(Protocol):
    def create_session(self, workspace_id: str) -> SessionSeed:
        """Make a session (no turn yet)."""
        ...

    def start_turn(self, session_id: str, text: str, attachments: list[dict[str, Any]]) -> None:
        """Run a turn for ``text`` now; its events are fed back (``turn.started`` first)."""
        ...

    def guide(self, session_id: str, text: str, input_id: str) -> None:
        """Steer ``text`` into the running turn; ``turn.steerDrained`` names ``input_id`` when it is taken in."""
        ...

    def stop(self, session_id: str) -> None:
        """Stop the running turn (it ends with ``turn.completed {resultType: cancelled}``)."""
        ...

    def compact(self, session_id: str) -> None:
        """Run a compaction turn (``inputSource: compaction``)."""
        ...

    def resolve_interaction(self, session_id: str, request_id: str, kind: str, answer: dict[str, Any]) -> None:
        """Answer the permission or question the engine asked under ``request_id``."""
        ...

    def switch_model(self, session_id: str, provider: str, model: str, thought: str) -> bool:
        """False when the engine has no such model."""
        ...

    def switch_mode(self, session_id: str, mode: str) -> bool:
        """False when the engine has no such mode."""
        ...

    def cancel_background(self, session_id: str, work_id: str) -> bool:
        """False when no such work is running."""
        ...

    def rename(self, session_id: str, title: str) -> None: ...

    def delete(self, session_id: str) -> None: ...

    def truncate(self, session_id: str, turn_id: str) -> None:
        """Forget the history from ``turn_id`` on (a retry or an edit reruns from there)."""
        ...

    def fork(self, session_id: str, turn_id: str) -> SessionSeed:
        """A new session holding the history up to and including ``turn_id``."""
        ...

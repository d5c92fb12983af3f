"""One compaction the bridge asked for, from its request to the engine's word that it is over.

The 0.16 engine answers ``session/compact`` at once (``compact: {state:
"accepted" | "already_running", operationId}``) and compacts in the
background; the end is a ``state.updated`` whose ``reason`` is
``session_compacted``, ``session_compact_cancelled`` or
``session_compact_failed``. The seed's engine compacted before answering
(``{compacted: true}``, or ``{response}``), its answer being the end. The two
arrive in either order (the seed's engine wrote ``state.updated`` before its
answer), so this object waits for what it needs: the answer, and — when the
answer says the work runs on — the end.

A plain object: the Session's ``Controls`` owns it (docs/decisions.md, "Compaction ends when the engine says so").
"""

from __future__ import annotations

import uuid
from typing import Any

# state.updated reasons that end a compaction → the outcome they mean.
ENDINGS = {"session_compacted": "completed", "session_compact_cancelled": "cancelled",
           "session_compact_failed": "failed"}
RUNS_ON = frozenset({"accepted", "already_running"})  # the answer's compact.state: the end comes later
# While a turn holds the session the engine refuses a compaction (legacy -32010, v4 rejected): each
# engine path asks again every COMPACT_BUSY_RETRY seconds, for at most COMPACT_BUSY_LIMIT.
COMPACT_BUSY_RETRY = 1.0
COMPACT_BUSY_LIMIT = 60.0


class Compaction:
    def __init__(self) -> None:
        self.answer: dict[str, Any] | None = None
        self.outcome: str | None = None  # completed | cancelled | failed, once known
        self.waits_for_end = False
        self.compaction_id = uuid.uuid4().hex  # its compactionId, for a client shown compaction updates

    @staticmethod
    def ending(reason: Any) -> str | None:
        return ENDINGS.get(reason) if isinstance(reason, str) else None

    def answered(self, result: Any) -> bool:
        """The engine's answer to ``session/compact``; True once the compaction is over."""
        self.answer = result if isinstance(result, dict) else {}
        state = (self.answer.get("compact") or {}).get("state") if isinstance(self.answer.get("compact"), dict) \
            else None
        self.waits_for_end = state in RUNS_ON
        if not self.waits_for_end and self.outcome is None:
            self.outcome = "completed"  # the seed's engine: the answer is the end
        return self.outcome is not None

    def engine_ended(self, reason: Any) -> bool:
        """A ``state.updated`` reason; True once the compaction is over."""
        outcome = self.ending(reason)
        if outcome is None or (self.outcome is not None and not self.waits_for_end):
            return False
        self.outcome = outcome
        return self.answer is not None  # the answer may still be on its way (the seed's order)

    def result(self) -> dict[str, Any]:
        """What the caller of ``_session/compact`` gets: the engine's answer, its state the real end."""
        answer = dict(self.answer or {})
        compact = dict(answer.get("compact") or {}) if isinstance(answer.get("compact"), dict) else {}
        if compact or self.waits_for_end:
            compact["state"] = self.outcome
            answer["compact"] = compact
        return answer

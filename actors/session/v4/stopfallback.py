"""The stop fallback on the v4 path: a stopped turn that runs on is ended by closing the session.

The legacy path's Turn watches a stopped turn and, still running after
``ZCODE_ACP_STOP_FALLBACK`` seconds, has the Session close and resume the backend
session (actors/turn.py). The v4 path has no Turn actor: the cancel answers the prompt
after a short grace and mutes the stopped turn's late frames until the engine's state
says it ended (actors/session/v4/path.py). The engine's own queue would run a new
prompt after that turn — never, if the turn ignores the stop — so the v4 path keeps a
prompt meanwhile (told why, once) and, past the deadline, closes and resumes the session,
then sends it. This object keeps the deadline and whether the notice was told.
"""

from __future__ import annotations


class StopFallback:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.due_ms: float | None = None  # when a stopped turn still running is ended by a close
        self.told = False  # the "has not stopped yet" notice was given for this stopped turn

    def arm(self, now_ms: float) -> float:
        """A stop was sent: the deadline starts (the first stop's; later ones do not move it).
        Returns the seconds until it is due."""
        if self.due_ms is None:
            self.due_ms = now_ms + self.seconds * 1000
        return max(self.due_ms - now_ms, 0.0) / 1000.0

    def overdue(self, now_ms: float) -> bool:
        return self.due_ms is not None and now_ms >= self.due_ms

    def notice_due(self) -> bool:
        """True once per stopped turn: the first prompt kept waiting for it says why."""
        if self.told:
            return False
        self.told = True
        return True

    def over(self) -> None:
        """The stopped turn ended (by itself, or by the close): nothing more to watch."""
        self.due_ms = None
        self.told = False

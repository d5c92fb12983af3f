"""Why a session is busy when a prompt's send is refused: an older turn of ours still holds it (issue 21).

A stopped turn normally ends within moments. The 0.16 engine ends one that
ignored even the v4 stop when the Session closes and resumes the backend
session (after ``ZCODE_ACP_STOP_FALLBACK``, 5 s). The seed's engine has no
``session/close`` (``-32601``): a turn that ignores ``session/stop`` there
holds the session until it ends by itself — minutes, or never. Either way the
next prompt waits; what this object decides is what the user reads meanwhile
and whether the wait has the usual busy limit (docs/decisions.md, "A turn
that ignores stop never jams its session").

A plain object the Session owns; it sees every applied event.
"""

from __future__ import annotations

from typing import Any

from zcode_acp.protocol import events as ev
from zcode_acp.protocol.i18n import EN, t

# The notices' catalog keys (protocol/i18n).
STOPPING = "notice.stopping"  # an engine that can close a session (today's): the fallback will end it
STOPPING_NO_CLOSE = "notice.stopping_no_close"  # the seed's engine: no session/close, nothing to promise
STUCK = "notice.stuck"
FREED = "notice.freed"


class HeldSession:
    # Every live Session has one: slots, not a __dict__ (docs/performance.md, "Idle sessions").
    __slots__ = ("lang", "stuck_turn")

    def __init__(self, lang: str = EN) -> None:
        self.lang = lang
        self.stuck_turn: str | None = None  # a backend turn that ignored its stop and could not be closed

    def close_failed(self, turn_id: str | None) -> str | None:
        """The fallback close did not end a stopped turn; the notice for the session, if it is news."""
        if turn_id is None or turn_id == self.stuck_turn:
            return None
        self.stuck_turn = turn_id
        return t(self.lang, STUCK)

    def event(self, event: dict[str, Any]) -> str | None:
        """An applied event; the notice for the session when it frees a stuck turn."""
        if self.stuck_turn is None:
            return None
        kind = event.get("type")
        if kind == ev.SESSION_CLOSED or (kind in ev.TURN_END_TYPES and ev.turn_id(event) == self.stuck_turn):
            self.stuck_turn = None
            return t(self.lang, FREED)
        return None

    def freed(self) -> None:
        """The session was closed and resumed: whatever ran in it is gone."""
        self.stuck_turn = None

    def busy_reason(self, older_turn_alive: bool, can_close: bool = True) -> tuple[str, bool] | None:
        """(notice, unbounded) for a Turn whose send was refused busy, when the Session knows why.

        ``can_close``: whether this engine has ``session/close`` (the 0.16 engine does; the seed's
        answers ``-32601``). A notice promises only what the bridge can do on that engine
        (docs/decisions.md, "A stopping notice promises only what the engine allows").
        """
        if self.stuck_turn is not None:
            return t(self.lang, STUCK), True
        if older_turn_alive:
            return t(self.lang, STOPPING if can_close else STOPPING_NO_CLOSE), False
        return None

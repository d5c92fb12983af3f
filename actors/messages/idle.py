"""Idle sessions (docs/performance.md, "Idle sessions"): the Session's own check, the Supervisor's
notice, and the record a Session leaves when it goes dormant."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zcode_acp.actors.message_class import message


# -- idle sessions (docs/performance.md, "Idle sessions") ----------------------------------------

@message
class IdleCheck:
    """A Session's own timer: has it been idle for ``config.idle_session_after``?"""


@message
class SessionIdle:
    """A Session → the Supervisor: idle long enough to leave memory."""

    session_id: str


@message
class GoDormant:
    """The Supervisor → an idle Session: answer a ``Dormant`` record and stop taking part, or None if busy."""


@message
class Dormant:
    """What the Supervisor keeps of a stopped idle Session to bring it back on its next use."""

    cwd: str
    mcp_servers: Sequence[Any]  # a tuple once kept (actors/dormant_records.py)
    backend_session_id: str | None
    settings: Any
    root_known: bool
    # What the listings show of it (its activity entry goes with the live Session: Supervisor.on_session_idle)
    updated_at: int = 0
    title: str = ""

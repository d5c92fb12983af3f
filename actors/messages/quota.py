"""Messages of the Coding Plan's quota (actors/quota.py): the QuotaWatch's, and the news it sends."""

from __future__ import annotations

from typing import Any

from zcode_acp.actors.message_class import message
from zcode_acp.actors.messages.base import Json, Ref


@message
class RefreshQuota:
    """Read the quota again if the last read is old enough (a turn ended, a session opened)."""


@message
class ReadQuota:
    """A client's ``quota/read``: answered with a ``Reply`` on ``conn`` (the snapshot, or an error)."""

    conn: Ref
    request_id: Json
    lang: str


@message
class QuotaKeyFound:
    """The key lookup (file reads, off the actor's mail loop) is done: ``key`` is a PlanKey or None."""

    key: Any
    warnings: tuple[str, ...] = ()


@message
class QuotaFetched:
    """A read ended: ``snapshot`` (a QuotaSnapshot) or ``reason``/``detail`` (a ``quota.error.*`` key)."""

    snapshot: Any = None
    reason: str = ""
    detail: str = ""


@message
class QuotaChanged:
    """The QuotaWatch tells the Supervisor: a snapshot that differs from the last one, and the meters
    that reached an alert level (``(Meter, level)`` pairs, protocol/quota.crossed)."""

    snapshot: Any
    crossings: tuple[Any, ...] = ()


@message
class QuotaNews:
    """The Supervisor tells each live Session: the RFD snapshot for the clients that declared
    ``session.quota`` (their urns), and the alert lines for the others (empty: nothing to say)."""

    document: dict[str, Any]
    quota_clients: frozenset[str]
    alerts: tuple[str, ...] = ()


@message
class QuotaAtFailure:
    """A Turn the plan's limit stopped asks (through the Supervisor) for the snapshot to name the
    window in its end: answered with ``QuotaForFailure`` on ``reply_to``, after a read when the last
    snapshot is stale (docs/quota.md, "When the limit is hit")."""

    reply_to: Ref
    key: int


@message
class QuotaForFailure:
    """The QuotaWatch's answer to ``QuotaAtFailure`` (``snapshot``: a QuotaSnapshot, or None when it
    has none), or the Turn's own deadline for it (``timed_out``)."""

    key: int
    snapshot: Any = None
    timed_out: bool = False


@message
class QuotaToldAtTurnEnd:
    """A Turn's end said a window is used up (the quotaExceeded error): the Supervisor does not tell
    that session the same again as a notice (``meter_id``, ``resets_at``: the alert's key)."""

    session_id: str
    meter_id: str
    resets_at: str

    @staticmethod
    def of(session_id: str, meter: Any) -> QuotaToldAtTurnEnd:
        """For the used-up ``meter`` (protocol/quota.Meter) a turn's end named."""
        return QuotaToldAtTurnEnd(session_id, meter.id, meter.resets_at.isoformat() if meter.resets_at else "")

"""What a v4 turn's end tells the Supervisor for the webhook notices (docs/hub.md, "Notifications").

On the legacy path the Turn knows its outcome (the stop reason or the error's words) and
its final answer (``turn.completed``'s ``response``). On v4 neither comes as one value:
the outcome is the ``control`` change the feed turns into ``TurnEnded``, and the answer is
the text of the turn's last ``assistantText`` row (rows are self-contained and carry their
``turnId``). The title the notices name comes from the ``session_info_update``s the
feed makes of ``meta.title``. Pure: no actor, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from zcode_acp.protocol.v4.conversation import TurnEnded


@dataclass(frozen=True, slots=True)
class TurnNotice:
    outcome: str
    """The stop reason, or the engine's words for a failed turn."""
    answer: str
    """The turn's final answer (sent only to a webhook that opted in to text)."""


def outcome_of(ended: TurnEnded) -> str:
    if ended.stop_reason is not None:
        return ended.stop_reason
    error = ended.error or {}
    message = error.get("message")
    return str(message) if message else str(error.get("code") or "error")


def final_answer(rows: Sequence[dict[str, Any]]) -> str:
    """The text of the last ``assistantText`` row of the newest turn in the window ("" when none)."""
    if not rows:
        return ""
    turn_id = rows[-1].get("turnId")
    for row in reversed(rows):
        if row.get("turnId") != turn_id:
            break
        if row.get("kind") == "assistantText" and isinstance(row.get("text"), str) and row["text"]:
            return str(row["text"])
    return ""


def titles(updates: Sequence[dict[str, Any]]) -> list[str]:
    """The session titles these ACP updates announce (the engine's ``meta.title`` as it changed)."""
    return [str(u["title"]) for u in updates
            if u.get("sessionUpdate") == "session_info_update" and isinstance(u.get("title"), str) and u["title"]]


def turn_notice(ended: TurnEnded, rows: Sequence[dict[str, Any]]) -> TurnNotice:
    return TurnNotice(outcome_of(ended), final_answer(rows))

"""The conversation's ``backgroundWorks`` → background task cards, as the legacy path shows them.

The engine lists each background work (``snapshot.ts`` ``backgroundWorks[]``: ``workId``,
``kind`` bash|subagent|workflow, ``title``, ``status`` running|resultPending|failed|
cancelled) and marks the tool call that launched it (``rows.ts``: the ``toolCall`` row gets
``backgrounded: true`` and the ``workId``). The cards follow the legacy state machine
(``protocol/background.py``, docs/background-tasks.md) so a client sees one behaviour on
either path: a background Bash work carries on in its launch card; any other work (a
sub-agent, a workflow, a Bash whose launch card this client never saw) gets a card of its
own, ``bg_<workId>``; each card closes once — ``resultPending`` (the work is done, its
result not yet handed to the model) is ``completed``, ``cancelled`` fails marked
``cancelled``, and a work that leaves the list before it ended completed (its result was
delivered). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zcode_acp.protocol.background import TaskCards
from zcode_acp.protocol.i18n import EN

Update = dict[str, Any]
# ``launch_card(work)``: the card the tool call that launched ``work`` opened, and whether it is a
# terminal; None when this client never saw that card.
LaunchCard = Callable[[dict[str, Any]], "tuple[str, bool] | None"]

# The engine's v4 work status → the legacy task status TaskCards reads.
LEGACY_STATUS = {"running": "running", "resultPending": "completed", "failed": "failed", "cancelled": "cancelled"}


def works_of(value: Any) -> list[dict[str, Any]]:
    return [w for w in value or () if isinstance(w, dict) and isinstance(w.get("workId"), str)]


class WorkCards:
    def __init__(self, lang: str = EN) -> None:
        # A work's own card (``bg_<workId>``) is never a terminal: the work's output is not streamed
        # on v4. A launch card is one when the conversation made it one (``launch_card`` says).
        self.cards = TaskCards(terminal_output=False, lang=lang)
        self.live: set[str] = set()  # works listed and not yet ended, by id

    def baseline(self, works: Any, launch_card: LaunchCard) -> None:
        """Attach to a conversation already on screen: its works are known (a Bash one in its launch
        card), nothing announced."""
        listed = works_of(works)
        for work in listed:
            launch = launch_card(work) if work.get("kind") == "bash" else None
            self.cards.update(*self._payload(work, launch))  # recorded, not sent
        self.live = {w["workId"] for w in listed if w.get("status") == "running"}

    def changed(self, works: Any, launch_card: LaunchCard) -> list[Update]:
        """The new ``backgroundWorks``; ``launch_card(work)`` names the card a bash work carries on in,
        and whether that card is a terminal."""
        out: list[Update] = []
        listed = works_of(works)
        for work in listed:
            launch = launch_card(work) if work.get("kind") == "bash" else None
            out.extend(self.cards.update(*self._payload(work, launch)))
            if LEGACY_STATUS.get(str(work.get("status"))) == "running":
                self.live.add(work["workId"])
            else:
                self.live.discard(work["workId"])
        gone = self.live - {w["workId"] for w in listed}
        for work_id in sorted(gone):  # its result reached the conversation: it finished
            self.live.discard(work_id)
            out.extend(self.cards.update({"taskId": work_id, "status": "completed"}, None))
        return out

    def closed_card_ids(self) -> set[str]:
        return {card.card_id for card in self.cards.cards.values() if card.closed}

    def card_ids(self) -> set[str]:
        return {card.card_id for card in self.cards.cards.values()}

    def close_all(self) -> list[Update]:
        self.live.clear()
        return self.cards.close_all()

    @staticmethod
    def _payload(work: dict[str, Any], launch: tuple[str, bool] | None) -> tuple[dict[str, Any], bool | None]:
        """The legacy task payload of ``work``, and whether its launch card is a terminal (None: no launch card)."""
        payload: dict[str, Any] = {"taskId": work["workId"], "status": LEGACY_STATUS.get(str(work.get("status")), "running"),
                                   "description": work.get("title") or work.get("kind") or "task",
                                   "toolName": "Bash" if work.get("kind") == "bash" else "Agent"}
        if launch is None:
            return payload, None
        payload["toolCallId"], terminal = launch
        return payload, terminal

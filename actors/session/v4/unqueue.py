"""The queued prompts a ``session/cancel`` cancels on the v4 path (a plain part of the Session).

On v4 a prompt sent while a turn runs may wait in the engine's queue (docs/v4.md,
"Prompts"). A stop ends the running turn and *holds* the queue (``autoDrain: false``,
``pauseReason: stopped``): what waits there would neither run nor be answered. So
``session/cancel`` cancels those prompts too — each is answered ``cancelled`` at once, and
its queue item is deleted from the engine's queue as soon as the conversation shows it
(an item can arrive after its ``sendText`` ack), after which the queue drains again
(``setAutoDrain true``) so a later prompt that queues is not held behind the stop.
"""

from __future__ import annotations

from typing import Any

from zcode_acp.protocol.v4 import commands as v4
from zcode_acp.actors.session.v4.extras import queue_items


class V4Unqueue:
    def __init__(self) -> None:
        self.pending: set[str] = set()
        """``sendText`` ids of cancelled prompts whose queue items are still to be deleted."""

    def add(self, command_ids: list[str]) -> None:
        self.pending.update(command_ids)

    def sweep(self, session_id: str, state: dict[str, Any]) -> list[v4.Command]:
        """The commands that delete the items the conversation now shows, then resume draining."""
        if not self.pending:
            return []
        found = []
        for item in queue_items(state):
            source, item_id = item.get("sourceCommandId"), item.get("queueItemId")
            if source in self.pending and isinstance(item_id, str):
                self.pending.discard(source)
                found.append(v4.delete_queue_item(session_id, item_id))
        return [*found, v4.set_auto_drain(session_id, True)] if found else []

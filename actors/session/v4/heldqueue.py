"""The engine's held queue on the v4 path (a plain part of the Session; docs/v4.md, "The held queue").

When a turn fails (or a compaction fails or is stopped) with inputs in its queue, the engine
stops draining it (``queue {autoDrain: false, pauseReason}``, ``inputRouting: choice``) and
refuses every ``sendText`` that does not say what to do with it (``heldQueueDisposition``,
product-projection.ts, input-admission.ts). An ACP client has no such choice to offer: each
queued prompt is a ``session/prompt`` still waiting for its answer. So the bridge resumes the
queue (``setAutoDrain true``, decided against the revision it saw: a queue changed meanwhile
makes the command stale, and ``V4Commands`` tries once more against the new state), and the
queued prompts run in their order, each answered at its own turn's end. A queue someone paused
by hand (``pauseReason: manual``) is left as it is; a stop's hold is the cancel's to undo
(``v4/unqueue.py``). A prompt sent while the routing is still ``choice`` goes past the queue
(``keepQueueAndSend``, naming the items the bridge saw, so none added meanwhile is dropped).
"""

from __future__ import annotations

from typing import Any

from zcode_acp.protocol.v4 import commands as v4
from zcode_acp.protocol.v4.conversation_view import input_routing
from zcode_acp.actors.session.v4.extras import queue_items


def queue_held(state: dict[str, Any]) -> bool:
    """Items wait in the engine's queue and it does not drain them."""
    queue = state.get("queue")
    return isinstance(queue, dict) and queue.get("autoDrain") is False and bool(queue_items(state))


def pause_reason(state: dict[str, Any]) -> str | None:
    queue = state.get("queue")
    reason = queue.get("pauseReason") if isinstance(queue, dict) else None
    return reason if isinstance(reason, str) else None


def held_disposition(state: dict[str, Any]) -> dict[str, Any]:
    """``send_text``'s held-queue arguments while the routing is ``choice`` (else none)."""
    if input_routing(state).mode != "choice":
        return {}
    ids = [item["queueItemId"] for item in queue_items(state) if isinstance(item.get("queueItemId"), str)]
    return {"held_queue": "keepQueueAndSend", "held_queue_item_ids": ids}


class V4HeldQueue:
    def __init__(self) -> None:
        self.asked = False
        """A ``setAutoDrain true`` was sent for this hold: not asked again until the queue is no longer held."""

    def resume(self, session_id: str, state: dict[str, Any], ours: set[str]) -> v4.Command | None:
        """The command that lets a queue the engine held after a failure drain again, or None: nothing
        held, held by hand or by a stop, or none of its items is a prompt this Session still owes."""
        if not queue_held(state) or pause_reason(state) in ("manual", "stopped"):
            self.asked = False  # nothing (more) to resume: a later hold is asked for again
            return None
        if self.asked:
            return None  # the ack comes before the frame that shows the queue draining
        if not any(item.get("sourceCommandId") in ours for item in queue_items(state)):
            return None
        self.asked = True
        return v4.set_auto_drain(session_id, True)

    def refused(self) -> None:
        self.asked = False

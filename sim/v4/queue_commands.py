"""The engine's queue as commands: ``sendQueuedNow``, ``editQueueItem``, ``reorderQueueItem``,
``deleteQueueItem``, ``setAutoDrain``, and its draining when a turn ends.

Items are the engine's input intents (``zcode-protocol-v4/input-intent.ts``, a strict
object): ``{sourceCommandId, queueItemId, clientId, kind, text, attachments, delivery,
order, steer, dispatch, admittedAt}``. An item that is gone is ``stale proto.staleTarget``;
"send now" steers the item into the running turn (``sendQueuedNow`` needs one running,
as ``availability`` says); the queue drains in order while ``autoDrain`` holds (a stop
pauses it with ``pauseReason: stopped``, ``setAutoDrain false`` with ``manual``).
"""

from __future__ import annotations

from typing import Any

from .command_base import CommandBase, Decision, need
from .projection import ConversationProjection, ExpectedInput


class QueueCommands(CommandBase):
    def drain(self, session_id: str) -> None:
        """After a turn ends: the next queued input starts, if the queue drains itself."""
        projection = self.sessions.get(session_id)
        if projection is None or projection.busy:
            return
        queue = projection.state["queue"]
        if not queue["items"] or not queue["autoDrain"]:
            return
        item, rest = queue["items"][0], queue["items"][1:]
        self._set_items(projection, rest)
        projection.commit()
        if item["kind"] == "compact":  # a compaction asked for while busy (goal-compact.ts): its turn came
            projection.compact_command = item["sourceCommandId"]
            self.port.compact(session_id)
            return
        self._start(projection, item["text"], item["sourceCommandId"], item["clientId"], item.get("attachments") or [])

    def _enqueue(self, projection: ConversationProjection, text: str, command_id: str, client_id: Any,
                 attachments: list[dict[str, Any]], requested: Any, *, admitted: str = "queue",
                 kind: str = "sendText") -> None:
        queue = projection.state["queue"]
        item = {"sourceCommandId": command_id, "queueItemId": f"queue_{command_id}",  # command-inbox.ts
                "clientId": client_id if isinstance(client_id, str) and client_id else "unknown-client",
                "kind": kind, "text": text, "attachments": attachments,
                "delivery": {"requested": requested if requested in ("startNow", "queue", "guide") else "auto",
                             "admitted": admitted},
                "order": {"admissionSeq": projection.log.seq, "queuePosition": len(queue["items"])},
                "steer": {"state": "notRequested"}, "dispatch": {"state": "queued"},
                "admittedAt": int(self.clock())}
        projection.set("queue", {**queue, "items": [*queue["items"], item]})


    def _queue_item(self, payload: dict[str, Any], projection: ConversationProjection) -> tuple[int, dict[str, Any]]:
        item_id = need(payload, "queueItemId", str, "string")
        for position, item in enumerate(projection.state["queue"]["items"]):
            if item["queueItemId"] == item_id:
                return position, item
        raise Decision("stale", "proto.staleTarget")

    def _set_items(self, projection: ConversationProjection, items: list[dict[str, Any]]) -> None:
        items = [{**item, "order": {**item["order"], "queuePosition": position}} for position, item in enumerate(items)]
        projection.set("queue", {**projection.state["queue"], "items": items})
        if not projection.busy:
            projection.set("inputRouting", projection.idle_routing())  # an emptied held queue needs no choice

    def _c_sendQueuedNow(self, params: dict[str, Any], payload: dict[str, Any],
                         projection: ConversationProjection) -> dict[str, Any]:
        position, item = self._queue_item(payload, projection)
        self._allowed(projection, "sendQueuedNow")
        items = list(projection.state["queue"]["items"])
        del items[position]
        self._set_items(projection, items)
        input_id = self._input_id()
        projection.guides[input_id] = ExpectedInput(item["text"], item["sourceCommandId"], item["clientId"])
        self.port.guide(projection.session_id, item["text"], input_id)
        return {"type": "inputDisposition", "delivery": "guide"}

    def _c_editQueueItem(self, params: dict[str, Any], payload: dict[str, Any],
                         projection: ConversationProjection) -> None:
        position, item = self._queue_item(payload, projection)
        items = list(projection.state["queue"]["items"])
        items[position] = {**item, "text": need(payload, "newText", str, "string")}
        self._set_items(projection, items)

    def _c_reorderQueueItem(self, params: dict[str, Any], payload: dict[str, Any],
                            projection: ConversationProjection) -> None:
        _, item = self._queue_item(payload, projection)
        items = [i for i in projection.state["queue"]["items"] if i is not item]
        before = payload.get("beforeQueueItemId")
        if before is None:
            items.append(item)
        else:
            index = next((n for n, i in enumerate(items) if i["queueItemId"] == before), None)
            if index is None:
                raise Decision("stale", "proto.staleTarget")
            items.insert(index, item)
        self._set_items(projection, items)

    def _c_deleteQueueItem(self, params: dict[str, Any], payload: dict[str, Any],
                           projection: ConversationProjection) -> None:
        position, _ = self._queue_item(payload, projection)
        items = list(projection.state["queue"]["items"])
        del items[position]
        self._set_items(projection, items)

    def _c_setAutoDrain(self, params: dict[str, Any], payload: dict[str, Any],
                        projection: ConversationProjection) -> None:
        auto = need(payload, "autoDrain", bool, "boolean")
        queue = {k: v for k, v in projection.state["queue"].items() if k != "pauseReason"}
        if not auto:
            queue["pauseReason"] = "manual"
        projection.set("queue", {**queue, "autoDrain": auto})
        if not projection.busy:
            projection.set("inputRouting", projection.idle_routing())
        projection.commit()
        if auto:
            self.drain(projection.session_id)

"""BackgroundTasks: one session's background tasks and notification turns.

Owns the task cards (``protocol/background.py``: launch-card reuse for
background Bash, ``bg_*`` cards otherwise) and the completion-notification
turns (``inputSource: "background_task"``), whose text reaches the client with
a fresh ``messageId`` per turn whether or not a user prompt is running. The
Session forwards it exactly the events that are not a prompt's, in order.
"""

from __future__ import annotations

import uuid
from typing import Any

from zcode_acp.protocol import events as ev
from zcode_acp.protocol.background import TaskCards
from zcode_acp.protocol.translator import TurnTranslator

from zcode_acp.actors.base import BridgeActor, handles
from zcode_acp.actors.delivery import deliver
from zcode_acp.actors.messages import ClientsChanged, CloseTasks, TaskCancelled, TaskEvents
from zcode_acp.actors.transport import flow


class BackgroundTasks(BridgeActor):
    def __init__(self, session_id: str, clients: list[Any], terminal_output: bool, lang: str = "en") -> None:
        super().__init__()
        self.session_id = session_id
        self.clients = list(clients)
        self.terminal_output = terminal_output
        self.lang = lang
        self.cards = TaskCards(terminal_output, lang)
        self.turns: dict[str, TurnTranslator] = {}  # notification turn id → its translator

    def _deliver(self, updates: list[dict[str, Any]]) -> None:
        deliver(self.clients, self.session_id, updates)

    @handles(ClientsChanged)
    def on_clients_changed(self, message: ClientsChanged) -> None:
        self.clients = list(message.clients)

    @handles(TaskEvents)
    def on_task_events(self, message: TaskEvents) -> None:
        """``(event, launch_terminal)`` pairs, in pipe order."""
        try:
            self._events(message.events)
        finally:
            flow.done(message.token)

    def _events(self, events: list[Any]) -> None:
        updates: list[dict[str, Any]] = []
        for event, launch_terminal in events:
            kind = event.get("type")
            if kind == ev.SESSION_UPDATED:
                updates.extend(self.cards.update(ev.payload(event), launch_terminal))
                continue
            turn_id = ev.turn_id(event) or ""
            if kind == ev.TURN_STARTED:
                self.turns[turn_id] = TurnTranslator(message_id=uuid.uuid4().hex, terminal_output=self.terminal_output,
                                                     lang=self.lang)
            elif kind in ev.TURN_END_TYPES:
                self.turns.pop(turn_id, None)
            elif turn_id in self.turns:
                updates.extend(self.turns[turn_id].feed(event))
        self._deliver(updates)

    @handles(TaskCancelled)
    def on_task_cancelled(self, message: TaskCancelled) -> None:
        self._deliver(self.cards.cancel(message.task_id))

    @handles(CloseTasks)
    def on_close_tasks(self, message: CloseTasks) -> None:
        self._deliver(self.cards.close_all())

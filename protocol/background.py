"""Background tasks → tool cards (docs/background-tasks.md).

``TaskCards`` is the per-session state machine of background task cards: a
background Bash task updates the launch card it came from (card reuse); any
other task (a background sub-agent, or a task whose launch card is unknown)
gets a card of its own, ``bg_<taskId>``. Each card is closed exactly once, and
cumulative ``outputTail``s are sent as new suffixes only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import tools, updates
from .i18n import EN, t
from .updates import terminal_exit, terminal_output

# The engine's final task statuses (its background-task status enum: running, completed, failed,
# timed_out, cancelled, spawn_error, lost; "killed" is the seed's) → the card's last ACP status.
FINAL = {"completed": "completed", "failed": "failed", "cancelled": "failed", "killed": "failed",
         "timed_out": "failed", "spawn_error": "failed", "lost": "failed"}
# Why a failed card failed, in words the user reads (the status alone is an engine code).
ENDING = {"timed_out": "background.timed_out", "spawn_error": "background.spawn_error",
          "lost": "background.lost"}  # catalog keys (protocol/i18n)


@dataclass
class TaskCard:
    card_id: str
    task_id: str
    reused: bool  # the background Bash launch card
    terminal: bool
    output: str = ""  # cumulative output already sent
    announced: bool = False
    closed: bool = False


class TaskCards:
    def __init__(self, terminal_output: bool = False, lang: str = EN) -> None:
        self.terminal_output = terminal_output
        self.lang = lang
        self.cards: dict[str, TaskCard] = {}  # by task id

    def update(self, payload: dict[str, Any], launch_terminal: bool | None) -> list[dict[str, Any]]:
        """One ``session.updated`` carrying a ``taskId``.

        ``launch_terminal`` is None unless ``payload.toolCallId`` names a tracked
        launch card (then: whether that card renders as a terminal).
        """
        task_id = str(payload.get("taskId"))
        card = self.cards.get(task_id)
        out: list[dict[str, Any]] = []
        if card is None:
            if launch_terminal is not None:
                card = TaskCard(str(payload["toolCallId"]), task_id, reused=True, terminal=launch_terminal)
            else:
                card = TaskCard(f"bg_{task_id}", task_id, reused=False, terminal=False)
            self.cards[task_id] = card
        if card.closed:
            return out
        if not card.announced:
            card.announced = True
            out.append(self._open(card, payload))
        tail = payload.get("outputTail")
        if isinstance(tail, str):
            out.extend(self._output(card, tail))
        status = FINAL.get(str(payload.get("status")))
        if status:
            ending_key = ENDING.get(str(payload.get("status")))
            ending = t(self.lang, ending_key) if ending_key else None
            if ending and card.terminal:
                out.append(terminal_output(card.card_id, f"\n{ending}\n"))
            elif ending:
                out.append(updates.tool_call_update(
                    card.card_id, content=tools.text_content(f"{card.output}\n{ending}" if card.output else ending)))
            out.append(self._close(card, status, cancelled=payload.get("status") == "cancelled",
                                   ending=str(payload.get("status")) if ending else None))
        return out

    def _open(self, card: TaskCard, payload: dict[str, Any]) -> dict[str, Any]:
        meta: dict[str, Any] = {"backgroundTask": {"taskId": card.task_id}}
        if isinstance(payload.get("outputPath"), str):
            meta["backgroundTask"]["outputPath"] = payload["outputPath"]
        if card.reused:
            return updates.tool_call_update(card.card_id, status="in_progress", _meta=meta)
        description = payload.get("description") or payload.get("toolName") or "task"
        return updates.tool_call(card.card_id, f"[background] {description}", "other", "in_progress", meta,
                                 raw_input={"taskId": card.task_id})

    def _output(self, card: TaskCard, tail: str) -> list[dict[str, Any]]:
        if card.terminal:
            data = tools.new_suffix(card.output, tail)
            card.output = tail
            return [terminal_output(card.card_id, data)] if data else []
        if tail == card.output:
            return []
        card.output = tail
        return [updates.tool_call_update(card.card_id, content=tools.text_content(tail))]

    def _close(self, card: TaskCard, status: str, cancelled: bool = False, ending: str | None = None) -> dict[str, Any]:
        card.closed = True
        meta: dict[str, Any] = {"backgroundTask": {"taskId": card.task_id}}
        if cancelled:
            meta["backgroundTask"]["cancelled"] = True
        if ending:
            meta["backgroundTask"]["status"] = ending
        if card.terminal:
            return terminal_exit(card.card_id, status, 0 if status == "completed" else 1, _meta=meta)
        return updates.tool_call_update(card.card_id, status=status, _meta=meta)

    def cancel(self, task_id: str) -> list[dict[str, Any]]:
        """``session/cancelBackgroundTask`` succeeded: the card fails, marked cancelled."""
        card = self.cards.get(task_id)
        if card is None or card.closed:
            return []
        return [self._close(card, "failed", cancelled=True)]

    def close_all(self) -> list[dict[str, Any]]:
        """The session ends: still-running task cards fail."""
        return [self._close(card, "failed") for card in self.cards.values() if not card.closed]

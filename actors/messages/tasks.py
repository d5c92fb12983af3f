"""Messages a session's BackgroundTasks receives (actors/background_tasks.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zcode_acp.actors.message_class import message

if TYPE_CHECKING:
    from zcode_acp.actors.transport.flow import Token

from zcode_acp.actors.messages.base import Consumed


# -- BackgroundTasks ---------------------------------------------------------------------------------


@message
class TaskEvents(Consumed):
    """``(event, launch_terminal | None)`` pairs, in pipe order."""

    events: list[tuple[dict[str, Any], bool | None]]
    token: Token | None = None

    def release(self) -> None:
        self.events.clear()


@message
class TaskCancelled:
    task_id: str


@message
class CloseTasks:
    pass

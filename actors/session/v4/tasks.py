"""``session/cancelBackgroundTask`` on the v4 path: the engine's ``cancelBackgroundWork`` command.

On the legacy path the call goes to the engine as is and its answer comes back
(``{cancelled, status, taskId}`` from today's engine); on v4 the same act is
``v4/command cancelBackgroundWork {workId}`` (a task id is the work's id), decided by the
engine against its ``backgroundWorks``. The client gets the legacy answer's shape on either
path: an accepted (or duplicate) command cancelled the work, a ``noop`` means it was no
longer running. The card is not closed here: the work's ``cancelled`` status in the next
frame closes it (protocol/v4/work_cards.py), once.
"""

from __future__ import annotations

from typing import Any

METHOD = "cancelBackgroundWork"


def cancel_call_params(task_id: str) -> dict[str, Any]:
    return {"workId": task_id}


def cancel_answer(task_id: str, result: Any) -> dict[str, Any]:
    """The ACP answer for the command's outcome (``V4Extras`` gives ``{status, …ack result}``)."""
    status = result.get("status") if isinstance(result, dict) else None
    if status in ("accepted", "duplicate"):
        return {"cancelled": True, "status": "cancelled", "taskId": task_id}
    return {"cancelled": False, "taskId": task_id}

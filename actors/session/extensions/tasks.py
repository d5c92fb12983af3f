"""Stopping a background task: ``session/cancelBackgroundTask`` and the AIR ``session/async_task/stop``.

On the legacy path the call goes to the engine as is and its answer comes back
(``{cancelled, status, taskId}`` from the 0.16 engine); the task's card is cancelled unless the
engine says it was not (``Controls.cancel_task``). On v4 the same act is
``v4/command cancelBackgroundWork {workId}`` (a task id is the work's id), decided by the
engine against its ``backgroundWorks``. The client gets the legacy answer's shape on either
path: an accepted (or duplicate) command cancelled the work, a ``noop`` means it was no
longer running. On v4 the card is not closed here: the work's ``cancelled`` status in the next
frame closes it (protocol/v4/work_cards.py), once.
"""

from __future__ import annotations

from typing import Any

from zcode_acp.protocol import extension_calls
from zcode_acp.protocol.extension_calls import TaskStop

from zcode_acp.actors.session.extensions.air import stop_answers
from zcode_acp.actors.session.extensions.handler import ExtensionRequest, Handler, V4Surface


def cancel_answer(task_id: str, result: Any) -> dict[str, Any]:
    """The ACP answer for the v4 command's outcome (``{status, …ack result}``)."""
    status = result.get("status") if isinstance(result, dict) else None
    if status in ("accepted", "duplicate"):
        return {"cancelled": True, "status": "cancelled", "taskId": task_id}
    return {"cancelled": False, "taskId": task_id}


class CancelBackgroundTask(Handler[TaskStop]):
    name = "session/cancelBackgroundTask"

    def validate(self, params: dict[str, Any]) -> TaskStop:
        return extension_calls.cancel_task(params)

    def on_legacy(self, call: TaskStop, request: ExtensionRequest) -> None:
        request.controls.cancel_task(call.task_id, request.on_result, request.failed)

    def on_v4(self, call: TaskStop, request: ExtensionRequest, engine: V4Surface) -> None:
        from zcode_acp.protocol.v4 import commands as v4  # the v4 path's own: imported with it

        def answer(result: Any) -> None:
            request.on_result(cancel_answer(call.task_id, result))

        engine.when_live(lambda: engine.send_command(lambda sid: v4.cancel_background_work(sid, call.task_id),
                                                     answer, request.on_error), request.on_error)


class AsyncTaskStop(CancelBackgroundTask):
    """The AIR name of the same stop, answered ``{stopped}`` (air.py)."""

    name = "session/async_task/stop"

    def validate(self, params: dict[str, Any]) -> TaskStop:
        return extension_calls.async_task_stop(params)

    def on_legacy(self, call: TaskStop, request: ExtensionRequest) -> None:
        super().on_legacy(call, request.answered(*stop_answers(request.on_result, request.on_error)))

    def on_v4(self, call: TaskStop, request: ExtensionRequest, engine: V4Surface) -> None:
        super().on_v4(call, request.answered(*stop_answers(request.on_result, request.on_error)), engine)

"""What only the v4 data plane offers (``ZCODE_ACP_ENGINE_API=v4``): the engine's queue, a turn
retried, a prompt edited, a turn's file changes (docs/protocol-mapping.md).

Each is a ``V4Only``: the legacy path answers ``-32601`` saying so. On v4 each reads the
conversation the session's feed holds, or is one ``v4/command`` (its base revision and log
epoch from that same state) answered ``{status, …result}`` once acked (``V4Surface``).
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

from zcode_acp.protocol import extension_calls
from zcode_acp.protocol.extension_calls import RowCall

from zcode_acp.actors.session.extensions.handler import ExtensionRequest, V4Only, V4Surface


class RowHandler(V4Only[RowCall]):
    required: tuple[str, ...] = ()

    def validate(self, params: dict[str, Any]) -> RowCall:
        return extension_calls.row_call(*self.required)(params)

    @staticmethod
    def _once_live(engine: V4Surface, request: ExtensionRequest, act: Callable[[], None]) -> None:
        """``act`` once the session's engine conversation is live (a failure answers the request)."""
        engine.when_live(act, request.on_error)

    def _command(self, engine: V4Surface, request: ExtensionRequest, build: Callable[[str], Any],
                 on_ack: Callable[[Any], None] | None = None) -> None:
        self._once_live(engine, request,
                        lambda: engine.send_command(build, request.on_result, request.on_error, on_ack))

    def _row_command(self, engine: V4Surface, request: ExtensionRequest, action: Any, row_id: int | None,
                     build: Callable[..., Any]) -> None:
        self._once_live(engine, request,
                        lambda: engine.send_row_command(action, row_id, build, request.on_result, request.on_error))


class Queue(RowHandler):
    """The engine's queue: ``{items: [{queueItemId, text, state}]}``, in its order."""

    name = "session/queue"

    def on_v4(self, call: RowCall, request: ExtensionRequest, engine: V4Surface) -> None:
        self._once_live(engine, request, lambda: engine.read_queue(request.on_result, request.on_error))


class QueueEdit(RowHandler):
    name = "session/queueEdit"
    required = ("queueItemId", "text")

    def on_v4(self, call: RowCall, request: ExtensionRequest, engine: V4Surface) -> None:
        from zcode_acp.protocol.v4 import commands as v4  # the v4 path's own: imported with it

        item, text = call.params["queueItemId"], call.params["text"]
        self._command(engine, request, lambda sid: v4.edit_queue_item(sid, item, text))


class QueueRemove(RowHandler):
    """The prompt the item came from answers ``cancelled`` once the engine took the delete."""

    name = "session/queueRemove"
    required = ("queueItemId",)

    def on_v4(self, call: RowCall, request: ExtensionRequest, engine: V4Surface) -> None:
        from zcode_acp.protocol.v4 import commands as v4

        item = call.params["queueItemId"]
        self._command(engine, request, lambda sid: v4.delete_queue_item(sid, item), engine.unqueue_on_ack(item))


class QueueSendNow(RowHandler):
    name = "session/queueSendNow"
    required = ("queueItemId",)

    def on_v4(self, call: RowCall, request: ExtensionRequest, engine: V4Surface) -> None:
        from zcode_acp.protocol.v4 import commands as v4

        item = call.params["queueItemId"]
        self._command(engine, request, lambda sid: v4.send_queued_now(sid, item))


class Retry(RowHandler):
    """The latest turn, or the one of ``rowId``: the reply row the engine grants ``canRetry``."""

    name = "session/retry"

    def on_v4(self, call: RowCall, request: ExtensionRequest, engine: V4Surface) -> None:
        from zcode_acp.protocol.v4 import commands as v4

        self._row_command(engine, request, "canRetry", call.params.get("rowId"), v4.retry_turn)


class EditPrompt(RowHandler):
    """The latest prompt, or the userInput row ``rowId``: the engine reruns from it."""

    name = "session/editPrompt"
    required = ("text",)

    def on_v4(self, call: RowCall, request: ExtensionRequest, engine: V4Surface) -> None:
        from zcode_acp.protocol.v4 import commands as v4

        text = call.params["text"]
        self._row_command(engine, request, "canEdit", call.params.get("rowId"),
                          lambda sid, target: v4.edit_user_query(sid, target, text))


class FileChanges(RowHandler):
    """A turn's file changes as diffs: the latest turn, or ``rowId``'s."""

    name = "session/fileChanges"

    def on_v4(self, call: RowCall, request: ExtensionRequest, engine: V4Surface) -> None:
        self._once_live(engine, request, lambda: engine.read_file_changes(call.params.get("rowId"), request.on_result,
                                                                          request.on_error))

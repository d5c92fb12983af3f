"""What only the v4 data plane offers, as ACP extension methods (docs/protocol-mapping.md).

A plain part of a v4 Session: the engine's queue (list, edit, remove, send now), retry of
a turn, edit of an earlier prompt (the engine reruns from it), rename, a turn's file changes
(``v4/conversation/fileChanges``, a read pinned to what the feed saw). Reads come from
the conversation state the Session's feed holds; changes are ``v4/command``s through
``V4Commands`` (their base revision and log epoch from that same state). Which read or command
an ACP method is, its handler says (actors/session/extensions/v4_only.py, through ``V4Engine``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zcode_acp.protocol.errors import INVALID_PARAMS, RpcError, from_backend_error, invalid_params
from zcode_acp.protocol.i18n import t
from zcode_acp.protocol.v4 import commands as v4
from zcode_acp.protocol.v4 import file_changes
from zcode_acp.protocol.v4.row_actions import Action, Refusal
from zcode_acp.protocol.v4.row_actions import target as granted_target

from zcode_acp.actors.session.v4.commands import V4Commands

OnResult = Callable[[Any], None]
OnError = Callable[[RpcError], None]


def queue_items(state: dict[str, Any]) -> list[dict[str, Any]]:
    queue = state.get("queue")
    items = queue.get("items") if isinstance(queue, dict) else None
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def queue_view(state: dict[str, Any]) -> dict[str, Any]:
    """The engine's queue as a client sees it: ids, texts, in order."""
    return {"items": [{"queueItemId": item.get("queueItemId"), "text": item.get("text"),
                       "state": (item.get("dispatch") or {}).get("state")} for item in queue_items(state)]}


def target_row(rows: list[dict[str, Any]], row_id: int | None, kind: str | None) -> dict[str, Any] | None:
    """The row a command names: ``row_id`` if given (of ``kind``, when one is required), else the latest of ``kind``."""
    for row in reversed(rows):
        if (row_id is None or row.get("rowId") == row_id) and (kind is None or row.get("kind") == kind):
            found: dict[str, Any] = row
            return found
    return None


class V4Extras:
    def __init__(self, commands: V4Commands, state: Callable[[], Any], session_id: Callable[[], str],
                 lang: str = "en") -> None:
        self.commands = commands
        self.state = state  # the feed's ConversationState (None before the first subscription)
        self.session_id = session_id
        self.lang = lang

    def _conversation(self, on_error: OnError) -> Any:
        conversation = self.state()
        if conversation is None:
            on_error(RpcError(-32603, "the session's conversation is not subscribed yet"))
        return conversation

    def read_queue(self, on_result: OnResult, on_error: OnError) -> None:
        conversation = self._conversation(on_error)
        if conversation is not None:
            on_result(queue_view(conversation.state))

    def read_file_changes(self, row_id: int | None, on_result: OnResult, on_error: OnError) -> None:
        conversation = self._conversation(on_error)
        if conversation is not None:
            self._file_changes(row_id, conversation.rows, on_result, on_error)

    def send(self, build: Callable[[str], v4.Command], on_result: OnResult, on_error: OnError,
             on_ack: Callable[[v4.CommandAck], None] | None = None) -> None:
        """``build(engine session id)``'s command, answered ``{status, …ack result}`` once acked."""
        if self._conversation(on_error) is not None:
            self._send(build(self.session_id()), on_result, on_error, on_ack)

    def send_row(self, action: Action, row_id: int | None, build: Callable[[str, v4.RowTarget], v4.Command],
                 on_result: OnResult, on_error: OnError) -> None:
        """A command on a row (``row_id``'s, else the latest) only if the engine grants it ``action``
        (it refuses any other: row_actions.py); a retry names the turn's reply, an edit the prompt's own row."""
        conversation = self._conversation(on_error)
        if conversation is None:
            return
        rows = conversation.rows
        if row_id is not None and not any(row.get("rowId") == row_id for row in rows):
            on_error(invalid_params("rowId", "invalid.no_such_row"))
            return
        target = granted_target(rows, action, row_id)
        if isinstance(target, Refusal):
            on_error(RpcError(INVALID_PARAMS, t(self.lang, target.message_key), {"reasonCode": target.reason_code}))
            return
        self._send(build(self.session_id(), target), on_result, on_error, None)

    def _send(self, command: v4.Command, on_result: OnResult, on_error: OnError,
              on_ack: Callable[[v4.CommandAck], None] | None) -> None:
        def acked(ack: v4.CommandAck | None, error: RpcError | None) -> None:
            if error is not None:
                on_error(error)
                return
            if ack is not None and on_ack is not None:
                on_ack(ack)
            on_result({"status": ack.status if ack else "accepted", **((ack.result or {}) if ack else {})})

        self.commands.send(command, acked)

    def _file_changes(self, row_id: int | None, rows: list[dict[str, Any]], on_result: OnResult,
                      on_error: OnError) -> None:
        """The turn's ``turnHeader`` row (the latest, or ``rowId``'s) names the turn the engine reports on."""
        row = target_row(rows, row_id, "turnHeader")
        if row is None or not isinstance(row.get("rowId"), int) or not isinstance(row.get("entityId"), str):
            on_error(invalid_params("rowId", "invalid.no_such_turn"))
            return
        port = self.commands.port
        try:
            request = file_changes.request_params(self.session_id(), v4.RowTarget(row["rowId"], row["entityId"]),
                                                  port.v4_base())
        except ValueError as error:
            on_error(RpcError(-32603, str(error)))
            return

        def answered(result: Any, error: Any) -> None:
            if error is not None:
                on_error(from_backend_error(error, file_changes.METHOD))
                return
            on_result(file_changes.for_client(result, row["rowId"]))

        port.engine_call(file_changes.METHOD, request, answered)

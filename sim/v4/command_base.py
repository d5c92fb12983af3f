"""What every v4 command handler stands on: the decision it raises, payload checks, row targets, starting a turn.

``Decision`` is how a handler says "decided before doing anything": it becomes the ack's
status and reason code (commands.py). Payload problems are reported the way the
engine's zod does, so ``proto.invalidPayload`` messages read as the captured ones.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

from .attachments import AttachmentStore
from .port import Port
from .projection import ConversationProjection, ExpectedInput
from .registry import Sessions

Ack = dict[str, Any]


class Decision(Exception):
    """A command decided before it did anything (raised inside a handler, turned into its ack)."""

    def __init__(self, status: str, reason_code: str, message: str | None = None) -> None:
        super().__init__(reason_code)
        self.status, self.reason_code, self.message = status, reason_code, message


def zod_issue(path: str, expected: str, value: Any) -> str:
    received = "undefined" if value is None else type(value).__name__
    return json.dumps([{"expected": expected, "code": "invalid_type", "path": [path],
                        "message": f"Invalid input: expected {expected}, received {received}"}], indent=2)


def need(payload: dict[str, Any], key: str, kind: type | tuple[type, ...], expected: str) -> Any:
    value = payload.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise Decision("rejected", "proto.invalidPayload", zod_issue(key, expected, value))
    return value


class CommandBase:
    def __init__(self, port: Port, sessions: Sessions, attachments: AttachmentStore, *,
                 clock: Callable[[], float], newer_source: bool = False) -> None:
        self.newer_source = newer_source
        """Play the v4 source newer than installed 3.14.4 (``guarded``, ``setHighspeedMetrics``)."""
        self.port = port
        self.sessions = sessions
        self.attachments = attachments
        self.clock = clock
        self.decided: dict[tuple[str | None, str], Ack] = {}
        self._ids = itertools.count(1)

    @staticmethod
    def _target(payload: dict[str, Any], projection: ConversationProjection) -> dict[str, Any]:
        target = need(payload, "target", dict, "object")
        row = projection.rows.get(target.get("rowId") if isinstance(target.get("rowId"), int) else None)
        if row is None or row.get("entityId") != target.get("entityId"):
            raise Decision("stale", "proto.staleTarget")
        return row

    @staticmethod
    def _allowed(projection: ConversationProjection, action: str) -> None:
        verdict = projection.state["availability"].get(action) or {"allowed": True}
        if not verdict["allowed"]:
            raise Decision("rejected", verdict.get("reasonCode", f"{action}.notAllowed"))

    def _input_id(self) -> str:
        return f"input_{next(self._ids)}"

    def _start(self, projection: ConversationProjection, text: str, command_id: str | None, client_id: str | None,
               attachments: list[dict[str, Any]], origin: str = "userInput") -> None:
        projection.expected.append(ExpectedInput(text, command_id, client_id, attachments, origin))
        self.port.start_turn(projection.session_id, text, attachments)

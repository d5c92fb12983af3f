"""Sending ``session/update``s to every attached client, encoded once for all."""

from __future__ import annotations

from typing import Any
from collections.abc import Iterable

from zcode_acp.protocol import updates

from zcode_acp.actors.messages import Deliver


def deliver(clients: Iterable[Any], session_id: str, session_updates: list[dict[str, Any]]) -> None:
    if session_updates:
        message = Deliver(session_id, updates.encode(session_id, session_updates))
        for client in clients:
            client.tell(message)

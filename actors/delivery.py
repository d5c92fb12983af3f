"""Sending ``session/update``s to every attached client, encoded once for all."""

from __future__ import annotations

from typing import Any
from collections.abc import Iterable

import gevent

from zcode_acp.protocol import updates

from zcode_acp.actors.messages import Deliver


def deliver(clients: Iterable[Any], session_id: str, session_updates: list[dict[str, Any]],
            turn: int | None = None) -> None:
    """``turn``: who sent them, when a replay may cover them (``Deliver.turn``)."""
    if session_updates:
        message = Deliver(session_id, updates.encode(session_id, session_updates), turn)
        for client in clients:
            client.tell(message)


def deliver_encoded(clients: Iterable[Any], session_id: str, lines: bytes, turn: int | None = None) -> None:
    """Notifications already encoded (a Turn's batch, text deltas from their template)."""
    if lines:
        message = Deliver(session_id, lines, turn)
        for client in clients:
            client.tell(message)


ENCODE_SLICE = 500  # updates encoded between two yields to the other greenlets


def encode_cooperatively(session_id: str, session_updates: list[dict[str, Any]]) -> bytes:
    """Encode a large batch (a history replay) without holding the one OS thread for all of it."""
    parts = []
    for start in range(0, len(session_updates), ENCODE_SLICE):
        parts.append(updates.encode(session_id, session_updates[start:start + ENCODE_SLICE]))
        if start + ENCODE_SLICE < len(session_updates):
            gevent.sleep(0)  # other sessions keep streaming meanwhile
    return b"".join(parts)

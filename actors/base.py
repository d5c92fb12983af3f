"""The base class of every bridge actor: typed messages, dispatched by class.

Messages are small slotted classes (``actors/messages.py``). An actor declares
``handle_<MessageClassName>`` methods; ``on_receive`` finds the handler once
per message class and caches it. A ``Batch`` delivers several messages in one
mailbox hop, in order — the hot path uses it to amortise actor overhead over
everything one read of a pipe produced.

Why exceptions are caught here: in pykka an exception inside a ``tell``
handler stops the actor. One malformed event must not take a whole session (or
the client connection) down with it, so a handler's failure is logged with its
traceback and the actor carries on with the next message.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

import pykka

from zcode_acp.protocol import framing, jsonrpc

from zcode_acp.actors.messages import Batch, Deliver

log = logging.getLogger(__name__)


class BridgeActor(pykka.ThreadingActor):
    _handlers: dict[type, Callable[[Any, Any], Any]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._handlers = {}

    def on_receive(self, message: Any) -> Any:
        if type(message) is Batch:
            for item in message.items:
                self._dispatch(item)
            return None
        return self._dispatch(message)

    def _dispatch(self, message: Any) -> Any:
        cls = type(message)
        handler = self._handlers.get(cls)
        if handler is None:
            handler = getattr(type(self), f"handle_{cls.__name__}", None)
            if handler is None:
                log.warning("%s: no handler for %s", type(self).__name__, cls.__name__)
                return None
            self._handlers[cls] = handler
        try:
            return handler(self, message)
        except Exception:
            log.exception("%s failed handling %s", type(self).__name__, cls.__name__)
            try:
                self.on_handler_error()
            except Exception:
                log.exception("%s failed recovering", type(self).__name__)
            return None

    def on_handler_error(self) -> None:
        """Hook: restore a safe state after a handler raised (e.g. settle a turn)."""


def encode_updates(session_id: str, updates: list[dict[str, Any]]) -> bytes:
    return b"".join(framing.encode(jsonrpc.session_update(session_id, update)) for update in updates)


def deliver(clients: Any, session_id: str, updates: list[dict[str, Any]]) -> None:
    """Send ``session/update``s to every client, encoded once for all of them."""
    if updates:
        message = Deliver(session_id, encode_updates(session_id, updates))
        for client in clients:
            client.tell(message)


def safe_tell(ref: Any, message: Any) -> bool:
    """Tell an actor that may already have stopped; False if it had."""
    if ref is None:
        return False
    try:
        ref.tell(message)
        return True
    except pykka.ActorDeadError:
        return False

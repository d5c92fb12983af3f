"""The base class of every bridge actor: typed messages, dispatched through a table.

An actor marks its handlers with ``@handles(MessageClass, ...)``; the class
builds its dispatch table once, at definition time, from those marks (its
bases' included). Because the table is known before anything runs:

* telling an actor a message it has no handler for raises ``UnhandledMessage``
  *at the sender*, in the sender's test, instead of a log line in the
  receiver (``CheckedRef`` checks every ``tell``/``ask``);
* a ``Batch`` delivers several messages in one mailbox hop, in order — the
  hot path uses it to amortise actor overhead over everything one read of a
  pipe produced.

Failures: in pykka an exception inside a ``tell`` handler would stop the
actor. One malformed event must not take a whole session down, so a handler's
failure is logged with its traceback, a message that owes a client an answer
(``messages.Owed``) gets ``-32603`` naming the cause, the actor's
``on_handler_error`` restores a safe state, and the actor carries on.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar, TypeVar
from collections.abc import Callable

import pykka

from zcode_acp.protocol.errors import internal

from zcode_acp.actors.messages import Batch, Consumed, Owed
from zcode_acp.actors.on_demand import OnDemandActor

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])
Handler = Callable[[Any, Any], Any]


class UnhandledMessage(TypeError):
    """An actor was told a message it has no handler for."""


def handles(*message_types: type) -> Callable[[F], F]:
    """Mark a method as the handler of these message classes."""

    def mark(method: F) -> F:
        method.__handles__ = message_types  # type: ignore[attr-defined]
        return method

    return mark


class CheckedRef(pykka.ActorRef[Any]):
    """An actor reference that refuses, at the sender, what its actor cannot handle."""

    def tell(self, message: Any) -> None:
        self._check(message)
        try:
            super().tell(message)
        except pykka.ActorDeadError:
            if not self.actor_class.gone_is_normal:
                raise
            # A client may leave at any moment; whatever was on its way to it has nobody to
            # reach, and the actors that still list it learn of its departure shortly.
            log.debug("%s has stopped; dropped %s", self.actor_class.__name__, type(message).__name__)

    def ask(self, message: Any, *, block: bool = True, timeout: float | None = None) -> Any:
        self._check(message)
        return super().ask(message, block=block, timeout=timeout)

    def _check(self, message: Any) -> None:
        actor_class = self.actor_class
        cls = type(message)
        if cls is Batch:
            for item in message.items:
                self._check(item)
        elif cls not in actor_class._handlers and not cls.__module__.startswith("pykka"):
            raise UnhandledMessage(f"{actor_class.__name__} has no handler for {cls.__name__}")


class BridgeActor(OnDemandActor):
    # No thread per actor: a greenlet runs only while the actor has mail (actors/on_demand.py).
    # (pykka's threads were daemon threads for "Actor start" in docs/performance.md; there are
    # none now, so nothing joins or scans them.)
    _handlers: ClassVar[dict[type, Handler]] = {}
    # True for an actor whose stopping is an ordinary event others learn of later (a client
    # connection): a tell that finds it stopped is dropped instead of raising ActorDeadError.
    gone_is_normal: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        table: dict[type, Handler] = {}
        for klass in reversed(cls.__mro__):
            for attribute in vars(klass).values():
                for message_type in getattr(attribute, "__handles__", ()):
                    table[message_type] = attribute
        cls._handlers = table

    def __init__(self) -> None:
        super().__init__()
        self._actor_ref = CheckedRef(self)  # registered by pykka after __init__

    @classmethod
    def accepts(cls, message_type: type) -> bool:
        return message_type in cls._handlers

    def on_receive(self, message: Any) -> Any:
        if type(message) is Batch:
            for item in message.items:
                self._dispatch(item)
                if isinstance(item, Consumed):
                    item.release()
            message.release()
            return None
        try:
            return self._dispatch(message)
        finally:
            if isinstance(message, Consumed):
                message.release()  # not kept alive by pykka's loop while this actor waits

    def _dispatch(self, message: Any) -> Any:
        handler = self._handlers.get(type(message))
        if handler is None:  # only reachable by bypassing CheckedRef
            log.error("%s has no handler for %s", type(self).__name__, type(message).__name__)
            return None
        try:
            return handler(self, message)
        except Exception as exc:
            log.exception("%s failed handling %s", type(self).__name__, type(message).__name__)
            if isinstance(message, Owed):
                try:
                    message.fail(internal(f"internal error in {type(self).__name__}: {exc}"))
                except Exception:
                    log.exception("%s could not answer a failed %s", type(self).__name__, type(message).__name__)
            try:
                self.on_handler_error(message)
            except Exception:
                log.exception("%s failed recovering", type(self).__name__)
            return None

    def on_handler_error(self, message: Any) -> None:
        """Hook: restore a safe state after a handler raised (e.g. settle a turn)."""


def safe_tell(ref: Any, message: Any) -> bool:
    """Tell an actor that may already have stopped; False if it had."""
    if ref is None:
        return False
    try:
        ref.tell(message)
        return True
    except pykka.ActorDeadError:
        return False

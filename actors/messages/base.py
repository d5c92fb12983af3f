"""What every message builds on: ``Owed`` (a handler that raises still answers it), ``Consumed`` (a batch
the receiver may take apart), ``ClientRequest`` and ``Batch``; the loose ``Ref``/``Json`` aliases."""

from __future__ import annotations

from typing import Any

from zcode_acp.actors.message_class import message
from zcode_acp.protocol.errors import RpcError


Ref = Any  # a pykka ActorRef; kept loose so fakes can stand in for actors in tests
ErrorDict = dict[str, Any]
Json = Any


class Owed:
    """A message whose handler owes someone an answer (see ``fail``)."""

    __slots__ = ()

    def fail(self, error: RpcError) -> None:  # pragma: no cover - every subclass overrides
        raise NotImplementedError


class Consumed:
    """A batch its receiver uses up: once handled, the dispatcher empties it (``release``).

    pykka's mailbox loop keeps an actor's last message alive until the next one
    arrives. Among hundreds of streaming sessions, each Session and Turn would
    hold its last batch of parsed events for as long as it waits, and the hot
    path's memory would stop fitting the CPU's cache (docs/performance.md,
    "Released batches"). A receiver that keeps anything keeps the items, never
    the list; a sender that tells one list to two actors copies it.
    """

    __slots__ = ()

    def release(self) -> None:  # pragma: no cover - every subclass overrides
        raise NotImplementedError


# -- any actor ----------------------------------------------------------------------------


@message
class Batch(Consumed):
    """Several messages, handled in order in one mailbox hop."""

    items: list[Any]

    def release(self) -> None:
        self.items.clear()

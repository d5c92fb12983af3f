"""What an extension method's handler is, and what it is given (the package: ``table.py``).

A handler is a small object: its ``name``, ``validate`` (the method's params read once, into
the typed call of ``protocol/extension_calls.py``), and one method per engine path. The Session
never asks which path it holds: it hands the handler to its ``EnginePath``
(``run_extension``), and the legacy path calls ``on_legacy``, the v4 path ``on_v4`` with itself as the
``V4Surface``. What is the same on both paths is ``SamePath.both``; what only the v4 data plane
offers is a ``V4Only``, which the legacy path refuses ``-32601``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from zcode_acp.protocol.errors import METHOD_NOT_FOUND, RpcError
from zcode_acp.protocol.i18n import t

from zcode_acp.actors.session.controls import Controls, as_rpc_error

if TYPE_CHECKING:  # a legacy bridge never imports protocol/v4
    from zcode_acp.protocol.v4.commands import Command, CommandAck, RowTarget
    from zcode_acp.protocol.v4.row_actions import Action

OnResult = Callable[[Any], None]
OnError = Callable[[Any], None]
Call = TypeVar("Call")


@dataclass(frozen=True, slots=True)
class ExtensionRequest:
    """One extension request: who is owed the answer, and the Session's ``Controls`` to do the work."""

    name: str  # the method, without its leading "_"
    controls: Controls
    conn: Any  # the client owed the answer (a fork is answered by the Supervisor, once it has the new id)
    request_id: Any
    on_result: OnResult
    on_error: OnError
    lang: str

    def failed(self, error: Any) -> None:
        """An error of the bridge's own work, as the client reads it (the engine's wrapped, naming the method)."""
        self.on_error(as_rpc_error(error, self.name))

    def answered(self, on_result: OnResult, on_error: OnError) -> ExtensionRequest:
        """The same request, answered through other callbacks (an AIR method's own shapes)."""
        return ExtensionRequest(self.name, self.controls, self.conn, self.request_id, on_result, on_error, self.lang)


class V4Surface(Protocol):
    """What a handler's ``on_v4`` method may use of the v4 path (``V4Engine`` implements it)."""

    def when_live(self, action: Callable[[], None], on_error: OnError) -> None: ...

    def read_queue(self, on_result: OnResult, on_error: OnError) -> None:
        """The engine's queue as the conversation holds it: ``{items: [{queueItemId, text, state}]}``."""
        ...

    def read_file_changes(self, row_id: int | None, on_result: OnResult, on_error: OnError) -> None: ...

    def send_command(self, build: Callable[[str], Command], on_result: OnResult, on_error: OnError,
                     on_ack: Callable[[CommandAck], None] | None = None) -> None:
        """``build(engine session id)``'s command, answered ``{status, …ack result}`` once acked."""
        ...

    def send_row_command(self, action: Action, row_id: int | None, build: Callable[[str, RowTarget], Command],
                         on_result: OnResult, on_error: OnError) -> None:
        """A command on the row the engine grants ``action`` (the latest, or ``row_id``'s turn)."""
        ...

    def unqueue_on_ack(self, queue_item_id: str) -> Callable[[CommandAck], None] | None:
        """What answers the prompt a queue item came from, once its delete is acked."""
        ...


class Handler(Generic[Call]):
    """One extension method: read its params once, then run on the session's engine path."""

    name: str

    def validate(self, params: dict[str, Any]) -> Call:
        raise NotImplementedError

    def on_legacy(self, call: Call, request: ExtensionRequest) -> None:
        raise NotImplementedError

    def on_v4(self, call: Call, request: ExtensionRequest, engine: V4Surface) -> None:
        raise NotImplementedError


class SamePath(Handler[Call]):
    """A method both paths run alike: what differs is the ``EnginePath`` method ``Controls`` call."""

    def both(self, call: Call, request: ExtensionRequest) -> None:
        raise NotImplementedError

    def on_legacy(self, call: Call, request: ExtensionRequest) -> None:
        self.both(call, request)

    def on_v4(self, call: Call, request: ExtensionRequest, engine: V4Surface) -> None:
        self.both(call, request)


class V4Only(Handler[Call]):
    """What only the v4 data plane offers: the legacy path answers ``-32601`` saying so."""

    def on_legacy(self, call: Call, request: ExtensionRequest) -> None:
        request.on_error(RpcError(METHOD_NOT_FOUND, t(request.lang, "error.needs_v4", method=self.name)))

"""Messages the Backend receives (actors/backend.py), and what it sends back: calls with their reply,
frames read from the child, its death, routes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from collections.abc import Callable

from zcode_acp.actors.message_class import message
from zcode_acp.protocol.errors import RpcError

if TYPE_CHECKING:
    from zcode_acp.actors.transport.flow import Token

from zcode_acp.actors.messages.base import Consumed, ErrorDict, Json, Owed, Ref


# -- Backend -----------------------------------------------------------------------------------


@message
class BackendCall(Owed):
    """A request to the backend. With ``reply_to``, its answer (or failure) comes back
    as ``reply(result, error)``; without, it is fire-and-forget."""

    method: str
    params: dict[str, Any]
    reply_to: Ref = None
    reply: Callable[[Json, ErrorDict | None], Any] | None = None
    timeout: float | None = None

    def fail(self, error: RpcError) -> None:
        if self.reply_to is not None and self.reply is not None:
            self.reply_to.tell(self.reply(None, error.to_dict()))


@message
class BackendFrames(Consumed):
    """Reader greenlet → Backend: one read's frames, with the batch's flow token."""

    generation: int
    frames: list[dict[str, Any]]
    token: Token | None = None

    def release(self) -> None:
        self.frames.clear()


@message
class BackendGone:
    """The backend process of this generation exited, closed its output, or stopped answering."""

    generation: int
    reason: str  # a ``backend.gone.*`` catalog key (protocol/i18n): the Backend words it
    code: int | None = None  # its exit code, when it exited


@message
class NonProtocolOutput:
    """The backend wrote a line that is not a frame (a CLI printing a login prompt, say)."""

    generation: int
    line: str


@message
class RequestTimedOut:
    request_id: Json


@message
class RegisterRoute:
    backend_session_id: str
    session: Ref


@message
class UnregisterRoute:
    backend_session_id: str
    session: Ref


@message
class TerminateBackend:
    grace: float


@message
class Throttle:
    """Stop (or resume) reading the backend while a client cannot keep up."""

    source: str
    paused: bool


@message
class AnswerBackend:
    """Reply to backend requests (the same answer to each id) — only to the process that asked."""

    generation: int
    request_ids: list[Json]
    result: dict[str, Any]

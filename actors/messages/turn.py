"""Messages a Turn receives (actors/turn.py), all from its Session, in pipe order."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zcode_acp.actors.message_class import message
from zcode_acp.protocol.errors import RpcError

if TYPE_CHECKING:
    from zcode_acp.actors.session.attribution import Claim
    from zcode_acp.actors.transport.flow import Token

from zcode_acp.actors.messages.base import Consumed


# -- Turn ---------------------------------------------------------------------------------------------


@message
class StartTurn:
    backend_session_id: str


@message
class TurnEvents(Consumed):
    events: list[dict[str, Any]]
    token: Token | None = None

    def release(self) -> None:
        self.events.clear()


@message
class Adopt:
    """The backend turn this Turn's send started (the Session's ``Attribution`` decided)."""

    claim: Claim


@message
class StopDeadline:
    """The grace a stopped backend turn had to end is over."""


@message
class ShowInteraction:
    """Show the card a backend question is about, then hand it to the router."""

    frame: dict[str, Any]
    generation: int


@message
class RetrySend:
    pass


@message
class FailTurn:
    """The session could not be made live."""

    error: RpcError


@message
class SilenceCheck:
    pass


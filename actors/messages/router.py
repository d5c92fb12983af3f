"""Messages the InteractionRouter receives (actors/interaction_router.py): questions asked, dialogs
answered, the clients that can answer."""

from __future__ import annotations

from typing import Any

from zcode_acp.actors.message_class import message
from zcode_acp.protocol.errors import RpcError


from zcode_acp.actors.messages.backend import AnswerBackend
from zcode_acp.actors.messages.base import ErrorDict, Json, Owed, Ref


# -- InteractionRouter -----------------------------------------------------------------------------


@message
class InteractionAsked(Owed):
    """A backend question whose card is shown: ask the clients."""

    frame: dict[str, Any]
    generation: int  # the backend process that asked
    session_id: str
    backend_session_id: str | None
    tool_call: dict[str, Any]
    session: Ref = None  # owner of the card, told if the dialog is abandoned
    backend: Ref = None
    answer_via: Ref = None
    """A v4 Session: the answer goes to it as a ``V4Resolve`` (``resolveInteraction``), not to the backend."""
    declined: str | None = None
    """Why it is declined at once, shown to nobody: asked by a turn already answered (a cancel's late dialog)."""

    def fail(self, error: RpcError) -> None:
        if self.backend is not None:
            self.backend.tell(AnswerBackend(self.generation, [self.frame.get("id")], {
                "decision": "deny", "action": "decline", "reason": error.message}))


@message
class V4Resolve:
    """The first answer to a dialog of a v4 session: the Session sends ``resolveInteraction``,
    then answers the engine's legacy request with the same answer (docs/decisions.md)."""

    frame: dict[str, Any]  # the legacy request that opened the dialog
    generation: int
    request_ids: list[Json]
    result: dict[str, Any]  # the answer in the legacy request's shape


@message
class CancelInteractions:
    session_id: str
    reason: str


@message
class ClientAttached:
    session_id: str
    conn: Ref


@message
class DeclineAll:
    reason: str


@message
class InteractionTimeout:
    key: str


@message
class DialogGraceEnded:
    """A dialog no client could see waited its grace (docs/interactions.md)."""

    key: str
    wait: int


@message
class DialogAnswered:
    """A client's answer to a dialog (or its failure)."""

    key: str
    serial: int
    conn_urn: str
    result: Json
    error: ErrorDict | None

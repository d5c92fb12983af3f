"""Messages a Session receives (actors/session/): prompts, settings, extensions, attach, the backend's
events and v4 frames, and the replies to its own and its Turn's backend calls."""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any
from collections.abc import Callable

from zcode_acp.actors.message_class import message
from zcode_acp.protocol.content import BackendPrompt
from zcode_acp.protocol.errors import RpcError

if TYPE_CHECKING:
    from zcode_acp.actors.transport.flow import Token

from zcode_acp.actors.messages.base import Consumed, ErrorDict, Json, Ref
from zcode_acp.actors.messages.client import ClientRequest


# -- Session -----------------------------------------------------------------------------------


@message
class SessionEvents(Consumed):
    """``session/event`` params for one session, in pipe order."""

    events: list[dict[str, Any]]
    token: Token | None = None

    def release(self) -> None:
        self.events.clear()


@message
class V4Frames(Consumed):
    """``v4/conversation/frame`` params for one session's topics, in pipe order (docs/v4.md)."""

    frames: list[dict[str, Any]]
    token: Token | None = None

    def release(self) -> None:
        self.frames.clear()


@message
class V4Expire:
    """A v4 session's timer: a fragmented frame may have outlived the engine's assembly time."""


@message
class SessionNotice:
    """Another backend notification about this session."""

    method: str
    params: dict[str, Any]


@message
class BackendRequest:
    """A backend interaction request (permission, question) about this session."""

    frame: dict[str, Any]
    generation: int


@message
class BackendLost:
    reason: str


@message
class Prompt(ClientRequest):
    prompt: BackendPrompt
    echo: str = ""  # its text blocks, shown to the other clients


@message
class CancelTurn:
    """Stop the running turn (a ``session/cancel``, a newer prompt, a teardown): it answers "cancelled"."""

    error: RpcError | None = None  # answer with this (``$/cancel_request``: -32800) instead of "cancelled"


@message
class CancelPromptRequest:
    conn: Ref
    request_id: Json


@message
class Announce:
    """After a new/load/resume answer (never before it): the session's commands."""

    conn: Ref


@message
class LearnCatalog:
    """No model catalog is known yet: make the session in the engine now, in the background, so
    that its create lists the models (docs/sessions.md, "The model list from the start")."""


@message
class TurnSettled:
    key: int
    plan: list[dict[str, str]] | None  # the plan as the turn left it
    outcome: str = ""  # its stop reason, or its error's words (notifications)
    answer: str = ""  # the engine's final answer, when it gave one (notifications, opted in)


@message
class TurnDone:
    key: int


@message
class Teardown:
    reason: str = "the session was closed"
    close_backend: bool = False  # ACP session/close: the engine's session is closed too


@message
class StopFailed:
    """A stopped turn was still running after the grace: close and resume the backend session."""

    key: int
    turn_id: str | None = None  # the backend turn that ignored the stop


@message
class PreviousTurnRunning:
    """The Session, to a Turn whose send was refused busy: an older turn of this session still holds it.

    ``notice`` is what the user reads (once); ``unbounded``: wait without the busy limit, because the
    holder is a turn that ignored its stop and the engine could not close (issue 21).
    """

    notice: str
    unbounded: bool = False


@message
class Attach(ClientRequest):
    """``session/load`` (replay) or ``session/resume``."""

    cwd: str
    replay: bool


@message
class SetSetting(ClientRequest):
    config_id: str
    value: Json
    answer: str  # "config": answer with configOptions; "mode": an empty answer


@message
class Extension(ClientRequest):
    """An extension method (``_session/fork``, goal, compact, …) for this session."""

    name: str
    params: dict[str, Any]


@message
class Evicted:
    """The backend said -32004 to a turn's send: resume, then start it again."""

    key: int


@message
class HistoryPoll:
    pass


@message
class ClientsChanged:
    clients: list[Ref]
    capabilities: dict[str, Any]  # merged over the clients attached now
    per_client: dict[str, dict[str, Any]] = field(default_factory=dict)  # conn urn → what it declared


@message
class GapTimeout:
    after_seq: int


@message
class InteractionAborted:
    """The router gave up on a dialog (timeout): its card's owner closes the card."""

    tool_call_id: str


@message
class DialogWaits:
    """The router opened a dialog about a card (``waiting``), or the dialog is settled (answered,
    declined, withdrawn): a sub-agent's child ``requires_action`` while one waits (protocol/subagents.py)."""

    tool_call_id: str
    waiting: bool


# replies to the Session's own backend calls
@message
class Resumed:
    result: Json
    error: ErrorDict | None


@message
class GapFilled:
    result: Json
    error: ErrorDict | None


@message
class Answered:
    """The answer to one of the Session's other calls, with what to do with it."""

    then: Callable[[Json, ErrorDict | None], None]
    result: Json
    error: ErrorDict | None


# replies to a Turn's calls: they travel through the Session, in pipe order with its events
@message
class SendAnswered:
    key: int
    result: Json
    error: ErrorDict | None


@message
class ProbeAnswered:
    key: int
    result: Json
    error: ErrorDict | None


@message
class PlanRead:
    """The ``session/read`` a turn that used tools makes before answering: its final plan."""

    key: int
    result: Json
    error: ErrorDict | None


@message
class RelayUpdates:
    """Session-level updates (mode, title, usage) told through the running Turn, so they
    reach the client in pipe order with the turn's own."""

    updates: list[dict[str, Any]]


@message
class BackendStalled:
    """A probe of a running turn got no answer: the backend process is wedged."""

    generation: int | None
    reason: str

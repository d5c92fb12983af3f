"""Every message the actors exchange: small frozen value classes with typed fields.

A ``tell`` of one of these is the cheapest thing pykka does, and the hot path
(a streamed token) is nothing but tells. Each actor declares which classes it
handles with ``@handles(...)`` (``actors/base.py``), so an IDE goes from a
``tell`` to its handler, renaming a class is a type error, and telling an
actor something it does not handle raises at the sender.

Grouped by the actor that receives them. Replies are messages too: whoever
asks the Backend (or a client) something names the reply class it wants back
(``reply=...``), so answers arrive typed, never as tags compared as strings.

Messages that owe a client an answer derive from ``Owed``: when the handler
of one raises, the dispatcher answers it ``-32603`` (docs/architecture.md,
"Failures inside an actor").

``@message`` (``message_class.py``) makes each class what
``@dataclass(frozen=True, slots=True)`` would, at a tenth of the import cost;
they are not dataclasses, so ``dataclasses.replace``/``fields`` do not apply.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any, Protocol
from collections.abc import Callable

from zcode_acp.actors.message_class import message
from zcode_acp.protocol.content import BackendPrompt
from zcode_acp.protocol.errors import RpcError
from zcode_acp.protocol.session_config import SessionSettings

if TYPE_CHECKING:
    from zcode_acp.actors.session.attribution import Claim
    from zcode_acp.actors.transport.flow import Token
    from zcode_acp.actors.transport.base import Transport

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


@message
class ClientRequest(Owed):
    """A client's request, passed on to the actor that will answer it."""

    conn: Ref
    request_id: Json

    def fail(self, error: RpcError) -> None:
        self.conn.tell(Reply(self.request_id, None, error.to_dict()))


# -- any actor ----------------------------------------------------------------------------


@message
class Batch(Consumed):
    """Several messages, handled in order in one mailbox hop."""

    items: list[Any]

    def release(self) -> None:
        self.items.clear()


# -- ClientConnection ----------------------------------------------------------------------


@message
class InboundFrames(Consumed):
    """Raw frames (one JSON text each) its transport read, in order.

    ``token`` (``actors/transport/flow.py``), when the transport sends one, is
    marked done once the frames are handled: the transport reads no further
    than a few batches ahead of the tree.
    """

    frames: list[bytes]
    token: Any = None

    def release(self) -> None:
        self.frames.clear()


@message
class InboundError:
    """Something arrived that is not a frame (e.g. a line over the size limit)."""

    error: RpcError


@message
class InboundClosed:
    reason: str = "end of input"


@message
class Reply:
    """The answer to a client's request; written at most once per request."""

    request_id: Json
    result: Json = None
    error: ErrorDict | None = None


@message
class Deliver:
    """Encoded ``session/update`` lines for one session."""

    session_id: str
    payload: bytes
    # The Turn (its key in the Session) that sent them, if a Turn did: a replay built from
    # that Turn's record supersedes them (ReleaseSession.covers_turn).
    turn: int | None = None


@message
class HoldSession:
    """A replay for this session is coming: hold its live updates until it is written."""

    session_id: str


@message
class ReleaseSession:
    """Write the replay, then what was held meanwhile."""

    session_id: str
    replay: bytes
    # The replay holds everything this Turn has sent: its held lines are dropped (once each).
    covers_turn: int | None = None


@message
class ReplayTurn:
    """To the running (or last) Turn: send ``conn`` the history before it plus its record, then the answer.

    ``before`` is the history cut before this turn's prompt; ``whole`` is the uncut
    history, used when the record overflowed."""

    conn: Any
    before: bytes
    whole: bytes
    reply: Any
    attach: Any


@message
class TurnReplayed:
    """From the Turn: the load is answered; the Session announces and joins dialogs."""

    attach: Any


@message
class SendRequest:
    """Ask the client something (a dialog); its answer comes back as ``reply(result, error)``."""

    method: str
    params: dict[str, Any]
    reply_to: Ref
    reply: Callable[[Json, ErrorDict | None], Any]
    key: Any  # names the request for a later WithdrawRequest


@message
class WithdrawRequest:
    """Close a dialog we opened (``$/cancel_request``); its late answer is ignored."""

    key: Any


@message
class CloseConnection:
    reason: str = "the bridge is closing"


@message
class Backlog:
    """From a writer: its reader reads slower than we write (or caught up)."""

    backlogged: bool
    source: Any = None  # which writer (the Backend has one per process)


@message
class WriteFailed:
    """From a writer: its reader is gone."""

    reason: str = "the reader is gone"
    source: Any = None


# -- Supervisor ------------------------------------------------------------------------------


@message(eq=False)
class RequestHandle:
    """One inbound request instance: equal only to itself, so a reused id is a new request."""

    id: Json
    serial: int


@message
class ClientFrame:
    """An ACP request (with its handle) or notification (handle None) from a client."""

    conn: Ref
    frame: dict[str, Any]
    handle: RequestHandle | None = None
    token: Any = None  # the inbound flow token of its read (see InboundFrames)


@message
class ClientRequestCancelled:
    conn: Ref
    request_id: Json
    session_id: str | None


@message
class ClientClosed:
    conn: Ref


@message
class ClientBacklog:
    conn: Ref
    backlogged: bool


@message
class CatalogSeen:
    """A create/resume listed the engine's model catalog (``{available, current?}``): remember it."""

    catalog: dict[str, Any]


@message
class CatalogLoaded:
    """The remembered model catalog, read at start off the loop (None: no usable file)."""

    catalog: dict[str, Any] | None


@message
class Materialized:
    """A Session's backend session exists now."""

    session_id: str
    backend_session_id: str


@message
class Forget:
    """A session that turned out not to exist."""

    session_id: str


@message
class Shutdown:
    reason: str


@message
class SessionActivity:
    """A Session's turn started or ended, or its title changed (for the hub's listing)."""

    session_id: str
    running: bool
    title: str | None = None
    outcome: str = ""  # a turn that ended: its stop reason, or its error's words
    answer: str = ""  # a turn that ended: the engine's final answer (notifications, when opted in)


# -- notifications (actors/notifier.py): tells only, nothing waits for them -----------------------


@message
class TurnFinished:
    """A turn ended (the Supervisor tells the Notifier; it decides whether it ran long enough)."""

    session_id: str
    seconds: float
    outcome: str
    prompt: str = ""
    answer: str = ""


@message
class SessionTitled:
    session_id: str
    title: str


@message
class DialogWaiting:
    """A permission, question or plan dialog went to the clients and waits for an answer."""

    session_id: str
    kind: str
    what: str = ""  # the dialog's card title (sent only when prompt text is opted in)


@message
class BackendFailed:
    reason: str


@message
class HubPageKnown:
    """The bridge registered with the hub under this instance id: notifications can link to the page."""

    instance_id: str


@message
class WebhookDone:
    """The Notifier's sender finished one post: delivered, or failed after its retries."""

    ok: bool
    error: str = ""


@message
class ListSessions:
    """Asked (from outside the tree) for the sessions this bridge serves."""


@message
class Occupancy:
    """Asked (by ``zcode-acp serve``'s idle timer): ``(clients attached, turns running)``."""


@message
class AttachClient:
    transport: Transport
    primary: bool


@message
class Listed(ClientRequest):
    """The backend's answer to ``session/list``."""

    result: Json
    error: ErrorDict | None


@message
class Forked(ClientRequest):
    """A fork made a new backend session: the Supervisor gives it an ACP id."""

    source_session_id: str
    backend_session_id: str
    cwd: str
    mcp_servers: list[Any]
    settings: SessionSettings
    as_command: bool


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
    reason: str


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
    reason: str
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


# replies to the Session's own backend calls
@message
class Created:
    result: Json
    error: ErrorDict | None


@message
class Resumed:
    result: Json
    error: ErrorDict | None


@message
class Subscribed:
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
class DialogAnswered:
    """A client's answer to a dialog (or its failure)."""

    key: str
    serial: int
    conn_urn: str
    result: Json
    error: ErrorDict | None


# -- BackgroundTasks ---------------------------------------------------------------------------------


@message
class TaskEvents(Consumed):
    """``(event, launch_terminal | None)`` pairs, in pipe order."""

    events: list[tuple[dict[str, Any], bool | None]]
    token: Token | None = None

    def release(self) -> None:
        self.events.clear()


@message
class TaskCancelled:
    task_id: str


@message
class CloseTasks:
    pass


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


class Tellable(Protocol):
    def tell(self, message: Any) -> None: ...


# -- idle sessions (docs/performance.md, "Idle sessions") ----------------------------------------

@message
class IdleCheck:
    """A Session's own timer: has it been idle for ``config.idle_session_after``?"""


@message
class SessionIdle:
    """A Session → the Supervisor: idle long enough to leave memory."""

    session_id: str


@message
class GoDormant:
    """The Supervisor → an idle Session: answer a ``Dormant`` record and stop taking part, or None if busy."""


@message
class Dormant:
    """What the Supervisor keeps of a stopped idle Session to bring it back on its next use."""

    cwd: str
    mcp_servers: list[Any]
    backend_session_id: str | None
    settings: Any
    root_known: bool

"""Every message the actors exchange: small frozen dataclasses with typed fields.

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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol
from collections.abc import Callable

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


@dataclass(frozen=True, slots=True)
class ClientRequest(Owed):
    """A client's request, passed on to the actor that will answer it."""

    conn: Ref
    request_id: Json

    def fail(self, error: RpcError) -> None:
        self.conn.tell(Reply(self.request_id, None, error.to_dict()))


# -- any actor ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Batch(Consumed):
    """Several messages, handled in order in one mailbox hop."""

    items: list[Any]

    def release(self) -> None:
        self.items.clear()


# -- ClientConnection ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class InboundError:
    """Something arrived that is not a frame (e.g. a line over the size limit)."""

    error: RpcError


@dataclass(frozen=True, slots=True)
class InboundClosed:
    reason: str = "end of input"


@dataclass(frozen=True, slots=True)
class Reply:
    """The answer to a client's request; written at most once per request."""

    request_id: Json
    result: Json = None
    error: ErrorDict | None = None


@dataclass(frozen=True, slots=True)
class Deliver:
    """Encoded ``session/update`` lines for one session."""

    session_id: str
    payload: bytes


@dataclass(frozen=True, slots=True)
class HoldSession:
    """A replay for this session is coming: hold its live updates until it is written."""

    session_id: str


@dataclass(frozen=True, slots=True)
class ReleaseSession:
    """Write the replay, then what was held meanwhile."""

    session_id: str
    replay: bytes


@dataclass(frozen=True, slots=True)
class SendRequest:
    """Ask the client something (a dialog); its answer comes back as ``reply(result, error)``."""

    method: str
    params: dict[str, Any]
    reply_to: Ref
    reply: Callable[[Json, ErrorDict | None], Any]
    key: Any  # names the request for a later WithdrawRequest


@dataclass(frozen=True, slots=True)
class WithdrawRequest:
    """Close a dialog we opened (``$/cancel_request``); its late answer is ignored."""

    key: Any


@dataclass(frozen=True, slots=True)
class CloseConnection:
    reason: str = "the bridge is closing"


@dataclass(frozen=True, slots=True)
class Backlog:
    """From a writer: its reader reads slower than we write (or caught up)."""

    backlogged: bool
    source: Any = None  # which writer (the Backend has one per process)


@dataclass(frozen=True, slots=True)
class WriteFailed:
    """From a writer: its reader is gone."""

    reason: str = "the reader is gone"
    source: Any = None


# -- Supervisor ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class RequestHandle:
    """One inbound request instance: equal only to itself, so a reused id is a new request."""

    id: Json
    serial: int


@dataclass(frozen=True, slots=True)
class ClientFrame:
    """An ACP request (with its handle) or notification (handle None) from a client."""

    conn: Ref
    frame: dict[str, Any]
    handle: RequestHandle | None = None
    token: Any = None  # the inbound flow token of its read (see InboundFrames)


@dataclass(frozen=True, slots=True)
class ClientRequestCancelled:
    conn: Ref
    request_id: Json
    session_id: str | None


@dataclass(frozen=True, slots=True)
class ClientClosed:
    conn: Ref


@dataclass(frozen=True, slots=True)
class ClientBacklog:
    conn: Ref
    backlogged: bool


@dataclass(frozen=True, slots=True)
class Materialized:
    """A Session's backend session exists now."""

    session_id: str
    backend_session_id: str


@dataclass(frozen=True, slots=True)
class Forget:
    """A session that turned out not to exist."""

    session_id: str


@dataclass(frozen=True, slots=True)
class Shutdown:
    reason: str


@dataclass(frozen=True, slots=True)
class SessionActivity:
    """A Session's turn started or ended, or its title changed (for the hub's listing)."""

    session_id: str
    running: bool
    title: str | None = None


@dataclass(frozen=True, slots=True)
class ListSessions:
    """Asked (from outside the tree) for the sessions this bridge serves."""


@dataclass(frozen=True, slots=True)
class Occupancy:
    """Asked (by ``zcode-acp serve``'s idle timer): ``(clients attached, turns running)``."""


@dataclass(frozen=True, slots=True)
class AttachClient:
    transport: Transport
    primary: bool


@dataclass(frozen=True, slots=True)
class Listed(ClientRequest):
    """The backend's answer to ``session/list``."""

    result: Json
    error: ErrorDict | None


@dataclass(frozen=True, slots=True)
class Forked(ClientRequest):
    """A fork made a new backend session: the Supervisor gives it an ACP id."""

    source_session_id: str
    backend_session_id: str
    cwd: str
    mcp_servers: list[Any]
    settings: SessionSettings
    as_command: bool


# -- Backend -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class BackendFrames(Consumed):
    """Reader greenlet → Backend: one read's frames, with the batch's flow token."""

    generation: int
    frames: list[dict[str, Any]]
    token: Token | None = None

    def release(self) -> None:
        self.frames.clear()


@dataclass(frozen=True, slots=True)
class BackendGone:
    """The backend process of this generation exited, closed its output, or stopped answering."""

    generation: int
    reason: str


@dataclass(frozen=True, slots=True)
class NonProtocolOutput:
    """The backend wrote a line that is not a frame (a CLI printing a login prompt, say)."""

    generation: int
    line: str


@dataclass(frozen=True, slots=True)
class RequestTimedOut:
    request_id: Json


@dataclass(frozen=True, slots=True)
class RegisterRoute:
    backend_session_id: str
    session: Ref


@dataclass(frozen=True, slots=True)
class UnregisterRoute:
    backend_session_id: str
    session: Ref


@dataclass(frozen=True, slots=True)
class TerminateBackend:
    grace: float


@dataclass(frozen=True, slots=True)
class Throttle:
    """Stop (or resume) reading the backend while a client cannot keep up."""

    source: str
    paused: bool


@dataclass(frozen=True, slots=True)
class AnswerBackend:
    """Reply to backend requests (the same answer to each id) — only to the process that asked."""

    generation: int
    request_ids: list[Json]
    result: dict[str, Any]


# -- Session -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SessionEvents(Consumed):
    """``session/event`` params for one session, in pipe order."""

    events: list[dict[str, Any]]
    token: Token | None = None

    def release(self) -> None:
        self.events.clear()


@dataclass(frozen=True, slots=True)
class SessionNotice:
    """Another backend notification about this session."""

    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class BackendRequest:
    """A backend interaction request (permission, question) about this session."""

    frame: dict[str, Any]
    generation: int


@dataclass(frozen=True, slots=True)
class BackendLost:
    reason: str


@dataclass(frozen=True, slots=True)
class Prompt(ClientRequest):
    prompt: BackendPrompt
    echo: str = ""  # its text blocks, shown to the other clients


@dataclass(frozen=True, slots=True)
class CancelTurn:
    reason: str
    error: RpcError | None = None  # answer with this (``$/cancel_request``: -32800) instead of "cancelled"


@dataclass(frozen=True, slots=True)
class CancelPromptRequest:
    conn: Ref
    request_id: Json


@dataclass(frozen=True, slots=True)
class Announce:
    """After a new/load/resume answer (never before it): the session's commands."""

    conn: Ref


@dataclass(frozen=True, slots=True)
class TurnSettled:
    key: int
    plan: list[dict[str, str]] | None  # the plan as the turn left it


@dataclass(frozen=True, slots=True)
class TurnDone:
    key: int


@dataclass(frozen=True, slots=True)
class Teardown:
    reason: str = "the session was closed"
    close_backend: bool = False  # ACP session/close: the engine's session is closed too


@dataclass(frozen=True, slots=True)
class StopFailed:
    """A stopped turn was still running after the grace: close and resume the backend session."""

    key: int


@dataclass(frozen=True, slots=True)
class Attach(ClientRequest):
    """``session/load`` (replay) or ``session/resume``."""

    cwd: str
    replay: bool


@dataclass(frozen=True, slots=True)
class SetSetting(ClientRequest):
    config_id: str
    value: Json
    answer: str  # "config": answer with configOptions; "mode": an empty answer


@dataclass(frozen=True, slots=True)
class Extension(ClientRequest):
    """An extension method (``_session/fork``, goal, compact, …) for this session."""

    name: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Evicted:
    """The backend said -32004 to a turn's send: resume, then start it again."""

    key: int


@dataclass(frozen=True, slots=True)
class HistoryPoll:
    pass


@dataclass(frozen=True, slots=True)
class ClientsChanged:
    clients: list[Ref]
    capabilities: dict[str, Any]  # merged over the clients attached now
    per_client: dict[str, dict[str, Any]] = field(default_factory=dict)  # conn urn → what it declared


@dataclass(frozen=True, slots=True)
class GapTimeout:
    after_seq: int


@dataclass(frozen=True, slots=True)
class InteractionAborted:
    """The router gave up on a dialog (timeout): its card's owner closes the card."""

    tool_call_id: str


# replies to the Session's own backend calls
@dataclass(frozen=True, slots=True)
class Created:
    result: Json
    error: ErrorDict | None


@dataclass(frozen=True, slots=True)
class Resumed:
    result: Json
    error: ErrorDict | None


@dataclass(frozen=True, slots=True)
class Subscribed:
    result: Json
    error: ErrorDict | None


@dataclass(frozen=True, slots=True)
class GapFilled:
    result: Json
    error: ErrorDict | None


@dataclass(frozen=True, slots=True)
class Answered:
    """The answer to one of the Session's other calls, with what to do with it."""

    then: Callable[[Json, ErrorDict | None], None]
    result: Json
    error: ErrorDict | None


# replies to a Turn's calls: they travel through the Session, in pipe order with its events
@dataclass(frozen=True, slots=True)
class SendAnswered:
    key: int
    result: Json
    error: ErrorDict | None


@dataclass(frozen=True, slots=True)
class ProbeAnswered:
    key: int
    result: Json
    error: ErrorDict | None


@dataclass(frozen=True, slots=True)
class PlanRead:
    """The ``session/read`` a turn that used tools makes before answering: its final plan."""

    key: int
    result: Json
    error: ErrorDict | None


@dataclass(frozen=True, slots=True)
class RelayUpdates:
    """Session-level updates (mode, title, usage) told through the running Turn, so they
    reach the client in pipe order with the turn's own."""

    updates: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class BackendStalled:
    """A probe of a running turn got no answer: the backend process is wedged."""

    generation: int | None
    reason: str


# -- InteractionRouter -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class InteractionAsked(Owed):
    """A backend question whose card is shown: ask the clients."""

    frame: dict[str, Any]
    generation: int  # the backend process that asked
    session_id: str
    backend_session_id: str | None
    tool_call: dict[str, Any]
    session: Ref = None  # owner of the card, told if the dialog is abandoned
    backend: Ref = None

    def fail(self, error: RpcError) -> None:
        if self.backend is not None:
            self.backend.tell(AnswerBackend(self.generation, [self.frame.get("id")], {
                "decision": "deny", "action": "decline", "reason": error.message}))


@dataclass(frozen=True, slots=True)
class CancelInteractions:
    session_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class ClientAttached:
    session_id: str
    conn: Ref


@dataclass(frozen=True, slots=True)
class DeclineAll:
    reason: str


@dataclass(frozen=True, slots=True)
class InteractionTimeout:
    key: str


@dataclass(frozen=True, slots=True)
class DialogAnswered:
    """A client's answer to a dialog (or its failure)."""

    key: str
    serial: int
    conn_urn: str
    result: Json
    error: ErrorDict | None


# -- BackgroundTasks ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TaskEvents(Consumed):
    """``(event, launch_terminal | None)`` pairs, in pipe order."""

    events: list[tuple[dict[str, Any], bool | None]]
    token: Token | None = None

    def release(self) -> None:
        self.events.clear()


@dataclass(frozen=True, slots=True)
class TaskCancelled:
    task_id: str


@dataclass(frozen=True, slots=True)
class CloseTasks:
    pass


# -- Turn ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StartTurn:
    backend_session_id: str


@dataclass(frozen=True, slots=True)
class TurnEvents(Consumed):
    events: list[dict[str, Any]]
    token: Token | None = None

    def release(self) -> None:
        self.events.clear()


@dataclass(frozen=True, slots=True)
class Adopt:
    """The backend turn this Turn's send started (the Session's ``Attribution`` decided)."""

    claim: Claim


@dataclass(frozen=True, slots=True)
class StopDeadline:
    """The grace a stopped backend turn had to end is over."""


@dataclass(frozen=True, slots=True)
class ShowInteraction:
    """Show the card a backend question is about, then hand it to the router."""

    frame: dict[str, Any]
    generation: int


@dataclass(frozen=True, slots=True)
class RetrySend:
    pass


@dataclass(frozen=True, slots=True)
class FailTurn:
    """The session could not be made live."""

    error: RpcError


@dataclass(frozen=True, slots=True)
class SilenceCheck:
    pass


class Tellable(Protocol):
    def tell(self, message: Any) -> None: ...


# -- idle sessions (docs/performance.md, "Idle sessions") ----------------------------------------

@dataclass(frozen=True, slots=True)
class IdleCheck:
    """A Session's own timer: has it been idle for ``config.idle_session_after``?"""


@dataclass(frozen=True, slots=True)
class SessionIdle:
    """A Session → the Supervisor: idle long enough to leave memory."""

    session_id: str


@dataclass(frozen=True, slots=True)
class GoDormant:
    """The Supervisor → an idle Session: answer a ``Dormant`` record and stop taking part, or None if busy."""


@dataclass(frozen=True, slots=True)
class Dormant:
    """What the Supervisor keeps of a stopped idle Session to bring it back on its next use."""

    cwd: str
    mcp_servers: list[Any]
    backend_session_id: str | None
    settings: Any
    root_known: bool

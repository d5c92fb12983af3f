"""Messages the Supervisor receives (actors/supervisor.py): client frames and their lifecycle, sessions
made, forked, listed or forgotten, catalog news, attach and shutdown."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zcode_acp.actors.message_class import message
from zcode_acp.protocol.session_config import SessionSettings

if TYPE_CHECKING:
    from zcode_acp.actors.transport.base import Transport

from zcode_acp.actors.messages.base import ErrorDict, Json, Ref
from zcode_acp.actors.messages.client import ClientRequest


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
class TitleKept:
    """A rename the engine cannot do: the bridge's session records keep the title (session/list)."""

    session_id: str
    title: str


@message
class SessionActivity:
    """A Session's turn started or ended, or its title changed (for the hub's listing)."""

    session_id: str
    running: bool
    title: str | None = None
    outcome: str = ""  # a turn that ended: its stop reason, or its error's words
    answer: str = ""  # a turn that ended: the engine's final answer (notifications, when opted in)


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
    backend_session_id: str | None  # None: the source had nothing in it (v4), the first prompt makes one
    cwd: str
    mcp_servers: list[Any]
    settings: SessionSettings
    as_command: bool


@message
class AnnounceLater:
    """A new session's announcement held to the loop's next turn (a timer): its answer is written
    first, then the Session's code is imported to make it in the engine (a fresh install's catalog)."""

    conn: Ref
    session_id: str

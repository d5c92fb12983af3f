"""Messages the ClientConnection receives (actors/client_connection.py): its transport's input, replies and
updates to deliver, dialogs to send, holds during a replay."""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

from zcode_acp.actors.message_class import message
from zcode_acp.protocol.errors import RpcError


from zcode_acp.actors.messages.base import Consumed, ErrorDict, Json, Owed, Ref


# What a client asked, passed on to the actor that answers it (a failure answers it here).


@message
class ClientRequest(Owed):
    """A client's request, passed on to the actor that will answer it."""

    conn: Ref
    request_id: Json

    def fail(self, error: RpcError) -> None:
        self.conn.tell(Reply(self.request_id, None, error.to_dict()))


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
    # that Turn's record supersedes them (ReleaseSession.covers_turn). FEED_LINES: the v4
    # conversation feed sent them, and a snapshot replay supersedes them.
    turn: int | None = None


FEED_LINES = 0
"""``Deliver.turn`` of what the v4 conversation feed translated (Turn keys start at 1).

A client asks for ``session/load`` and its connection holds the session's lines from that
moment; the Session takes the snapshot when it hears of the load, a little later. What the
feed sent in between is in that snapshot already, so a replay from it covers those lines
(``ReleaseSession.covers_turn``), and each reaches the client once."""


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
    """From the Supervisor at teardown: answer what is open, flush, and close the transport."""


@message
class Backlog:
    """From a writer: its reader reads slower than we write (or caught up)."""

    backlogged: bool
    source: Any = None  # which writer (the Backend has one per process)


@message
class WriteFailed:
    """From a writer: its reader is gone."""

    source: Any = None

"""WebSocket connections on gevent sockets, framed by wsproto (sans-I/O).

A ``WebSocket`` is an open connection, either end (its opening handshake is
``websocket_handshake.py``); it carries text messages (one JSON-RPC message each) with:

- a bounded outgoing buffer: ``send_text`` never blocks; when the bytes
  waiting for a slow peer would pass ``max_buffer_bytes`` the message is not
  queued and ``on_overflow`` runs (default: close with 1013), so a stalled
  peer costs bounded memory and never slows the sender;
- a cap on incoming messages (1009 beyond it); binary frames are refused with
  1003; a malformed frame gets wsproto's code (1002/1007);
- keepalive: a ping every ``ping_interval``; a peer that has not answered the
  previous ping when the next one is due is dropped (close code 1006 locally);
- the close handshake, cut short after ``close_timeout``.

Every connection has three greenlets (reader, writer, pinger); callbacks run
in the reader greenlet. See docs/hub.md ("WebSocket plumbing").
"""

from __future__ import annotations

import logging
import os
import time
from collections import deque
from dataclasses import dataclass
from enum import IntEnum
from collections.abc import Callable, Iterator

import gevent
import gevent.event
import gevent.queue
from gevent import socket as gsocket
from wsproto import WSConnection
from wsproto.connection import ConnectionState
from wsproto.events import (BytesMessage, CloseConnection, Ping, Pong,
                            TextMessage)


log = logging.getLogger(__name__)

READ_CHUNK = 64 * 1024
# The reader hands control back to the loop after this many frames, even mid-read.
YIELD_EVERY = 64


class Budget:
    """A token bucket (frames or bytes) refilled at ``rate`` per second, holding ``burst`` at most."""

    def __init__(self, rate: float, burst: float, clock: Callable[[], float]) -> None:
        self.rate = rate  # 0: unlimited
        self.burst = burst
        self.level = burst
        self._clock = clock
        self._at = clock()

    def spend(self, amount: float) -> None:
        if self.rate <= 0:
            return
        now = self._clock()
        self.level = min(self.burst, self.level + (now - self._at) * self.rate) - amount
        self._at = now

    def wait_needed(self) -> float:
        """Seconds until the bucket is back above zero (0 when it is)."""
        return 0.0 if self.level >= 0 else -self.level / self.rate


class CloseCode(IntEnum):
    NORMAL = 1000
    GOING_AWAY = 1001
    PROTOCOL_ERROR = 1002
    UNSUPPORTED_DATA = 1003
    NO_STATUS = 1005          # never sent: "the close frame had no code"
    ABNORMAL = 1006           # never sent: "the connection dropped without a close"
    INVALID_DATA = 1007
    POLICY_VIOLATION = 1008
    MESSAGE_TOO_BIG = 1009
    INTERNAL_ERROR = 1011
    TRY_AGAIN_LATER = 1013


# Codes that may not appear in a close frame; a proxy relaying them sends 1001.
UNSENDABLE_CODES = frozenset({1005, 1006, 1015})


@dataclass(frozen=True)
class WebSocketOptions:
    # Seconds between pings; 0 disables keepalive (and the missed-pong drop).
    ping_interval: float = 30.0
    max_message_bytes: int = 16 * 1024 * 1024
    max_buffer_bytes: int = 8 * 1024 * 1024
    close_timeout: float = 3.0
    connect_timeout: float = 10.0
    # What one peer may make this end process per second (burst: twice as much): frames of
    # any kind (pings and fragments included) and bytes. Beyond it the reader stops reading
    # until the budget refills, so TCP slows that peer down and nobody else waits for it.
    # 0: no budget (a leg to our own bridge, whose stream must not be slowed).
    frames_per_second: float = 0.0
    bytes_per_second: float = 0.0


# The budgets of a remote client (the hub's client legs, a bridge's endpoint): far above what a
# person's client sends (a few requests a second, a pasted file now and then).
CLIENT_FRAMES_PER_SECOND = 500.0
CLIENT_BYTES_PER_SECOND = 8 * 1024 * 1024


@dataclass(frozen=True)
class CloseInfo:
    code: int
    reason: str
    # True when the peer began the close (or vanished); False when we did.
    by_peer: bool


OnMessage = Callable[[str], object]  # the result, if any, is ignored
OnClose = Callable[[CloseInfo], None]
OnOverflow = Callable[["WebSocket"], None]


def _default_overflow(ws: WebSocket) -> None:
    log.warning("%s: outgoing buffer over %d bytes; closing with 1013", ws.name,
                ws.options.max_buffer_bytes)
    ws.close(CloseCode.TRY_AGAIN_LATER, "send buffer exceeded", discard_pending=True)


class WebSocket:
    """One open WebSocket (either end). Not usable until ``start``."""

    def __init__(self, sock: gsocket.socket, protocol: WSConnection,
                 options: WebSocketOptions = WebSocketOptions(), *, name: str = "websocket",
                 on_overflow: OnOverflow | None = None) -> None:
        self.sock = sock
        self.options = options
        self.name = name
        self._protocol = protocol
        self._on_overflow = on_overflow or _default_overflow
        self._on_message: OnMessage | None = None
        self._on_close: OnClose | None = None
        self._inbox: gevent.queue.Queue[str | None] = gevent.queue.Queue()
        self._out: deque[bytes] = deque()
        self._out_bytes = 0
        self._wake = gevent.event.Event()
        # One buffer for a fragmented message, counted in bytes (a list of a million
        # one-character fragments would cost fifty times what the cap says).
        self._fragments = bytearray()
        clock = time.monotonic
        self._frame_budget = Budget(options.frames_per_second, 2 * options.frames_per_second, clock)
        self._byte_budget = Budget(options.bytes_per_second,
                                   max(2 * options.bytes_per_second, options.max_message_bytes), clock)
        self.throttled = 0  # times the reader paused for this peer's budget
        self._awaiting_pong = False
        self._close_sent = False
        self._finished = False
        self._close_info: CloseInfo | None = None
        self._done = gevent.event.Event()
        self._greenlets: list[gevent.Greenlet] = []
        self.overflowed = False
        self.pongs_received = 0

    # --- life cycle -----------------------------------------------------------------

    def start(self, on_message: OnMessage | None = None,
              on_close: OnClose | None = None) -> WebSocket:
        """Run the connection. Without ``on_message``, messages queue for ``receive``."""
        self._on_message = on_message
        self._on_close = on_close
        self._greenlets = [gevent.spawn(self._read_loop), gevent.spawn(self._write_loop)]
        if self.options.ping_interval > 0:
            self._greenlets.append(gevent.spawn(self._ping_loop))
        return self

    @property
    def is_open(self) -> bool:
        """True until a close was sent or received (then ``send_text`` refuses)."""
        return not self._finished and not self._close_sent and \
            self._protocol.state is ConnectionState.OPEN

    @property
    def close_info(self) -> CloseInfo | None:
        return self._close_info

    @property
    def buffered_bytes(self) -> int:
        """Bytes queued for the peer and not yet handed to the socket."""
        return self._out_bytes

    def wait_closed(self, timeout: float | None = None) -> CloseInfo | None:
        self._done.wait(timeout)
        return self._close_info

    # --- sending ----------------------------------------------------------------------

    def send_text(self, text: str) -> bool:
        """Queue one text message; False when closed or when the buffer would overflow."""
        if not self.is_open:
            return False
        frame = self._protocol.send(TextMessage(data=text))
        if self._out_bytes + len(frame) > self.options.max_buffer_bytes:
            self.overflowed = True
            self._on_overflow(self)
            return False
        self._queue(frame)
        return True

    def close(self, code: int = CloseCode.NORMAL, reason: str = "", *,
              discard_pending: bool = False) -> None:
        """Start the close handshake; the socket is cut after ``close_timeout`` regardless.

        ``discard_pending`` drops queued messages first (a stalled peer would
        otherwise have to read them all before seeing the close).
        """
        if self._finished or self._close_sent:
            return
        if code in UNSENDABLE_CODES:
            code = CloseCode.GOING_AWAY
        if discard_pending:
            self._out.clear()
            self._out_bytes = 0
        state = self._protocol.state
        if state not in (ConnectionState.OPEN, ConnectionState.REMOTE_CLOSING):
            self.abort(code, reason)
            return
        self._close_sent = True
        if self._close_info is None:
            self._close_info = CloseInfo(int(code), reason, by_peer=False)
        self._queue(self._protocol.send(CloseConnection(code=int(code), reason=reason or None)))
        gevent.spawn_later(self.options.close_timeout, self._finish, None)

    def abort(self, code: int = CloseCode.ABNORMAL, reason: str = "aborted") -> None:
        """Cut the connection now, without a close handshake."""
        if self._close_info is None:
            self._close_info = CloseInfo(int(code), reason, by_peer=False)
        self._finish(None)

    # --- receiving --------------------------------------------------------------------

    def receive(self, timeout: float | None = None) -> str | None:
        """The next message (queue mode only); None once closed; raises gevent.Timeout."""
        if self._on_message is not None:
            raise RuntimeError("receive() is for connections started without on_message")
        if self._done.is_set() and self._inbox.empty():
            return None
        with gevent.Timeout(timeout):
            message: str | None = self._inbox.get()
            return message

    def __iter__(self) -> Iterator[str]:
        while (message := self.receive()) is not None:
            yield message

    # --- internals --------------------------------------------------------------------

    def _queue(self, data: bytes) -> None:
        self._out.append(data)
        self._out_bytes += len(data)
        self._wake.set()

    def _write_loop(self) -> None:
        while not self._finished:
            self._wake.wait()
            self._wake.clear()
            while self._out:
                chunk = self._out.popleft()
                self._out_bytes -= len(chunk)
                try:
                    self.sock.sendall(chunk)
                except OSError:
                    self._finish(CloseInfo(CloseCode.ABNORMAL, "send failed", by_peer=True))
                    return
            if self._close_sent and self._protocol.state is ConnectionState.CLOSED:
                # Both close frames exchanged and ours written: done.
                self._finish(None)
                return

    def _ping_loop(self) -> None:
        while not self._finished:
            gevent.sleep(self.options.ping_interval)
            if self._finished or not self.is_open:
                return
            if self._awaiting_pong:
                log.info("%s: peer missed a pong; dropping the connection", self.name)
                self.abort(CloseCode.ABNORMAL, "missed pong")
                return
            self._awaiting_pong = True
            self._queue(self._protocol.send(Ping(payload=os.urandom(4))))

    def _read_loop(self) -> None:
        try:
            self._dispatch()  # bytes that arrived with the handshake
            while not self._finished:
                if self._protocol.state is ConnectionState.CLOSED:
                    return  # both close frames seen; the writer or the timer finishes
                self._keep_to_budget()
                try:
                    data = self.sock.recv(READ_CHUNK)
                except OSError:
                    data = b""
                if self._finished:
                    return
                self._byte_budget.spend(len(data))
                self._protocol.receive_data(data or None)
                self._dispatch()
                # A socket with data waiting never blocks, so a flooding peer would keep
                # this greenlet running forever: yield after every read.
                gevent.sleep(0)
                if not data:
                    self._finish(None)
                    return
        except gevent.GreenletExit:
            raise
        except Exception:
            log.exception("%s: reader failed", self.name)
            self.abort(CloseCode.INTERNAL_ERROR, "reader failed")

    def _dispatch(self) -> None:
        for count, event in enumerate(self._protocol.events(), 1):
            # Frame by frame (wsproto parses lazily): a read of tiny frames is thousands of
            # them, so the budget and the yield apply inside one read too.
            self._frame_budget.spend(1)
            if self._frame_budget.level < 0 or count % YIELD_EVERY == 0:
                self._keep_to_budget()
                if self._finished:
                    return
            if isinstance(event, TextMessage):
                self._on_text(event)
            elif isinstance(event, BytesMessage):
                self.close(CloseCode.UNSUPPORTED_DATA, "binary frames are not accepted",
                           discard_pending=True)
            elif isinstance(event, Ping):
                if self._protocol.state is ConnectionState.OPEN:
                    # A pong is a send like any other: a peer that pings without reading
                    # fills its own buffer and is dropped, it does not grow ours.
                    pong = self._protocol.send(event.response())
                    if self._out_bytes + len(pong) > self.options.max_buffer_bytes:
                        self.overflowed = True
                        self._on_overflow(self)
                        return
                    self._queue(pong)
            elif isinstance(event, Pong):
                self._awaiting_pong = False
                self.pongs_received += 1
            elif isinstance(event, CloseConnection):
                self._on_close_frame(event)

    def _keep_to_budget(self) -> None:
        """Pause reading while this peer is over its frame or byte budget."""
        wait = max(self._frame_budget.wait_needed(), self._byte_budget.wait_needed())
        if wait > 0:
            self.throttled += 1
            if self.throttled == 1:
                log.info("%s: the peer sends faster than its budget; reading it more slowly",
                         self.name)
        gevent.sleep(wait)  # 0: a plain yield

    def _on_text(self, event: TextMessage) -> None:
        if self._close_sent:
            return  # closing: what the peer still sends is dropped
        self._fragments += event.data.encode("utf-8", "surrogatepass")
        if len(self._fragments) > self.options.max_message_bytes:
            self._fragments = bytearray()
            self.close(CloseCode.MESSAGE_TOO_BIG,
                       f"message over {self.options.max_message_bytes} bytes")
            return
        if not event.message_finished:
            return
        message = self._fragments.decode("utf-8", "surrogatepass")
        self._fragments = bytearray()
        if self._on_message is not None:
            self._on_message(message)
        else:
            self._inbox.put(message)

    def _on_close_frame(self, event: CloseConnection) -> None:
        state = self._protocol.state
        if state is ConnectionState.REMOTE_CLOSING:
            # The peer closes: answer with the same code, then finish once written.
            if self._close_info is None:
                self._close_info = CloseInfo(int(event.code), event.reason or "", by_peer=True)
            self._close_sent = True
            self._queue(self._protocol.send(event.response()))
            gevent.spawn_later(self.options.close_timeout, self._finish, None)
        elif state is ConnectionState.CLOSED and self._close_sent:
            self._wake.set()  # the reply to our close: the writer finishes
        elif state is ConnectionState.CLOSED:
            # End of stream without a close frame (wsproto reports 1006).
            self._finish(CloseInfo(int(event.code), event.reason or "connection lost",
                                     by_peer=True))
        else:
            # A frame wsproto could not parse: close with the code it names.
            self.close(event.code, event.reason or "protocol error", discard_pending=True)

    def _finish(self, info: CloseInfo | None) -> None:
        if self._finished:
            return
        self._finished = True
        if self._close_info is None:
            self._close_info = info or CloseInfo(CloseCode.ABNORMAL, "connection lost",
                                                 by_peer=True)
        self._wake.set()
        try:
            self.sock.close()
        except OSError:
            pass
        current = gevent.getcurrent()
        for greenlet in self._greenlets:
            if greenlet is not current:
                greenlet.kill(block=False)
        self._inbox.put(None)
        self._done.set()
        if self._on_close is not None:
            callback, self._on_close = self._on_close, None
            try:
                callback(self._close_info)
            except Exception:
                log.exception("%s: on_close failed", self.name)

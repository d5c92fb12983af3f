"""The transport seam: what a ClientConnection needs from the wire under it.

A transport moves whole frames (one JSON-RPC message each) — it knows the
wire's framing (newline-delimited JSON on stdio, one text message per frame
on a WebSocket) but nothing of JSON-RPC. It reports to its owner, the
ClientConnection actor, with messages:

* ``InboundFrames([bytes, …])`` — frames read, in order, not yet decoded;
* ``InboundError(RpcError)`` — something arrived that is not a frame;
* ``InboundClosed(reason)`` — the peer is gone;
* ``Backlog(bool)`` / ``WriteFailed`` — its writer's back-pressure signal.

Each transport has its own writer and its own policy for a peer that reads
slowly: stdio (the editor) pauses the backend, loss-free; a remote client is
dropped once its bounded buffer overflows. The connection encodes an update
once and hands the same bytes to every transport.
"""

from __future__ import annotations

from typing import Any, Protocol


class Transport(Protocol):
    name: str

    def start(self, owner: Any) -> None:
        """Begin reading; report to ``owner`` (an actor ref) with the messages above."""

    def send(self, data: bytes) -> None:
        """Queue encoded frames (each ``\\n``-terminated), in order. Never blocks."""

    def drain(self, timeout: float) -> None:
        """Wait, bounded, until everything queued is written (the last words at close)."""

    def close(self, reason: str = "") -> None:
        """Stop reading and writing; release what the transport holds."""

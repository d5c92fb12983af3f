"""Proving knowledge of the remote token without sending it (hub ↔ bridges, on loopback).

Whatever listens on the hub's port, or on a port a dead ``serve`` left, may
not be ours: another local user can bind it. So our own code never sends the
token to a listener. A request carries a proof instead, and the answer carries
one back; both are HMAC-SHA256 under the token, over a fresh nonce:

    request:  Authorization: ZCode-Proof ts=<epoch ms>,nonce=<hex>,mac=<hex>
              X-ZCode-Body-SHA256: <hex>   (the body's digest, so the head alone is judged)
              X-ZCode-Challenge: <hex>     (only on the owner check; empty in the MAC otherwise)
              mac = HMAC(token, "request|" ts "|" nonce "|" method "|" target "|" host "|"
                                digest "|" challenge)
    answer:   X-ZCode-Proof: HMAC(token, "answer|" nonce)

The ``host`` is the proof's audience: the server accepts only a proof whose
host names its own port (the name itself is loopback: origin_policy.py), so a
proof a squatter collects on one port cannot be spent on the hub or on another
bridge. The server checks the
time (within ``WINDOW`` seconds either way) and refuses a nonce it has seen
(a replay): each nonce is kept until its proof's time is out of the window, and
no longer needed, so every replay inside the window is refused however many
proofs came between; when ``MAX_NONCES`` are live at once the checker refuses
new proofs rather than forget one. The client trusts an answer only when its proof holds,
so a squatter can neither read the token nor pass for the hub or a bridge. A
bridge proves it owns the port it registered with a third form, over the
hub's challenge: ``HMAC(token, "owner|" nonce "|" instance id)``. Each form has its
own prefix, so one cannot be replayed as another. Tokens are at least 16
characters (docs/security.md): the MACs a squatter collects cannot be used to
guess one. No I/O; the server's clock is passed in.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import heapq
import re
import time
from urllib.parse import urlsplit

SCHEME = "ZCode-Proof"
ANSWER_HEADER = "X-ZCode-Proof"
CHALLENGE_HEADER = "X-ZCode-Challenge"
BODY_DIGEST_HEADER = "X-ZCode-Body-SHA256"
OWNER_PATH = "/.well-known/zcode-acp-owner"
WINDOW = 30.0  # seconds a request proof stays valid (clocks on one machine)
# Nonces remembered at once (each for at most 2 x WINDOW): past it, proofs are refused until
# some expire. Only a token holder can make a proof that reaches the memory.
MAX_NONCES = 100_000
_FIELDS = re.compile(r"^\s*ts=(\d{1,16}),nonce=([0-9a-f]{32}),mac=([0-9a-f]{64})\s*$")


def new_nonce() -> str:
    return os.urandom(16).hex()


def _mac(token: str, *parts: str) -> str:
    return hmac.new(token.encode("utf-8"), "|".join(parts).encode("utf-8"),
                    hashlib.sha256).hexdigest()


def body_digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def request_headers(token: str, method: str, target: str, host: str, body: bytes = b"", *,
                    challenge: str = "",
                    now: float | None = None) -> tuple[list[tuple[str, str]], str]:
    """(the headers that prove one request, its nonce: the answer's proof is checked with it).

    ``host``: the server it is made for (``127.0.0.1:<port>``), sent as the Host header;
    ``challenge``: the owner check's nonce, sent as ``X-ZCode-Challenge`` and MACed too.
    """
    nonce = new_nonce()
    ts = str(int((time.time() if now is None else now) * 1000))
    digest = body_digest(body)
    mac = _mac(token, "request", ts, nonce, method.upper(), target, host.lower(), digest,
               challenge)
    headers = [("Authorization", f"{SCHEME} ts={ts},nonce={nonce},mac={mac}"),
               (BODY_DIGEST_HEADER, digest)]
    if challenge:
        headers.append((CHALLENGE_HEADER, challenge))
    return headers, nonce


def port_of(host: str) -> int | None:
    """The port a ``Host`` value names (None: none, or malformed)."""
    try:
        return urlsplit(f"//{host.strip()}").port
    except ValueError:
        return None


def answer_proof(token: str, nonce: str) -> str:
    return _mac(token, "answer", nonce)


def answer_holds(token: str, nonce: str, given: str | None) -> bool:
    return bool(given) and hmac.compare_digest(answer_proof(token, nonce), (given or "").strip())


def owner_proof(token: str, nonce: str, instance_id: str) -> str:
    return _mac(token, "owner", nonce, instance_id)


def owner_holds(token: str, nonce: str, instance_id: str, given: object) -> bool:
    return isinstance(given, str) and hmac.compare_digest(owner_proof(token, nonce, instance_id),
                                                          given)


class ProofChecker:
    """The server's side: its own audience, valid MAC, fresh time, each nonce once."""

    def __init__(self, token: str, audience: int = 0) -> None:
        self.token = token
        # The port a proof's host must name: the server's own, set once it is bound;
        # 0, every proof is refused.
        self.audience = audience
        self._seen: set[str] = set()
        self._expiries: list[tuple[float, str]] = []  # a heap: (when forgotten, nonce)

    def verify(self, authorization: str, method: str, target: str, host: str,
               digest: str, now: float, challenge: str = "") -> str | None:
        """The request's nonce when its proof holds (the answer is proved with it), else None.

        ``digest``: the body digest the head declares (the reader checks the body against
        it), so the proof is judged before any body is read. ``challenge``: the request's
        ``X-ZCode-Challenge`` (empty when it has none).
        """
        scheme, _, rest = authorization.strip().partition(" ")
        match = _FIELDS.match(rest) if scheme == SCHEME else None
        if match is None or not self.audience or port_of(host) != self.audience:
            return None
        ts, nonce, mac = match.groups()
        made = int(ts) / 1000
        if abs(now - made) > WINDOW:
            return None
        expected = _mac(self.token, "request", ts, nonce, method.upper(), target, host.lower(),
                        digest or body_digest(b""), challenge.strip())
        if not hmac.compare_digest(expected, mac):
            return None
        self._forget_expired(now)
        if nonce in self._seen or len(self._seen) >= MAX_NONCES:
            return None  # a replay, or too many live proofs to remember one more
        self._seen.add(nonce)
        # Past made + WINDOW the time check refuses the proof anyway: no need to remember it.
        heapq.heappush(self._expiries, (made + WINDOW, nonce))
        return nonce

    @property
    def remembered(self) -> int:
        return len(self._seen)

    def _forget_expired(self, now: float) -> None:
        while self._expiries and self._expiries[0][0] < now:
            _, nonce = heapq.heappop(self._expiries)
            self._seen.discard(nonce)

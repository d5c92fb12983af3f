"""Proving knowledge of the remote token without sending it (hub ↔ bridges, on loopback).

Whatever listens on the hub's port, or on a port a dead ``serve`` left, may
not be ours: another local user can bind it. So our own code never sends the
token to a listener. A request carries a proof instead, and the answer carries
one back; both are HMAC-SHA256 under the token, over a fresh nonce:

    request:  Authorization: ZCode-Proof ts=<epoch ms>,nonce=<hex>,mac=<hex>
              X-ZCode-Body-SHA256: <hex>   (the body's digest, so the head alone is judged)
              mac = HMAC(token, "request|" ts "|" nonce "|" method "|" target "|" host "|" digest)
    answer:   X-ZCode-Proof: HMAC(token, "answer|" nonce)

The server checks the time (within ``WINDOW`` seconds) and refuses a nonce it
has seen (a replay); the client trusts an answer only when its proof holds,
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
import re
import time
from collections import OrderedDict

SCHEME = "ZCode-Proof"
ANSWER_HEADER = "X-ZCode-Proof"
CHALLENGE_HEADER = "X-ZCode-Challenge"
BODY_DIGEST_HEADER = "X-ZCode-Body-SHA256"
OWNER_PATH = "/.well-known/zcode-acp-owner"
WINDOW = 30.0  # seconds a request proof stays valid (clocks on one machine)
MAX_NONCES = 4096
_FIELDS = re.compile(r"^\s*ts=(\d{1,16}),nonce=([0-9a-f]{32}),mac=([0-9a-f]{64})\s*$")


def new_nonce() -> str:
    return os.urandom(16).hex()


def _mac(token: str, *parts: str) -> str:
    return hmac.new(token.encode("utf-8"), "|".join(parts).encode("utf-8"),
                    hashlib.sha256).hexdigest()


def body_digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def request_headers(token: str, method: str, target: str, host: str, body: bytes = b"", *,
                    now: float | None = None) -> tuple[list[tuple[str, str]], str]:
    """(the headers that prove one request, its nonce: the answer's proof is checked with it)."""
    nonce = new_nonce()
    ts = str(int((time.time() if now is None else now) * 1000))
    digest = body_digest(body)
    mac = _mac(token, "request", ts, nonce, method.upper(), target, host.lower(), digest)
    return [("Authorization", f"{SCHEME} ts={ts},nonce={nonce},mac={mac}"),
            (BODY_DIGEST_HEADER, digest)], nonce


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
    """The server's side: valid MAC, fresh time, each nonce once (a bounded memory)."""

    def __init__(self, token: str) -> None:
        self.token = token
        self._seen: OrderedDict[str, float] = OrderedDict()

    def verify(self, authorization: str, method: str, target: str, host: str,
               digest: str, now: float) -> str | None:
        """The request's nonce when its proof holds (the answer is proved with it), else None.

        ``digest``: the body digest the head declares (the reader checks the body against
        it), so the proof is judged before any body is read.
        """
        scheme, _, rest = authorization.strip().partition(" ")
        match = _FIELDS.match(rest) if scheme == SCHEME else None
        if match is None:
            return None
        ts, nonce, mac = match.groups()
        if abs(now - int(ts) / 1000) > WINDOW:
            return None
        expected = _mac(self.token, "request", ts, nonce, method.upper(), target, host.lower(),
                        digest or body_digest(b""))
        if not hmac.compare_digest(expected, mac):
            return None
        self._forget_older_than(now - 2 * WINDOW)
        if nonce in self._seen:
            return None  # a replay
        self._seen[nonce] = now
        while len(self._seen) > MAX_NONCES:
            self._seen.popitem(last=False)
        return nonce

    def _forget_older_than(self, cutoff: float) -> None:
        while self._seen and next(iter(self._seen.values())) < cutoff:
            self._seen.popitem(last=False)

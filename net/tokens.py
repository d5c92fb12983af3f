"""The remote-access token: where a request carries it, a constant-time check, and the gate.

A request proves it holds the token in one of three ways, all in its head
(never in its URL, which proxies, tunnels and browsers' histories keep):

- ``Authorization: Bearer <token>`` (phones' HTTP calls, editors, scripts);
- a WebSocket subprotocol ``zcode-acp.token.<base64url(token)>`` next to
  ``zcode-acp`` (browsers cannot set headers on a WebSocket; the answer names
  ``zcode-acp`` only, never the token);
- ``Authorization: ZCode-Proof …`` (the hub and bridges between themselves:
  ``proofs.py``; the token itself never crosses that link).

Tokens are hashed before ``hmac.compare_digest``, so the comparison's time
depends on neither their length nor their content. ``RemoteAuth.admit`` runs
on the request head, before any body is read (docs/security.md).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from collections.abc import Callable, Mapping

from zcode_acp.net import proofs
from zcode_acp.net.http_server import Admission, HttpError, HttpRequest, no_body_allowed
from zcode_acp.net.origin_policy import HostPolicy

SUBPROTOCOL = "zcode-acp"
TOKEN_SUBPROTOCOL_PREFIX = "zcode-acp.token."


def token_matches(given: str | None, expected: str | None) -> bool:
    """True only when both are non-empty and equal; constant time in their content."""
    if not given or not expected:
        return False
    given_digest = hashlib.sha256(given.encode("utf-8")).digest()
    expected_digest = hashlib.sha256(expected.encode("utf-8")).digest()
    return hmac.compare_digest(given_digest, expected_digest)


def token_subprotocol(token: str) -> str:
    """The subprotocol that carries ``token`` (base64url without padding: a valid HTTP token)."""
    return TOKEN_SUBPROTOCOL_PREFIX + base64.urlsafe_b64encode(token.encode("utf-8")).decode(
        "ascii").rstrip("=")


def request_token(headers: Mapping[str, str]) -> str | None:
    """The token a request presents in clear: the Bearer header, else the subprotocol.

    ``headers`` must have lower-case names (as ``HttpRequest.headers``). A
    ``?token=`` in the URL is not read: it would sit in every access log.
    """
    authorization = headers.get("authorization", "")
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    for offered in headers.get("sec-websocket-protocol", "").split(","):
        offered = offered.strip()
        if offered.startswith(TOKEN_SUBPROTOCOL_PREFIX):
            encoded = offered[len(TOKEN_SUBPROTOCOL_PREFIX):]
            try:
                decoded = base64.b64decode(encoded + "=" * (-len(encoded) % 4), altchars=b"-_",
                                           validate=True).decode("utf-8")
            except (binascii.Error, ValueError):
                return None
            return decoded or None
    return None


def offers_subprotocol(headers: Mapping[str, str]) -> bool:
    """The client offered ``zcode-acp`` (a browser page): the 101 must name it."""
    return SUBPROTOCOL in {p.strip() for p in headers.get("sec-websocket-protocol", "").split(",")}


class RemoteAuth:
    """The gate every remote listener runs on a request's head (``HttpServer(admit=...)``).

    Host and Origin first (403), then no body where none belongs (400), then the
    token or a proof (401) on the routes that need it. A proved request gets
    the answer's proof header on whatever it is answered with.
    """

    def __init__(self, token: str, hosts: HostPolicy, *,
                 protected: Callable[[str], bool] = lambda path: True,
                 bodiless_paths: frozenset[str] = frozenset(),
                 clock: Callable[[], float] = time.time) -> None:
        self.token = token
        self.hosts = hosts
        self.needs_token = protected
        self.bodiless_paths = bodiless_paths
        self.proofs = proofs.ProofChecker(token)
        self._clock = clock

    def bound_to(self, port: int) -> RemoteAuth:
        """The listener's port, once bound: proofs are accepted only when made for it."""
        self.proofs.audience = port
        return self

    def admit(self, request: HttpRequest) -> Admission:
        self.hosts.check(request)
        no_body_allowed(request)
        if request.path in self.bodiless_paths and (request.header("content-length").strip()
                                                    not in ("", "0")
                                                    or request.header("transfer-encoding")):
            raise HttpError(400, "this route carries no body")
        if not self.needs_token(request.path):
            return Admission()
        authorization = request.header("authorization")
        if authorization.strip().startswith(proofs.SCHEME + " "):
            nonce = self.proofs.verify(authorization, request.method, request.target,
                                       request.header("host"),
                                       request.header(proofs.BODY_DIGEST_HEADER.lower()),
                                       self._clock(),
                                       request.header(proofs.CHALLENGE_HEADER.lower()))
            if nonce is not None:
                return Admission(((proofs.ANSWER_HEADER, proofs.answer_proof(self.token, nonce)),),
                                 authenticated=True)
        elif token_matches(request_token(request.headers), self.token):
            return Admission(authenticated=True)
        raise HttpError(401, "unauthorized: missing or wrong token "
                             "(Authorization: Bearer <token>, or the zcode-acp.token "
                             "WebSocket subprotocol)")

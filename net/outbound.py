"""One outbound HTTP(S) request: TLS verified, no redirects, a bounded answer, one deadline.

What the bridge sends beyond loopback goes through ``request`` (docs/security.md, "Outbound
requests"; docs/privacy.md names each destination): the notification webhook
(actors/webhook_post.py) and the Coding Plan's quota (actors/quota.py).

* https goes through gevent's own ``SSLContext`` (``gevent.ssl``): the bridge patches ``socket`` but
  not ``ssl`` (cli/runtime.py), and the stdlib's ``ssl`` cannot wrap a gevent socket (every
  https webhook once failed with ``TypeError: _wrap_socket()``). The context is what
  ``ssl.create_default_context()`` makes: the certificate and the host name are checked against the
  system's trust store, ``SSL_CERT_FILE``/``SSL_CERT_DIR`` honoured as Python's own default.
* ``http.client`` follows no redirect: a 3xx is an answer like any other, never a request elsewhere.
* The answer is read in ``CHUNK`` pieces up to ``limit`` bytes, then the connection is closed: a
  huge answer must not become the bridge's memory. ``Answer.truncated`` says the limit was hit.
* ``deadline`` bounds the whole request (connect, TLS, send, head, body) with one
  ``gevent.Timeout``: a per-``recv`` timeout would let an answer that trickles a byte at a time
  hold the caller forever.
"""

from __future__ import annotations

import http.client
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

import gevent

CHUNK = 16 * 1024  # bytes per read: what the answer can cost at a time


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    truncated: bool  # the answer was longer than the limit: ``body`` is its first ``limit`` bytes


def default_context() -> Any:
    """What Python's ``ssl.create_default_context()`` makes, as gevent's ``SSLContext``.

    gevent's module-level ``create_default_context`` is the stdlib's function and makes the
    stdlib's context, which would fail again on a gevent socket: the class is named here.
    """
    import ssl
    import sys

    from gevent import ssl as cooperative  # only a bridge that goes out over https pays for it

    context = cooperative.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # host name checked, certificate required
    if sys.version_info >= (3, 13):  # the flags 3.13's default context adds
        context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN | ssl.VERIFY_X509_STRICT
    context.load_default_certs(ssl.Purpose.SERVER_AUTH)  # the system store; SSL_CERT_FILE/_DIR
    return context


def is_web_address(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def request(method: str, url: str, *, body: bytes | None, headers: Mapping[str, str], deadline: float,
            limit: int, keep: bool, context: Callable[[], Any] = default_context) -> Answer:
    """Send one request to ``url`` within ``deadline`` seconds; its answer (``keep=False``: read, dropped).

    Raises ``TimeoutError`` past the deadline, ``ssl.SSLError`` (an ``OSError``) for a refused
    certificate, ``OSError`` for a refused connection, ``ValueError`` for a URL that is neither
    http nor https.
    """
    if not is_web_address(url):
        raise ValueError("not an http(s):// address")
    parts = urlsplit(url)
    assert parts.hostname is not None
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    with gevent.Timeout(deadline, TimeoutError(f"no answer within {deadline:g} s")):
        connection: http.client.HTTPConnection
        if parts.scheme == "https":
            connection = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=deadline,
                                                     context=context())
        else:
            connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=deadline)
        try:
            connection.request(method, target, body=body, headers=dict(headers))
            answer = connection.getresponse()
            pieces, truncated = read_bounded(answer, limit, keep)
        finally:
            connection.close()
    return Answer(answer.status, b"".join(pieces), truncated)


def read_bounded(answer: http.client.HTTPResponse, limit: int, keep: bool) -> tuple[list[bytes], bool]:
    """Read at most ``limit`` bytes of the answer, ``CHUNK`` at a time: the pieces kept, and whether more came."""
    taken, pieces = 0, list[bytes]()
    while taken < limit:
        piece = answer.read(min(CHUNK, limit - taken))
        if not piece:
            return pieces, False
        taken += len(piece)
        if keep:
            pieces.append(piece)
    return pieces, bool(answer.read(1))

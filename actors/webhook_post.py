"""One POST to the user's webhook: TLS verified, no redirects, a bounded answer, one deadline.

``post`` is what the Notifier's sender greenlet calls for each attempt (docs/security.md,
"The notification webhook"):

* https goes through gevent's own ``SSLContext`` (``gevent.ssl``): the bridge patches ``socket`` but
  not ``ssl`` (cli/runtime.py), and the stdlib's ``ssl`` cannot wrap a gevent socket (every
  https webhook failed with ``TypeError: _wrap_socket()``). The context is
  what ``ssl.create_default_context()`` makes: the certificate and the host name are checked against the
  system's trust store, ``SSL_CERT_FILE``/``SSL_CERT_DIR`` honoured as Python's own default.
* ``http.client`` follows no redirect: a 3xx is a failed post, never a request elsewhere.
* The answer is read in ``CHUNK`` pieces up to ``ANSWER_LIMIT`` bytes, then the connection is
  closed: nothing in it is needed, and a huge answer must not become the bridge's memory.
* ``deadline`` bounds the whole attempt (connect, TLS, send, head, body) with one
  ``gevent.Timeout``: a per-``recv`` timeout would let an answer that trickles a byte at a time
  hold the sender forever.
"""

from __future__ import annotations

import http.client
from typing import Any
from collections.abc import Callable
from urllib.parse import urlsplit

import gevent

from zcode_acp.protocol.notifications import Post

ANSWER_LIMIT = 64 * 1024  # bytes of an answer read before the connection is closed
CHUNK = 16 * 1024  # bytes per read: what the answer can cost at a time


class WebhookStatus(Exception):
    """The webhook answered outside 2xx (a 3xx included: redirects are not followed)."""

    def __init__(self, code: int) -> None:
        super().__init__(f"HTTP {code}" + (" (redirects are not followed)" if 300 <= code < 400 else ""))
        self.code = code


def default_context() -> Any:
    """What Python's ``ssl.create_default_context()`` makes, as gevent's ``SSLContext``.

    gevent's module-level ``create_default_context`` is the stdlib's function and makes the
    stdlib's context, which would fail again on a gevent socket: the class is named here.
    """
    import ssl
    import sys

    from gevent import ssl as cooperative  # only a bridge with an https webhook pays for it

    context = cooperative.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # host name checked, certificate required
    if sys.version_info >= (3, 13):  # the flags 3.13's default context adds
        context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN | ssl.VERIFY_X509_STRICT
    context.load_default_certs(ssl.Purpose.SERVER_AUTH)  # the system store; SSL_CERT_FILE/_DIR
    return context


def post(url: str, request: Post, deadline: float,
         context: Callable[[], Any] = default_context) -> int:
    """POST ``request`` to ``url`` within ``deadline`` seconds; the status, or raises.

    Raises ``TimeoutError`` past the deadline, ``WebhookStatus`` for a status outside 2xx,
    ``ssl.SSLError`` (an ``OSError``) for a refused certificate, ``ValueError`` for a URL
    that is neither http nor https.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("the webhook URL is not an http(s):// address")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    with gevent.Timeout(deadline, TimeoutError(f"no answer within {deadline:g} s")):
        connection: http.client.HTTPConnection
        if parts.scheme == "https":
            connection = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=deadline,
                                                     context=context())
        else:
            connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=deadline)
        try:
            connection.request("POST", target, body=request.body, headers=request.headers)
            answer = connection.getresponse()
            read_bounded(answer)
        finally:
            connection.close()
    if not 200 <= answer.status < 300:
        raise WebhookStatus(answer.status)
    return answer.status


def read_bounded(answer: http.client.HTTPResponse, limit: int = ANSWER_LIMIT) -> int:
    """Read and drop at most ``limit`` bytes of the answer, ``CHUNK`` at a time; how many were read."""
    taken = 0
    while taken < limit:
        piece = answer.read(min(CHUNK, limit - taken))
        if not piece:
            break
        taken += len(piece)
    return taken

"""One POST to the user's webhook: TLS verified, no redirects, a bounded answer, one deadline.

``post`` is what the Notifier's sender greenlet calls for each attempt (docs/security.md,
"The notification webhook"). The request itself is ``net/outbound.request``'s (TLS through
gevent's ``SSLContext``, no redirect followed, one deadline for the whole attempt); the webhook's
answer is read up to ``ANSWER_LIMIT`` bytes and dropped: nothing in it is needed, and a huge answer
must not become the bridge's memory.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

from zcode_acp.net.outbound import default_context, is_web_address, request
from zcode_acp.protocol.notifications import Post

ANSWER_LIMIT = 64 * 1024  # bytes of an answer read before the connection is closed


class WebhookStatus(Exception):
    """The webhook answered outside 2xx (a 3xx included: redirects are not followed)."""

    def __init__(self, code: int) -> None:
        super().__init__(f"HTTP {code}" + (" (redirects are not followed)" if 300 <= code < 400 else ""))
        self.code = code


def post(url: str, request_: Post, deadline: float,
         context: Callable[[], Any] = default_context) -> int:
    """POST ``request_`` to ``url`` within ``deadline`` seconds; the status, or raises.

    Raises ``TimeoutError`` past the deadline, ``WebhookStatus`` for a status outside 2xx,
    ``ssl.SSLError`` (an ``OSError``) for a refused certificate, ``ValueError`` for a URL
    that is neither http nor https.
    """
    if not is_web_address(url):
        raise ValueError("the webhook URL is not an http(s):// address")
    answer = request("POST", url, body=request_.body, headers=request_.headers, deadline=deadline,
                     limit=ANSWER_LIMIT, keep=False, context=context)
    if not 200 <= answer.status < 300:
        raise WebhookStatus(answer.status)
    return answer.status

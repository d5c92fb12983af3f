"""Read the GLM Coding Plan's quota from the provider's own endpoint (docs/quota.md).

One bounded GET through ``net/outbound.request`` (TLS verified, no redirect, one deadline): the
plan's key as the bare ``Authorization`` header, as the endpoint takes it. The answer is at most
``ANSWER_LIMIT`` bytes of JSON; anything else (a refused key, no plan, a 5xx, a redirect, a huge or
broken body, a timeout) is a ``QuotaUnavailable`` whose reason the user reads. The key is never in
an exception's text nor in a log line.
"""

from __future__ import annotations

import json
from datetime import datetime, UTC
from typing import Any
from collections.abc import Callable

from zcode_acp.net.outbound import default_context, request
from zcode_acp.protocol.quota import QuotaSnapshot, QuotaUnavailable, parse_quota, quota_url

ANSWER_LIMIT = 256 * 1024  # a real answer is under 4 KiB
DEADLINE = 10.0  # seconds for the whole request: a quota read never holds anything else up


def fetch_quota(provider: str, api_key: str, *, url: str | None = None, deadline: float = DEADLINE,
                context: Callable[[], Any] = default_context) -> QuotaSnapshot:
    """The plan's quota now; raises ``QuotaUnavailable``. ``url`` replaces the provider's (tests)."""
    try:
        answer = request("GET", url or quota_url(provider), body=None, deadline=deadline, limit=ANSWER_LIMIT,
                         keep=True, context=context,
                         headers={"Authorization": api_key, "Accept": "application/json",
                                  "Accept-Language": "en-US,en"})
    except TimeoutError:
        raise QuotaUnavailable("quota.error.network", f"no answer within {deadline:g} s") from None
    except (OSError, ValueError) as exc:  # refused, unreachable, a certificate refused (SSLError)
        raise QuotaUnavailable("quota.error.network", type(exc).__name__) from None
    if answer.status in (401, 403):
        raise QuotaUnavailable("quota.error.key_refused")
    if answer.status != 200:
        raise QuotaUnavailable("quota.error.provider", f"HTTP {answer.status}")
    if answer.truncated:
        raise QuotaUnavailable("quota.error.shape")
    try:
        decoded = json.loads(answer.body)
    except ValueError:
        raise QuotaUnavailable("quota.error.shape") from None
    return parse_quota(decoded, datetime.now(UTC))

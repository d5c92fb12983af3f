"""The remote-access token: where a request carries it, and a constant-time check.

Browsers cannot set headers on a WebSocket, so ``?token=`` is accepted beside
``Authorization: Bearer``. Both sides are hashed first so the comparison's
time depends on neither the token's length nor its content (docs/hub.md,
Security).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping


def token_matches(given: str | None, expected: str | None) -> bool:
    """True only when both are non-empty and equal; constant time in their content."""
    if not given or not expected:
        return False
    given_digest = hashlib.sha256(given.encode("utf-8")).digest()
    expected_digest = hashlib.sha256(expected.encode("utf-8")).digest()
    return hmac.compare_digest(given_digest, expected_digest)


def request_token(headers: Mapping[str, str], query: Mapping[str, str]) -> str | None:
    """The token a request presents: the Bearer header first, else ``?token=``.

    ``headers`` must have lower-case names (as ``HttpRequest.headers``).
    """
    authorization = headers.get("authorization", "")
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return query.get("token") or None

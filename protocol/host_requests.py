"""What the bridge answers when the engine asks its host something (docs/backend-protocol.md §4, §11).

The engine sends requests of its own to whoever runs it. Ids are opaque JSON
values: the seed's engine numbers them, today's engine sends strings such as
``"server-17"``; an answer always echoes the id exactly as it came.

Requests nobody else handles are answered here, at arrival:

* ``session/requestRuntimePreferences`` — both shapes (``{}`` during an older
  create; ``{scope, sessionId}`` on today's engine) get the same strict answer:
  none of the optional runtime features, and
  ``askUserQuestionAutoResolutionEnabled: false`` said out loud — omitted, the
  engine reads it as true and lets questions answer themselves;
* ``interaction/requestProviderRuntimeHeaders`` — today's engine asks it before
  each model request, and only when it was started in host auth mode
  (``ZCODE_APP_SERVER_AUTH_MODE=host``); in its default standalone mode it uses
  the user's own ``zcode login`` and never asks. The bridge holds no ZCode
  account, so it answers "nothing applied" with the text the engine shows the
  user when it fails that request (-32031): why, and what to do. Never an error
  answer: that makes the engine retry, then fail;
* ``interaction/requestOfficialMcpAuthHeaders`` — the engine's strict union:
  ``{ok: false, reason: "official_auth_unavailable"}`` (no ZCode account here).
"""

from __future__ import annotations

from typing import Any

RUNTIME_PREFERENCES = "session/requestRuntimePreferences"
PROVIDER_HEADERS = "interaction/requestProviderRuntimeHeaders"
MCP_AUTH_HEADERS = "interaction/requestOfficialMcpAuthHeaders"

NO_RUNTIME_FEATURES: dict[str, Any] = {
    "nativeSearchEnhancementsEnabled": False,
    "memoryEnabled": False,
    "askUserQuestionAutoResolutionEnabled": False,
}
NO_PROVIDER_HEADERS_REASON = (
    "This model signs in through a ZCode account, and the engine was started in host auth mode "
    "(ZCODE_APP_SERVER_AUTH_MODE=host), which makes zcode-acp supply the account's credentials; "
    "zcode-acp holds none. Unset ZCODE_APP_SERVER_AUTH_MODE (or set it to standalone) in the "
    "environment zcode-acp starts from and run `zcode login`, or pick a model of a provider "
    "configured with its own API key."
)
MCP_AUTH_UNAVAILABLE: dict[str, Any] = {"ok": False, "reason": "official_auth_unavailable"}


def host_answer(method: str, params: Any) -> dict[str, Any] | None:
    """The result the bridge gives ``method``, or None when it is not one the bridge answers here."""
    if method == RUNTIME_PREFERENCES:
        return dict(NO_RUNTIME_FEATURES)
    if method == PROVIDER_HEADERS:
        return {"headersApplied": False, "errorMessage": NO_PROVIDER_HEADERS_REASON}
    if method == MCP_AUTH_HEADERS:
        return dict(MCP_AUTH_UNAVAILABLE)
    return None

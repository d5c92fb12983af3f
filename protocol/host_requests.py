"""What the bridge answers when the engine asks its host something (docs/backend-protocol.md §4, §11).

The engine sends requests of its own to whoever runs it. Ids are opaque JSON
values: the seed's engine numbers them, today's engine sends strings such as
``"server-17"``; an answer always echoes the id exactly as it came.

Requests nobody else handles are answered here, at arrival:

* ``session/requestRuntimePreferences`` — both shapes (``{}`` during an older
  create; ``{scope: "runtime-materialization", sessionId}`` on today's engine)
  get the same answer: none of the optional runtime features;
* ``interaction/requestProviderRuntimeHeaders`` — the bridge holds no provider
  credentials, so "nothing applied" with a reason the engine can show. An
  error answer here makes today's engine fail the create (or ask again and
  again), so it is never ``-32601``;
* ``interaction/requestOfficialMcpAuthHeaders`` — likewise, nothing applied.
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
    "zcode-acp does not hold provider credentials; the engine's own provider configuration applies"
)


def host_answer(method: str, params: Any) -> dict[str, Any] | None:
    """The result the bridge gives ``method``, or None when it is not one the bridge answers here."""
    if method == RUNTIME_PREFERENCES:
        return dict(NO_RUNTIME_FEATURES)
    if method == PROVIDER_HEADERS:
        return {"headersApplied": False, "errorMessage": NO_PROVIDER_HEADERS_REASON}
    if method == MCP_AUTH_HEADERS:
        return {"headersApplied": False}
    return None

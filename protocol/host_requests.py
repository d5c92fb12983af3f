"""What the bridge answers when the engine asks its host something (docs/backend-protocol.md §4, §11).

The engine sends requests of its own to whoever runs it. Ids are opaque JSON
values: the seed's engine numbers them, the 0.16 engine sends strings such as
``"server-17"``; an answer always echoes the id exactly as it came.

Requests nobody else handles are answered here, at arrival:

* ``session/requestRuntimePreferences`` — both shapes (``{}`` during an older
  create; ``{scope, sessionId}`` on the 0.16 engine) get the same strict answer:
  none of the optional runtime features, and
  ``askUserQuestionAutoResolutionEnabled: false`` said out loud — omitted, the
  engine reads it as true and lets questions answer themselves;
* ``interaction/requestProviderRuntimeHeaders`` — the 0.16 engine asks it before
  each model request, and only when it was started in host auth mode
  (``ZCODE_APP_SERVER_AUTH_MODE=host``); in its default standalone mode it uses
  the user's own ``zcode login`` and never asks. The bridge holds no ZCode
  account; what it can give is the Coding Plan API key the user keeps in their
  personal provider configuration (a provider rule whose ``access.type`` is
  ``zhipu-coding-plan-api-key``), else the one ``zcode-acp setup`` kept, as
  ``{headersApplied: true, requestAuth: {apiKey}}``. Without one it answers "nothing applied" with the text the
  engine shows the user when it fails that request (-32031): why, and what to
  do. Never an error answer: that makes the engine retry, then fail;
* ``interaction/requestOfficialMcpAuthHeaders`` — the engine's strict union:
  ``{ok: false, reason: "official_auth_unavailable"}`` (no ZCode account here).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .i18n import EN, t

RUNTIME_PREFERENCES = "session/requestRuntimePreferences"
PROVIDER_HEADERS = "interaction/requestProviderRuntimeHeaders"
MCP_AUTH_HEADERS = "interaction/requestOfficialMcpAuthHeaders"

NO_RUNTIME_FEATURES: dict[str, Any] = {
    "nativeSearchEnhancementsEnabled": False,
    "memoryEnabled": False,
    "askUserQuestionAutoResolutionEnabled": False,
}
# What the bridge tells the engine for every session it opens (create, load, resume): questions wait
# for the user. The engine's server-wide setting is true until this says otherwise (its server.ts),
# and it asks a session's runtime preferences only as it makes the session, so a session reopened in
# a new engine process would otherwise answer its questions by itself, empty (issue 32).
INTERACTION_PREFERENCES = "workspace/updateInteractionPreferences"


def interaction_preferences(workspace: dict[str, Any]) -> dict[str, Any]:
    return {"workspace": workspace, "preferences": {"askUserQuestionAutoResolutionEnabled": False}}


CODING_PLAN_ACCESS = "zhipu-coding-plan-api-key"
MCP_AUTH_UNAVAILABLE: dict[str, Any] = {"ok": False, "reason": "official_auth_unavailable"}


def coding_plan_key(config: Any, provider_id: Any = None) -> str | None:
    """The Coding Plan API key of a personal provider configuration, if it has one.

    The file's shape: ``{config: {providerConfigRules: {providerRules: [{providerId,
    enabled, config: {access: {type, apiKey}}}]}}}``. The rule of the provider the
    engine asks for wins; else the first enabled Coding Plan rule; else any.
    """
    rules = (((config or {}).get("config") or {}).get("providerConfigRules") or {}).get("providerRules") \
        if isinstance(config, dict) else None
    found = []
    for rule in rules if isinstance(rules, list) else []:
        access = ((rule.get("config") or {}).get("access") or {}) if isinstance(rule, dict) else {}
        key = access.get("apiKey") if isinstance(access, dict) else None
        if isinstance(access, dict) and access.get("type") == CODING_PLAN_ACCESS and isinstance(key, str) \
                and key.strip():
            found.append((rule.get("providerId") == provider_id, rule.get("enabled") is not False, key.strip()))
    return max(found, key=lambda item: item[:2])[2] if found else None


def provider_headers_answer(params: Any, provider_config: Any, own_key: str | None = None,
                            lang: str = EN) -> dict[str, Any]:
    """The engine's own configured key for the provider it asks for; else the one ``zcode-acp setup`` kept.

    Without one, the engine shows the user ``errorMessage`` as it is: it is in the user's ``lang``."""
    provider_id = params.get("providerId") if isinstance(params, dict) else None
    key = coding_plan_key(provider_config, provider_id) or own_key
    if key:
        return {"headersApplied": True, "requestAuth": {"apiKey": key}}
    return {"headersApplied": False, "errorMessage": t(lang, "host.no_provider_headers")}


def host_answer(method: str, params: Any, provider_config: Callable[[], Any] | None = None,
                own_key: Callable[[], str | None] | None = None, lang: str = EN) -> dict[str, Any] | None:
    """The result the bridge gives ``method``, or None when it is not one the bridge answers here.

    ``provider_config`` reads the user's personal provider configuration and ``own_key`` the key
    ``zcode-acp setup`` kept (both only called for a provider-headers request, so an edit applies
    to the next one).
    """
    if method == RUNTIME_PREFERENCES:
        return dict(NO_RUNTIME_FEATURES)
    if method == PROVIDER_HEADERS:
        return provider_headers_answer(params, provider_config() if provider_config else None,
                                       own_key() if own_key else None, lang)
    if method == MCP_AUTH_HEADERS:
        return dict(MCP_AUTH_UNAVAILABLE)
    return None

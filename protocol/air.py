"""The JetBrains AIR session extensions, as the two reference adapters speak them.

``@agentclientprotocol/claude-agent-acp`` 0.101.0 (``dist/air-extension.js``,
``dist/session-index/``, ``dist/session-failure-extension.js``, ``dist/goal-extension.js``)
and ``@agentclientprotocol/codex-acp`` 2.6.0 share these names and shapes; the golden
copy the tests compare against is ``tests/protocol/golden/air/reference.json``.
docs/protocol-mapping.md ("The AIR extension set") maps each to what the bridge does.

Discovery: a client that declares ``clientCapabilities._meta.jetbrains.air`` is an AIR
client; it lists what it wants in ``…air.capabilities``. The ``initialize`` answer then
carries a top-level ``_meta.jetbrains.air {version, capabilities, goal}``; every client
gets ``_meta.steering.supported``.
"""

from __future__ import annotations

from typing import Any

from .errors import invalid_params

AIR_VERSION = 1
GOAL_VERSION = 1
GOAL_CONTROL_METHOD = "_session/goal"
GOAL_ACTIONS = ("set", "pause", "resume", "clear")  # codex-acp's list: the engine has all four

SESSION_INDEX = "sessionIndex"
SESSION_BATCH_GET = "sessionBatchGet"
SESSION_ARCHIVE = "sessionArchive"
SESSION_RENAME = "sessionRename"
SESSION_LIST_SUBSCRIBE = "sessionListSubscribe"
SESSION_FAILURE = "sessionFailure"
# What comes with the session index, advertised only to a client that declares ``sessionIndex``.
INDEX_CAPABILITIES = (SESSION_INDEX, SESSION_BATCH_GET, SESSION_ARCHIVE, SESSION_RENAME, SESSION_LIST_SUBSCRIBE)

LIST_CHANGES_METHOD = "_session/list/changes"
ARCHIVED_FILTERS = ("unarchived", "archived", "all")

# Steering answers: the turn took the text; the host must send it as a prompt (it opted in
# with ``_meta.steering.idleBehavior: "promptRequired"``); the engine could not apply it.
INJECTED = "injected"
STARTED_NEW_TURN = "startedNewTurn"
PROMPT_REQUIRED = "promptRequired"
FAILED = "failed"
PROMPT_REQUIRED_BEHAVIOUR = "promptRequired"

# A typed failure's kind → its category and the actions the client may offer (both adapters).
FAILURE_POLICY: dict[str, tuple[str, tuple[str, ...]]] = {
    "quota_exhausted": ("limit", ()),
    "rate_limited": ("limit", ("retry",)),
    "context_exhausted": ("limit", ("new_session",)),
    "budget_exhausted": ("limit", ("new_session",)),
    "auth_required": ("access", ("login",)),
    "overloaded": ("service", ("retry",)),
    "provider_error": ("service", ("retry",)),
    "internal_error": ("service", ("retry", "new_session")),
    "transport_lost": ("connection", ("retry", "new_session")),
    "bad_request": ("request", ()),
}


def _record(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def air_meta(meta: Any) -> dict[str, Any] | None:
    """The ``jetbrains.air`` object inside a ``_meta``, or None when there is none."""
    air = _record(_record(meta).get("jetbrains")).get("air")
    return air if isinstance(air, dict) else None


def is_air_client(capabilities: Any) -> bool:
    return air_meta(_record(capabilities).get("_meta")) is not None


def client_declares(capabilities: Any, capability: str) -> bool:
    """The client's ``_meta.jetbrains.air`` has version ≥ 1 and lists ``capability``."""
    air = air_meta(_record(capabilities).get("_meta")) or {}
    version, declared = air.get("version"), air.get("capabilities")
    return (isinstance(version, int) and not isinstance(version, bool) and version >= AIR_VERSION
            and isinstance(declared, list) and capability in declared)


def with_air(meta: dict[str, Any] | None, key: str, value: Any) -> dict[str, Any]:
    """``meta`` with ``jetbrains.air.<key>`` set (and the extension's version), other keys kept."""
    meta = dict(meta or {})
    jetbrains = dict(_record(meta.get("jetbrains")))
    air = dict(_record(jetbrains.get("air")))
    air.update({"version": AIR_VERSION, key: value})
    jetbrains["air"] = air
    meta["jetbrains"] = jetbrains
    return meta


def initialize_meta(capabilities: Any) -> dict[str, Any]:
    """The ``initialize`` answer's top-level ``_meta``: steering for everyone, AIR for AIR clients."""
    meta: dict[str, Any] = {"steering": {"supported": True}}
    if not is_air_client(capabilities):
        return meta
    advertised = [SESSION_FAILURE]
    if client_declares(capabilities, SESSION_INDEX):
        advertised += INDEX_CAPABILITIES
    meta = with_air(meta, "capabilities", advertised)
    return with_air(meta, "goal", {"version": GOAL_VERSION, "controlMethod": GOAL_CONTROL_METHOD,
                                   "actions": list(GOAL_ACTIONS)})


def archived_filter(params: dict[str, Any]) -> str:
    """``session/list``'s ``_meta.jetbrains.air.list.archived``: omitted or null is ``unarchived``."""
    value = _record((air_meta(params.get("_meta")) or {}).get("list")).get("archived")
    value = "unarchived" if value is None else value
    if value not in ARCHIVED_FILTERS:
        raise invalid_params("_meta.jetbrains.air.list.archived", "invalid.must_be_one_of",
                             choices=", ".join(ARCHIVED_FILTERS))
    return str(value)


def keeps(filter_name: str, archived: bool) -> bool:
    return filter_name == "all" or (filter_name == "archived") == archived


def with_archived(info: dict[str, Any], archived: bool) -> dict[str, Any]:
    """A ``SessionInfo`` row with its archive state, where both adapters put it."""
    return {**info, "_meta": with_air(info.get("_meta"), "archived", archived)}


def session_ids(params: dict[str, Any]) -> list[str]:
    """``_session/batch_get``'s ``sessionIds``: distinct, non-blank strings."""
    ids = params.get("sessionIds")
    if (not isinstance(ids, list) or any(not isinstance(i, str) or not i.strip() for i in ids)
            or len(set(ids)) != len(ids)):
        raise invalid_params("sessionIds", "invalid.must_be_distinct_ids")
    return list(ids)


def steering_idle_behaviour(params: dict[str, Any]) -> str | None:
    """``_meta.steering.idleBehavior`` of a ``_session/steering`` request (only ``promptRequired``)."""
    behaviour = _record(_record(params.get("_meta")).get("steering")).get("idleBehavior")
    if behaviour is not None and behaviour != PROMPT_REQUIRED_BEHAVIOUR:
        raise invalid_params("_meta.steering.idleBehavior", "invalid.must_be_one_of", choices=PROMPT_REQUIRED_BEHAVIOUR)
    return behaviour


def failure_meta(failure_id: str, revision: int, kind: str, title: str, severity: str = "error") -> dict[str, Any]:
    """``_meta.jetbrains.air.sessionFailure {id, revision, category, severity, title, actions}``."""
    category, actions = FAILURE_POLICY.get(kind, ("unknown", ()))
    return with_air(None, SESSION_FAILURE, {
        "id": failure_id, "revision": revision, "category": category, "severity": severity,
        "title": title, "actions": list(actions) if severity == "error" else []})


def failure_update(failure_id: str, revision: int, kind: str, title: str) -> dict[str, Any]:
    """The ``session_info_update`` that carries a typed failure (both adapters send it so)."""
    return {"sessionUpdate": "session_info_update", "_meta": failure_meta(failure_id, revision, kind, title)}


# Words in an engine error that name its kind (code, type or message, lower-cased).
_KIND_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("quota_exhausted", ("quota", "insufficient_balance", "usage limit", "usage_limit", "余额", "额度")),
    ("rate_limited", ("rate limit", "rate_limit", "ratelimit", "too many requests", "429")),
    ("auth_required", ("unauthorized", "unauthenticated", "401", "login", "api key")),
    ("overloaded", ("overloaded", "529", "503", "unavailable")),
    ("context_exhausted", ("context window", "context_length", "context length", "too long")),
)


def failure_kind(data: Any) -> str:
    """The typed failure kind of a failed turn's error data (``backendCode``, ``errorType``,
    ``backendMessage``): ``quota_exhausted`` for a quota or balance the account ran out of."""
    data = _record(data)
    from .quota_failure import quota_reason  # a failed turn's: off the first session's path

    if quota_reason(data) is not None:  # the provider's quota codes come before any word
        return "quota_exhausted"
    words = " ".join(str(data.get(key, "")) for key in ("backendCode", "errorType", "backendMessage")).lower()
    for kind, needles in _KIND_WORDS:
        if any(needle in words for needle in needles):
            return kind
    return "provider_error"


def typed_failure(failure_id: str, data: Any, title: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A failed turn as the reference adapters end one, for a client that declared ``sessionFailure``:
    the ``session_info_update`` that carries it, and the prompt's ``end_turn`` result with the same
    ``_meta`` (the kind read from the error's ``data``). Both engine paths send these."""
    kind = failure_kind(data)
    return failure_update(failure_id, 1, kind, title), {"stopReason": "end_turn",
                                                        "_meta": failure_meta(failure_id, 1, kind, title)}

"""A turn the plan's limit stopped: how the bridge tells it from another model failure, and what it says.

The engine passes the provider's own business code and words through to ``turn.failed``'s error
(its failure classifier keeps ``providerErrorCode`` and the provider's message; a 429 is
``model_rate_limited``). The provider's codes that mean "the plan will not serve you now"
(docs/quota.md, "When the limit is hit"; Z.ai's error-code table and public reports):

* ``1308``: "Usage limit reached for 5 hour. Your limit will reset at …" (a window is used up);
* ``1309``: the GLM Coding Plan package has expired;
* ``1113``: "Insufficient balance or no resource package" (no plan or balance to charge).

Rate limits (``1302`` concurrency, ``1303`` frequency, ``1305`` overload) are not quota: the
engine retries them and they pass by themselves.

Such a failure becomes the RFD's ``quotaExceeded`` error (``-32003``, the RFD's placeholder until
ACP assigns a number), with ``data {poolId, meterId, resetsAt}`` from the QuotaWatch's snapshot,
and its message says which window is used up and when it resets, in the reader's language.

Pure: no I/O, no clocks (``now`` is given, with the snapshot it measures against).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from .errors import RpcError
from .i18n import t
from .quota import POOL_ID, Meter, QuotaSnapshot, exhausted_text, meter_label, reset_words, rfc3339

QUOTA_EXCEEDED = -32003  # the RFD's placeholder for ``quotaExceeded``
# The provider's business code → why the plan will not serve the request.
PROVIDER_QUOTA_CODES: dict[str, str] = {"1308": "window", "1309": "plan_expired", "1113": "balance"}
# The provider's words for the same, when a code is not passed on (English and Chinese answers).
_QUOTA_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("window", ("usage limit reached", "使用上限")),
    ("plan_expired", ("coding plan package has expired", "套餐已过期", "套餐已到期")),
    ("balance", ("insufficient balance", "no resource package", "余额不足", "无可用资源包")),
)
_CODE_TOKEN = re.compile(r"(?<!\d)(1308|1309|1113)(?!\d)")


def _record(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def quota_reason(data: Any) -> str | None:
    """``window``, ``plan_expired`` or ``balance`` when a failed turn's error data (``backendCode``,
    ``errorType``, ``backendMessage``, ``detail``) says the plan's limit stopped it; else None."""
    data = _record(data)
    code = str(data.get("backendCode") if data.get("backendCode") is not None else "").strip()
    if code in PROVIDER_QUOTA_CODES:
        return PROVIDER_QUOTA_CODES[code]
    words = " ".join(str(data.get(key) or "") for key in ("backendMessage", "detail")).lower()
    found = _CODE_TOKEN.search(words)
    if found:
        return PROVIDER_QUOTA_CODES[found.group(1)]
    for reason, needles in _QUOTA_WORDS:
        if any(needle in words for needle in needles):
            return reason
    return None


def quota_exceeded(error: RpcError, reason: str, snapshot: QuotaSnapshot | None, now: datetime | None,
                   lang: str) -> RpcError:
    """The ``quotaExceeded`` error for a failed turn's ``error`` (turn_end.failed's): the window that
    is used up and its reset from ``snapshot`` when it shows one, else the engine's own words."""
    data: dict[str, Any] = dict(_record(error.data))
    data["quotaReason"] = reason
    engine_words = str(data.get("backendMessage") or "")
    meter = snapshot.exhausted if snapshot is not None else None
    said = exhausted_text(snapshot, now, lang) if snapshot is not None and now is not None and reason == "window" \
        else None
    if said is not None and meter is not None:
        data.update({"poolId": POOL_ID, "meterId": meter.id})
        if meter.resets_at is not None:
            data["resetsAt"] = rfc3339(meter.resets_at)
        text = said
    else:
        text = t(lang, f"quota.failure.{reason}", message=engine_words or t(lang, "error.no_details"))
    return RpcError(QUOTA_EXCEEDED, text, data)


def reworded(typed: RpcError, snapshot: QuotaSnapshot | None, now: datetime | None, lang: str) -> RpcError:
    """A ``quotaExceeded`` error said before the snapshot was known (errors.from_backend_error's, the
    v4 path's), said again with it: the same words and ``data`` as the legacy Turn's."""
    data = _record(typed.data)
    return quota_exceeded(typed, str(data.get("quotaReason") or "window"), snapshot, now, lang)


def window_named(typed: RpcError, snapshot: QuotaSnapshot | None) -> Meter | None:
    """The used-up window a ``quotaExceeded`` error names (its ``meterId``), or None: it said the
    engine's words only (no snapshot, none at 100 %, not a window failure)."""
    meter = snapshot.exhausted if snapshot is not None else None
    if meter is None or _record(typed.data).get("meterId") != meter.id:
        return None
    return meter


def retry_armed_text(meter: Meter, now: datetime, lang: str) -> str:
    """The countdown of a retry at the window's reset: when, and how to stop it."""
    return t(lang, "quota.retry.armed", label=meter_label(meter, lang), reset=reset_words(meter.resets_at, now, lang))


def retry_now_text(meter: Meter, lang: str) -> str:
    return t(lang, "quota.retry.now", label=meter_label(meter, lang))

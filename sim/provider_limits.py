"""The GLM Coding Plan's limits as the engine reports them: the ``quota`` scenario (docs/simulator.md).

When the provider refuses a model request because the plan's limit is reached, the engine's turn
ends ``turn.failed`` with the provider's business code and words (its failure classifier keeps both;
an HTTP 429 is ``model_rate_limited``). The codes and texts are the provider's own, as Z.ai's
error-code table and public reports give them:

* ``1308``: a window is used up, "Usage limit reached for 5 hour. Your limit will reset at …";
* ``1309``: the plan has expired;
* ``1113``: no balance and no resource package (no plan to charge).

The classic dialect ends the turn ``{error: {code, message}}``; today's adds the engine's ``type``
(``model_rate_limited``) and ``turnPhase: "model_request"`` (sim/cli016.py); v4 carries the code in the
conversation's ``lastError`` (sim/v4/projection.py).
"""

from __future__ import annotations

import time
from typing import Any

ERROR_TYPE = "model_rate_limited"  # the engine's ModelErrorCode for the provider's 429
QUOTA_CODES = ("1308", "1309", "1113")
RESET_IN = 42 * 60  # seconds until the simulated window resets


def provider_message(code: str, window: str = "5 hour", lang: str = "en", now: float | None = None,
                     until: float | None = None) -> str:
    reset = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(until or (now or time.time()) + RESET_IN))
    if lang.startswith("zh"):
        return {
            "1308": f"已达到 {window.replace(' hour', ' 小时')}的使用上限。您的限额将在 {reset} 重置。",
            "1309": "您的 GLM Coding Plan 套餐已过期，暂时无法使用，续订后即可恢复使用。",
            "1113": "余额不足或无可用资源包,请充值。",
        }[code]
    return {
        "1308": f"Usage limit reached for {window}. Your limit will reset at {reset}",
        "1309": "Your GLM Coding Plan package has expired and is temporarily unavailable. You can resume "
                "using it after renewing the subscription on the official website.",
        "1113": "Insufficient balance or no resource package. Please recharge.",
    }[code]


def error_type(code: Any) -> str | None:
    """Today's ``error.type`` for a provider's quota code (None: not one)."""
    return ERROR_TYPE if str(code) in QUOTA_CODES else None


def _until(params: dict[str, str]) -> float | None:
    try:
        return float(params["until"]) if "until" in params else None
    except ValueError:
        return None


def quota(params: dict[str, str]) -> list[dict[str, Any]]:
    """The turn streams a little, then the provider refuses the next model request (code=1308|1309|1113).

    ``until=EPOCH_SECONDS``: the window resets then, and a turn run from then on (the same prompt
    again: a ``retryTurn`` re-runs the turn from its user input) is served, as the provider serves
    a plan whose window has reset."""
    code = params.get("code", "1308")
    if code not in QUOTA_CODES:
        code = "1308"
    until = _until(params)
    if until is not None and time.time() >= until:
        return [{"type": "text", "text": "The window has reset: here is the answer."}]
    return [{"type": "text", "text": "Working on it… "},
            {"type": "fail", "code": code,
             "message": provider_message(code, params.get("window", "5 hour"), params.get("lang", "en"), until=until)}]

"""How a backend turn's end becomes the prompt's answer (docs/backend-protocol.md §6, "turn.completed").

The engine ends every turn with ``turn.completed {resultType}`` or
``turn.failed {error, turnPhase}``. ``resultType`` is one of ``success``,
``cancelled`` (a user's stop), or an error ending; each maps to an ACP stop
reason, or — for ``error_during_execution`` — to an error that carries the
engine's own words. The engine retries transient model failures itself
(``streamRecovery.updated``, API retries) and has already stored the user's
message, so a ``turn.failed`` is final: the bridge never sends the prompt again.

Pure: no I/O, no clocks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import INTERNAL_ERROR, RpcError
from .i18n import EN, t

# resultType → (ACP stop reason, the catalog key of the notice the user reads above the answer, or "").
STOP_REASONS: dict[str, tuple[str, str]] = {
    "success": ("end_turn", ""),
    "cancelled": ("cancelled", ""),
    "error_max_turns": ("max_turn_requests", "notice.max_turns"),
    "error_max_tool_calls": ("max_turn_requests", "notice.max_tool_calls"),
    "error_max_budget": ("max_tokens", "notice.max_budget"),
}
EXECUTION_ERROR = "error_during_execution"


@dataclass(frozen=True, slots=True)
class TurnEnd:
    stop_reason: str | None  # None: the prompt fails with ``error``
    notice: str = ""
    error: RpcError | None = None


def completed(body: dict[str, Any], lang: str = EN) -> TurnEnd:
    """``turn.completed``'s payload → the prompt's ending."""
    result_type = body.get("resultType")
    if result_type == EXECUTION_ERROR:
        response = body.get("response")
        words = response.strip() if isinstance(response, str) and response.strip() else t(lang, "error.no_details")
        return TurnEnd(None, error=RpcError(
            INTERNAL_ERROR, t(lang, "error.turn_execution", message=words),
            {"resultType": result_type, "backendMessage": words}))
    stop, notice = STOP_REASONS.get(result_type if isinstance(result_type, str) else "", ("end_turn", ""))
    return TurnEnd(stop, t(lang, notice) if notice else "")


def failed(body: dict[str, Any], lang: str = EN) -> RpcError:
    """``turn.failed``'s payload → the prompt's error, in the engine's words.

    The 0.16 engine sends ``error: {type, message, code?, detail?, retryable?}``
    and ``turnPhase``; the seed's sent ``error: {code, message}``.
    """
    error = body.get("error")
    error = error if isinstance(error, dict) else {"message": str(error) if error is not None else ""}
    message = error.get("message") if isinstance(error.get("message"), str) and error.get("message") \
        else t(lang, "error.turn_failed_plain")
    code = error.get("code") if error.get("code") is not None else error.get("type")
    detail = error.get("detail") if isinstance(error.get("detail"), str) and error.get("detail") else None
    text = t(lang, "error.turn_failed", message=message) + (f" ({code})" if code is not None else "")
    if detail and detail != message:
        text += f": {detail}"
    data: dict[str, Any] = {"backendCode": code, "backendMessage": message}
    for key, value in (("errorType", error.get("type")), ("turnPhase", body.get("turnPhase")),
                       ("retryable", error.get("retryable")), ("detail", detail)):
        if value is not None:
            data[key] = value
    return RpcError(INTERNAL_ERROR, text, data)

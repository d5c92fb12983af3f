"""Token usage: backend ``turn.completed.usage`` and ``session.updated`` → ACP."""

from __future__ import annotations

from typing import Any


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def prompt_usage(usage: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """``(usage, zcode_meta)`` for the ``session/prompt`` result, or None.

    The backend's ``inputTokens`` include cached tokens; ACP's are
    cache-exclusive, so the cached reads and writes are taken out.
    """
    if not isinstance(usage, dict) or not usage:
        return None
    cache_read = _int(usage.get("cacheReadTokens"))
    cache_write = _int(usage.get("cacheWriteTokens"))
    input_tokens = max(0, _int(usage.get("inputTokens")) - cache_read - cache_write)
    output_tokens = _int(usage.get("outputTokens"))
    total = _int(usage.get("totalTokens")) or input_tokens + cache_read + cache_write + output_tokens
    acp = {
        "inputTokens": input_tokens,
        "outputTokens": output_tokens,
        "totalTokens": total,
        "thoughtTokens": _int(usage.get("reasoningTokens")),
        "cachedReadTokens": cache_read,
        "cachedWriteTokens": cache_write,
    }
    meta = {
        key: usage[key]
        for key in ("source", "modelRequestCount", "webFetchRequests", "webSearchRequests")
        if key in usage
    }
    return acp, meta


def prompt_result(stop_reason: str, usage: Any = None) -> dict[str, Any]:
    result: dict[str, Any] = {"stopReason": stop_reason}
    mapped = prompt_usage(usage)
    if mapped:
        result["usage"] = mapped[0]
        if mapped[1]:
            result["_meta"] = {"zcode": {"usage": mapped[1]}}
    return result


def context_usage_update(payload: Any) -> dict[str, Any] | None:
    """``session.updated {usage, contextWindow}`` → ``usage_update``, if it is one."""
    if not isinstance(payload, dict) or "taskId" in payload:
        return None
    usage = payload.get("usage")
    window = payload.get("contextWindow")
    if not isinstance(usage, dict) or not isinstance(window, int):
        return None
    used = usage.get("contextUsed", usage.get("inputTokens"))
    return {"sessionUpdate": "usage_update", "used": _int(used), "size": _int(window)}


def read_usage_update(result: Any) -> dict[str, Any] | None:
    """``session/read`` → the context meter: what the context holds now, never cumulative tokens.

    The 0.16 engine reports the occupancy as ``runtime.contextUsage {used, size}``
    (its ``projection.totalTokenCount`` and ``session/usage`` count every
    request's input again); the seed's engine as ``projection.contextUsed``.
    """
    if not isinstance(result, dict):
        return None
    runtime = result.get("runtime")
    context = runtime.get("contextUsage") if isinstance(runtime, dict) else None
    if isinstance(context, dict) and isinstance(context.get("size"), int) and "used" in context:
        return {"sessionUpdate": "usage_update", "used": _int(context.get("used")), "size": _int(context.get("size"))}
    return projection_usage_update(result.get("projection"))


def projection_usage_update(projection: Any) -> dict[str, Any] | None:
    """``session/read`` projection → ``usage_update`` (used after a history replay)."""
    if not isinstance(projection, dict):
        return None
    window = projection.get("contextWindow")
    if not isinstance(window, int):
        return None
    return {"sessionUpdate": "usage_update", "used": _int(projection.get("contextUsed")), "size": _int(window)}

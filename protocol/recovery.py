"""The engine's own retries, shown to the user while they last (docs/decisions.md, "Retries the engine makes itself").

The 0.16 engine retries a failed model request itself and recovers an
interrupted stream itself; the bridge never sends the prompt again. What it
reports, read from its public source:

* an API retry rides on ``session.updated`` as ``_meta.zcode.apiRetry``
  ``{kind: "api_retry", attempt, maxRetries, retryDelayMs, errorStatus, error}``
  (also ``apiRetry`` or ``runtime.apiRetry`` at the top); ``null`` once a
  request succeeds;
* stream recovery is a run of ``streamRecovery.updated`` events without a
  discriminator: started ``{failureKind, message, retryNumber, maxRetries}``,
  anchor selected, tail discarded ``{discardedTextBytes, …}``, retry started
  ``{retryNumber, maxRetries, streamMode}``, blocked ``{reason, message}``;
  it is over when the model makes progress again.

ACP has no transient status line, so an episode is one tool card (kind
``other``) that opens ``in_progress``, retitles on each attempt, and closes
``completed`` when the model makes progress again (``failed`` if recovery is
blocked or the turn fails). Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

from . import updates
from .i18n import EN, t

CARD_PREFIX = "zcode-retry-"
_MISSING = object()


def api_retry(body: dict[str, Any]) -> Any:
    """The payload's API retry status (a dict, or None when cleared), or ``_MISSING``."""
    for holder in (body, body.get("runtime"), (body.get("_meta") or {}).get("zcode")
                   if isinstance(body.get("_meta"), dict) else None):
        if isinstance(holder, dict) and "apiRetry" in holder:
            value = holder["apiRetry"]
            return value if isinstance(value, dict) or value is None else _MISSING
    return _MISSING


def _count(title: str, value: Any, total: Any, lang: str = EN) -> str:
    if isinstance(value, int) and isinstance(total, int) and total >= value:
        return t(lang, "recovery.count", title=title, attempt=value, total=total)
    return t(lang, "recovery.attempt", title=title, attempt=value) if isinstance(value, int) else title


class RetryCard:
    """One card per retry episode of one turn."""

    def __init__(self, prefix: str, lang: str = EN) -> None:
        self.prefix = prefix
        self.lang = lang
        self.episodes = 0
        self.card_id: str | None = None
        self.title = ""
        self.streaming = False  # the open episode includes stream recovery (apiRetry: null does not end it)

    @property
    def open(self) -> bool:
        return self.card_id is not None

    def _show(self, title: str, content: str = "") -> list[dict[str, Any]]:
        extra: dict[str, Any] = {}
        if content:
            extra["content"] = [{"type": "content", "content": {"type": "text", "text": content}}]
        if self.card_id is None:
            self.episodes += 1
            self.card_id = f"{CARD_PREFIX}{self.prefix}-{self.episodes}"
            self.title = title
            return [{**updates.tool_call(self.card_id, title, "other", "in_progress", {"zcodeRetry": True},
                                         raw_input={}), **extra}]
        if title == self.title and not extra:
            return []
        self.title = title
        return [updates.tool_call_update(self.card_id, title=title, **extra)]

    def close(self, status: str = "completed") -> list[dict[str, Any]]:
        if self.card_id is None:
            return []
        update = updates.tool_call_update(self.card_id, status=status)
        if status == "completed":
            # A finished card must not keep an interim title ("… (2/10) in 3s"): it says how it ended.
            update["title"] = t(self.lang, "recovery.stream_done" if self.streaming else "recovery.done")
        self.card_id, self.streaming = None, False
        return [update]

    def session_updated(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        status = api_retry(body)
        if status is _MISSING:
            return []
        if status is None:
            return [] if self.streaming else self.close()  # the request went through
        title = _count(t(self.lang, "recovery.retrying"), status.get("attempt"), status.get("maxRetries"), self.lang)
        delay = status.get("retryDelayMs")
        if isinstance(delay, int) and delay >= 1000:
            title = t(self.lang, "recovery.delay", title=title, seconds=round(delay / 1000))
        error = status.get("error")
        return self._show(title + (f": {error}" if isinstance(error, str) and error else ""))

    def stream_recovery(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        self.streaming = True
        reason = body.get("reason")
        if reason in ("running_side_effect", "unknown_side_effect", "non_retryable_failure"):
            message = body.get("message") if isinstance(body.get("message"), str) else str(reason)
            return self._show(t(self.lang, "recovery.blocked", message=message)) + self.close("failed")
        discarded = body.get("discardedTextBytes")
        if isinstance(discarded, int) and discarded > 0:
            return self._show(self.title or t(self.lang, "recovery.recovering"), t(self.lang, "recovery.discarded"))
        if "retryNumber" in body:
            return self._show(_count(t(self.lang, "recovery.recovering"), body.get("retryNumber"),
                                     body.get("maxRetries"), self.lang))
        return self._show(self.title or t(self.lang, "recovery.recovering"))

    def progress(self) -> list[dict[str, Any]]:
        """The model produced output again: the episode is over."""
        return self.close() if self.card_id is not None else []

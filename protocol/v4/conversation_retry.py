"""The engine's own retries on the v4 path: ``control.apiRetry`` → the retry card.

On v4 the engine projects both of its recoveries into one key: an API request it
retries (``attempt``/``maxAttempts``, ``nextRetryAt``, a ``reasonCode`` such as
``fault.provider.rateLimited``) and an interrupted model stream it recovers (the same
shape, a ``fault.network.sse…`` code). It clears the key when a request goes through
or the model makes progress again, and at the turn's end. The client sees what the
legacy path shows (docs/decisions.md, "Error endings and the engine's own retries"):
one card per episode, opened on the first retry, retitled on each attempt, closed
``completed`` when the key is cleared, ``failed`` when the turn fails with it open.

Pure: no I/O, no clock (so the title does not say how long the engine waits: ``nextRetryAt``
would need one).
"""

from __future__ import annotations

from typing import Any

from ..i18n import EN, t
from ..recovery import RetryCard

STREAM_CODES = "fault.network.sse"
"""Reason codes of an interrupted model stream (``sseDisconnected``, ``sseStalled``)."""


def count_title(title: str, attempt: Any, total: Any, lang: str = EN) -> str:
    if isinstance(attempt, int) and isinstance(total, int) and total >= attempt:
        return t(lang, "recovery.count", title=title, attempt=attempt, total=total)
    return t(lang, "recovery.attempt", title=title, attempt=attempt) if isinstance(attempt, int) else title


class ApiRetryCard(RetryCard):
    def __init__(self, prefix: str, lang: str = EN) -> None:
        super().__init__(prefix, lang)
        self.shown: dict[str, Any] | None = None

    def changed(self, api_retry: Any) -> list[dict[str, Any]]:
        """``control.apiRetry`` is now ``api_retry`` (a dict, or None: cleared)."""
        retry = api_retry if isinstance(api_retry, dict) else None
        if retry == self.shown:
            return []
        self.shown = retry
        if retry is None:
            return self.close()
        reason = retry.get("reasonCode")
        code = reason if isinstance(reason, str) else ""
        stream = code.startswith(STREAM_CODES)
        self.streaming = stream  # how the card's episode is retitled when it closes
        title = count_title(t(self.lang, "recovery.recovering" if stream else "recovery.retrying"),
                            retry.get("attempt"), retry.get("maxAttempts"), self.lang)
        return self._show(f"{title}: {code}" if code and not stream else title)

    def turn_ended(self, failed: bool) -> list[dict[str, Any]]:
        self.shown = None
        return self.close("failed" if failed else "completed")

"""The v4 wait-and-retry's countdown (actors/session/v4/quota.py; docs/quota.md, "Wait and retry").

V4Quota is a plain part of the Session: it is driven here through a recording port, its timers
collected rather than run, so minutes of countdown take no time."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from zcode_acp.actors.session.v4.quota import COUNTDOWN_AT_SECONDS, RETRY_SLACK_SECONDS, V4Quota
from zcode_acp.config.settings import Config
from zcode_acp.protocol.quota import Meter

ROWS = [{"rowId": 7, "entityId": "reply-7", "turnId": "t-1", "actions": {"canRetry": True}}]


class Port:
    """What V4Quota uses of its Session: what it delivers and the timers it asks for."""

    def __init__(self) -> None:
        self.config = replace(Config(), quota_retry=True)
        self.session_id, self.backend_session_id, self.capabilities = "acp-1", "sess-1", {}
        self.texts: list[str] = []
        self.timers: list[float] = []  # delays asked for, in seconds

    def deliver(self, updates: list[dict[str, Any]]) -> None:
        self.texts += [update["content"]["text"] for update in updates]

    def remind(self, delay: float, message: Any) -> None:
        self.timers.append(delay)


class Commands:
    def __init__(self) -> None:
        self.sent: list[Any] = []

    def send(self, command: Any, then: Any) -> None:
        self.sent.append(command)


def armed(minutes_left: float) -> tuple[V4Quota, Port, Commands, float]:
    port, commands = Port(), Commands()
    quota = V4Quota(port, commands, lambda: ROWS, lambda answers, ended: None)  # type: ignore[arg-type]
    resets_at = datetime.now(UTC) + timedelta(minutes=minutes_left)
    quota._arm(Meter("five_hour", "PT5H", 100.0, resets_at))
    due_ms = resets_at.timestamp() * 1000.0 + RETRY_SLACK_SECONDS * 1000.0
    return quota, port, commands, due_ms


def test_a_long_wait_is_said_again_at_each_mark_left_and_retried_at_the_reset():
    quota, port, commands, due_ms = armed(90.5)
    assert len(port.texts) == 1 and "(in 1 h 30 min)" in port.texts[0]
    for left in COUNTDOWN_AT_SECONDS:  # 60, 30, 10, 5 and 1 minute(s) before the retry
        quota.expire(due_ms - left * 1000.0)
    assert len(port.texts) == 1 + len(COUNTDOWN_AT_SECONDS) and not commands.sent
    # The window resets RETRY_SLACK_SECONDS before the retry: a minute short of each mark.
    assert [text.split("(in ")[1].split(")")[0] for text in port.texts[1:]] == [
        "59 min", "29 min", "9 min", "4 min", "1 min"]
    quota.expire(due_ms)
    assert len(commands.sent) == 1 and "has reset" in port.texts[-1]
    assert len(port.timers) == 1 + len(COUNTDOWN_AT_SECONDS)  # one timer per mark, then the reset's


def test_a_timer_that_is_not_the_countdowns_says_nothing():
    quota, port, commands, due_ms = armed(90)
    quota.expire(time.time() * 1000.0)  # the feed's own expiry, long before the first mark
    assert len(port.texts) == 1 and len(port.timers) == 1 and not commands.sent


def test_a_short_wait_has_only_the_marks_still_ahead_of_it():
    quota, port, commands, due_ms = armed(7)  # 5 and 1 minute(s) left are ahead; 10 is not
    quota.expire(due_ms - 300_000.0)
    quota.expire(due_ms - 60_000.0)
    quota.expire(due_ms - 30_000.0)  # past every mark: nothing more until the reset
    assert len(port.texts) == 3


def test_a_cancel_stops_the_countdown_and_sends_nothing_at_the_reset():
    quota, port, commands, due_ms = armed(20)
    quota.cancel()
    quota.expire(due_ms - 600_000.0)
    quota.expire(due_ms)
    assert not commands.sent and "cancelled" in port.texts[-1] and len(port.texts) == 2

"""A turn the plan's limit stopped (protocol/quota_failure.py): the provider's quota codes, in the
shapes each engine dialect ends a turn with, become the RFD's ``quotaExceeded`` naming the window."""

from __future__ import annotations

from datetime import datetime, timedelta, UTC

import pytest

from zcode_acp.protocol import air, turn_end
from zcode_acp.protocol.errors import from_backend_error
from zcode_acp.protocol.quota import parse_quota
from zcode_acp.protocol.quota_failure import QUOTA_EXCEEDED, quota_exceeded, quota_reason
from zcode_acp.sim.provider_limits import provider_message

NOW = datetime(2026, 12, 2, 4, 0, tzinfo=UTC)
RESET = NOW + timedelta(minutes=42)
REASONS = {"1308": "window", "1309": "plan_expired", "1113": "balance"}


def snapshot(five_hour: float, weekly: float = 30.0):
    reset_ms = int(RESET.timestamp() * 1000)
    return parse_quota({"data": {"limits": [
        {"type": "TOKENS_LIMIT", "unit": 3, "number": 5, "percentage": five_hour, "nextResetTime": reset_ms},
        {"type": "TOKENS_LIMIT", "unit": 6, "number": 1, "percentage": weekly, "nextResetTime": reset_ms}]}}, NOW)


def classic_end(code: str, lang: str = "en") -> dict:
    return {"error": {"code": code, "message": provider_message(code, lang=lang)}}


def today_end(code: str, lang: str = "en") -> dict:
    return {"error": {"type": "model_rate_limited", "code": code, "message": provider_message(code, lang=lang)},
            "turnPhase": "model_request"}


@pytest.mark.parametrize("code", sorted(REASONS))
@pytest.mark.parametrize("shape", [classic_end, today_end], ids=["classic", "cli016"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_provider_quota_code_is_a_quota_failure_in_both_dialects(code, shape, lang):
    error = turn_end.failed(shape(code, lang))
    assert quota_reason(error.data) == REASONS[code]
    assert air.failure_kind(error.data) == "quota_exhausted"


@pytest.mark.parametrize("code", sorted(REASONS))
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_provider_words_alone_are_enough(code, lang):
    # An engine that passes on the words but not the code (a wrapped provider error).
    data = {"backendCode": "model_rate_limited", "backendMessage": provider_message(code, lang=lang)}
    assert quota_reason(data) == REASONS[code]


@pytest.mark.parametrize("code", ["1302", "1303", "1305", "model_rate_limited", "context_overflow", None])
def test_rate_limits_and_other_failures_are_not_quota(code):
    assert quota_reason({"backendCode": code, "backendMessage": "High concurrency usage of this API"}) is None


def test_a_used_up_window_names_itself_and_its_reset_with_the_rfd_data():
    error = quota_exceeded(turn_end.failed(today_end("1308")), "window", snapshot(100), NOW, "en")
    assert error.code == QUOTA_EXCEEDED == -32003
    assert error.message.startswith("The GLM Coding Plan's 5-hour window is used up; it resets at ")
    assert "(in 42 min)" in error.message
    assert error.data["poolId"] == "plan" and error.data["meterId"] == "five_hour"
    assert error.data["resetsAt"] == "2026-12-02T04:42:00.000Z"
    assert error.data["backendCode"] == "1308"  # the engine's own words stay inspectable
    assert "Usage limit reached" in error.data["backendMessage"]


def test_the_weekly_window_is_named_when_it_is_the_one_used_up():
    error = quota_exceeded(turn_end.failed(classic_end("1308")), "window", snapshot(40, 100), NOW, "en")
    assert error.data["meterId"] == "weekly" and "Weekly window is used up" in error.message


def test_in_chinese():
    error = quota_exceeded(turn_end.failed(today_end("1308", "zh"), "zh-CN"), "window", snapshot(100), NOW, "zh-CN")
    assert error.message.startswith("GLM Coding Plan 的5 小时窗口已用完")
    error = quota_exceeded(turn_end.failed(today_end("1113", "zh"), "zh-CN"), "balance", None, None, "zh-CN")
    assert error.message.startswith("账户没有可用的 Coding Plan 套餐或余额：余额不足")


def test_without_a_snapshot_showing_it_the_engine_words_are_said():
    # A stale or missing snapshot cannot say which window: the provider's words (they hold the reset).
    for shown in (None, snapshot(97)):
        error = quota_exceeded(turn_end.failed(classic_end("1308")), "window", shown, NOW, "en")
        assert error.code == -32003 and "meterId" not in error.data
        assert error.message.startswith("The GLM Coding Plan's usage limit is reached: Usage limit reached for 5 hour")


@pytest.mark.parametrize("code", ["1309", "1113"])
def test_an_expired_plan_or_no_balance_says_so_even_with_a_full_window(code):
    error = quota_exceeded(turn_end.failed(today_end(code)), REASONS[code], snapshot(100), NOW, "en")
    assert error.code == -32003 and "meterId" not in error.data
    assert ("expired" if code == "1309" else "no Coding Plan or balance") in error.message


@pytest.mark.parametrize("code", sorted(REASONS))
def test_the_v4_last_error_is_typed_too(code):
    error = from_backend_error({"code": code, "message": provider_message(code)}, "session/prompt")
    assert error.code == -32003 and error.data["quotaReason"] == REASONS[code]
    assert from_backend_error({"code": "1302", "message": "slow down"}, "session/prompt").code == -32603


def test_the_seeds_busy_answer_is_not_quota():
    # The seed's app-server answers a send while a turn runs with JSON-RPC error 1308 (a number).
    assert from_backend_error({"code": 1308, "message": "prompt is running"}, "session/compact").code == -32603

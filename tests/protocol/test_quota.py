"""The Coding Plan's quota as the provider sends it, said the ACP way (protocol/quota.py)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, UTC
from pathlib import Path

import pytest

from zcode_acp.protocol.i18n import EN, ZH_CN
from zcode_acp.protocol.quota import QuotaUnavailable, crossed, exhausted_text, meter_line, parse_quota, \
    snapshot_json

FIXTURES = Path(__file__).parent.parent / "fixtures" / "quota"
NOW = datetime(2026, 2, 9, 12, 0, tzinfo=UTC)


def fixture(name: str) -> object:
    return json.loads((FIXTURES / name).read_text())


def test_a_current_plan_has_three_windows_in_the_providers_order():
    snapshot = parse_quota(fixture("zai-three-windows.json"), NOW)
    assert [(m.id, m.window, m.used_percent) for m in snapshot.meters] == [
        ("five_hour", "PT5H", 15.0), ("weekly", "P7D", 53.0), ("mcp_monthly", "P1M", 46.0)]
    five_hour = snapshot.meters[0]
    assert five_hour.resets_at == datetime.fromtimestamp(1770648402389 / 1000, tz=UTC)
    assert (five_hour.used, five_hour.limit, five_hour.remaining) == (127694464, 800000000, 672305536)
    assert snapshot.level == "pro" and snapshot.exhausted is None


def test_what_the_provider_did_not_report_stays_absent():
    snapshot = parse_quota(fixture("older-plan.json"), NOW)
    mcp, tokens = snapshot.meters
    assert (mcp.id, mcp.used_percent, mcp.used, mcp.limit) == ("mcp_monthly", None, 68, 1000)  # no share made up
    assert (tokens.id, tokens.window, tokens.resets_at) == ("tokens", None, None)
    meters = snapshot_json(snapshot, EN)["pools"][0]["meters"]
    assert "usedPercent" not in meters[0] and "status" not in meters[0]
    assert "window" not in meters[1] and "resetsAt" not in meters[1]


def test_the_snapshot_has_the_rfd_shape():
    document = snapshot_json(parse_quota(fixture("five-hour-exhausted.json"), NOW), EN)
    assert document["updatedAt"] == "2026-02-09T12:00:00.000Z"
    [pool] = document["pools"]
    assert (pool["id"], pool["state"]) == ("plan", "exhausted")
    five_hour, weekly, mcp = pool["meters"]
    assert five_hour == {"id": "five_hour", "label": "5-hour window", "usedPercent": 100.0, "window": "PT5H",
                         "resetsAt": "2026-03-31T14:33:14.803Z", "status": "exceeded"}
    assert weekly["status"] == "ok" and mcp["used"] == {"value": "224"} and mcp["limit"] == {"value": "1000"}
    for meter in pool["meters"]:  # the RFD: a meter carries at least one value
        assert {"usedPercent", "used", "remaining", "status"} & set(meter)


@pytest.mark.parametrize("answer, reason", [
    (fixture("key-refused.json"), "quota.error.key_refused"),
    ({"code": 500, "msg": "Only GLM Coding Plan subscribers can query", "success": False}, "quota.error.no_plan"),
    ({"code": 1302, "msg": "busy", "success": False}, "quota.error.provider"),
    ({"data": {}}, "quota.error.shape"),
    ([1, 2], "quota.error.shape"),
])
def test_an_answer_without_quota_says_why(answer, reason):
    with pytest.raises(QuotaUnavailable) as refused:
        parse_quota(answer, NOW)
    assert refused.value.reason == reason


def test_broken_entries_are_skipped_and_the_rest_kept():
    snapshot = parse_quota({"data": {"limits": ["x", {"type": "TOKENS_LIMIT", "unit": 3, "number": 5},
                                                {"type": "TOKENS_LIMIT", "unit": 6, "number": 1,
                                                 "percentage": True},
                                                {"type": "TOKENS_LIMIT", "unit": 3, "number": 5,
                                                 "percentage": 7, "nextResetTime": "soon"}]}}, NOW)
    assert [(m.id, m.used_percent, m.resets_at) for m in snapshot.meters] == [("five_hour", 7.0, None)]


def test_one_line_per_window_in_both_languages():
    answer = fixture("percent-only.json")
    answer["data"]["limits"][1]["nextResetTime"] = int((NOW + timedelta(hours=2, minutes=5)).timestamp() * 1000)
    snapshot = parse_quota(answer, NOW)
    english = meter_line(snapshot.meters[1], NOW, EN)
    chinese = meter_line(snapshot.meters[1], NOW, ZH_CN)
    assert english.startswith("5-hour window: 13% used, resets at ") and english.endswith("(in 2 h 5 min)")
    assert chinese.startswith("5 小时窗口：已用 13%，") and chinese.endswith("重置（还有 2 小时 5 分钟）")


def test_the_user_hears_of_each_level_once_and_again_after_a_reset():
    def at(percent: float):
        return parse_quota({"data": {"limits": [{"type": "TOKENS_LIMIT", "unit": 3, "number": 5,
                                                  "percentage": percent}]}}, NOW)
    assert crossed(None, at(50)) == []
    assert [level for _m, level in crossed(at(50), at(82))] == [80.0]
    assert crossed(at(82), at(90)) == []
    assert [level for _m, level in crossed(at(90), at(100))] == [100.0]  # 95 and 100 at once: the highest
    assert crossed(at(100), at(3)) == []  # the window reset: quiet
    assert [level for _m, level in crossed(at(3), at(81))] == [80.0]  # and armed again
    assert [level for _m, level in crossed(None, at(96))] == [95.0]  # a first look counts from 0


def test_a_limit_hit_says_which_window_and_when_it_resets():
    answer = fixture("five-hour-exhausted.json")
    answer["data"]["limits"][0]["nextResetTime"] = int((NOW + timedelta(minutes=42)).timestamp() * 1000)
    snapshot = parse_quota(answer, NOW)
    assert exhausted_text(snapshot, NOW, EN).startswith("The GLM Coding Plan's 5-hour window is used up; it resets at ")
    assert exhausted_text(snapshot, NOW, EN).endswith("(in 42 min).")
    assert "5 小时窗口已用完" in exhausted_text(snapshot, NOW, ZH_CN)
    assert exhausted_text(parse_quota(fixture("zai-three-windows.json"), NOW), NOW, EN) is None


def test_every_snapshot_passes_the_rfds_schema():
    from tests.schema import assert_valid_draft
    from zcode_acp.protocol.quota import quota_update

    for name in ("zai-three-windows.json", "percent-only.json", "older-plan.json", "five-hour-exhausted.json"):
        for lang in (EN, ZH_CN):
            document = snapshot_json(parse_quota(fixture(name), NOW), lang)
            assert_valid_draft("QuotaSnapshot", document)
            assert_valid_draft("QuotaUpdate", quota_update(document))


def test_the_rfds_schema_refuses_a_meter_with_no_value_and_a_bad_reset_time():
    import jsonschema

    from tests.schema import assert_valid_draft

    good = {"updatedAt": "2026-02-09T12:00:00.000Z", "pools": [{"id": "plan", "meters": [{"id": "weekly",
                                                                                         "usedPercent": 5}]}]}
    assert_valid_draft("QuotaSnapshot", good)
    for broken in ({"id": "weekly"}, {"id": "weekly", "usedPercent": 5, "resetsAt": "tomorrow"},
                   {"id": "weekly", "used": {"value": 5}}):
        with pytest.raises(jsonschema.ValidationError):
            assert_valid_draft("QuotaSnapshot", {**good, "pools": [{"id": "plan", "meters": [broken]}]})

"""A turn the GLM Coding Plan's limit stopped, end to end: the simulator ends it with the provider's
quota code as each engine dialect does (sim/provider_limits.py), a local fake of the quota endpoint
says the 5-hour window is used up, and the prompt fails with the RFD's quotaExceeded naming the
window and its reset (docs/quota.md, "When the limit is hit")."""

from __future__ import annotations

import json
import os

import pytest
from acp import RequestError

from tests.process.harness import bridge, run
from tests.protocol.test_air import GOLDEN
from tests.quota_server import QuotaServer
from zcode_acp.config.coding_plan import key_path, save_plan_key

KEY = "plan-key-0123456789abcdef-SECRET"
AIR_CAPS = GOLDEN["discovery"]["client_declares"]
USED_UP = {"code": 200, "success": True, "data": {"level": "pro", "limits": [
    {"type": "TOKENS_LIMIT", "unit": 3, "number": 5, "percentage": 100, "nextResetTime": 4102444800000},
    {"type": "TOKENS_LIMIT", "unit": 6, "number": 1, "percentage": 40, "nextResetTime": 4102444800000}]}}
REASONS = {"1308": "window", "1309": "plan_expired", "1113": "balance"}


def v4() -> bool:
    return os.environ.get("ZCODE_ACP_ENGINE_API") == "v4"


@pytest.fixture
def plan(tmp_path):
    save_plan_key(key_path({}, tmp_path), "zai", KEY)  # HOME is tmp_path in the harness
    server = QuotaServer(body=USED_UP)
    yield {"ZCODE_ACP_QUOTA_URL": server.url}
    server.close()


@pytest.mark.parametrize("code", sorted(REASONS))
@run
async def test_a_turn_the_limit_stopped_is_quota_exceeded(tmp_path, plan, code):
    async with bridge(tmp_path, env=plan) as b:
        sid = await b.new_session()
        with pytest.raises(RequestError) as err:
            await b.prompt(sid, f"#sim quota code={code}")
        assert err.value.code == -32003
        data = err.value.data
        assert data["quotaReason"] == REASONS[code]
        if code == "1308":
            # The window that is used up and when it resets, from the QuotaWatch's snapshot (on v4 too).
            assert str(err.value).startswith("The GLM Coding Plan's 5-hour window is used up; it resets at ")
            assert data["poolId"] == "plan" and data["meterId"] == "five_hour"
            assert data["resetsAt"] == "2100-01-01T00:00:00.000Z"
        assert len(b.engine_acts("session/send")) <= 1  # a quota failure is never sent again
    assert KEY not in (tmp_path / "bridge.log").read_text()


@pytest.mark.dialects("cli016")
@run
async def test_in_the_users_language(tmp_path, plan):
    async with bridge(tmp_path, env={**plan, "ZCODE_ACP_LANG": "zh-CN"}) as b:
        sid = await b.new_session()
        with pytest.raises(RequestError) as err:
            await b.prompt(sid, "#sim quota code=1308 lang=zh")
        assert err.value.code == -32003
        assert str(err.value).startswith("GLM Coding Plan 的5 小时窗口已用完")


@pytest.mark.parametrize("code", sorted(REASONS))
@run
async def test_a_client_that_speaks_air_session_failure_reads_quota_exhausted(tmp_path, plan, code):
    async with bridge(tmp_path, capabilities=AIR_CAPS, env=plan) as b:
        sid = await b.new_session()
        response = await b.prompt(sid, f"#sim quota code={code}")
        assert response.stop_reason == "end_turn"
        body = response.field_meta["jetbrains"]["air"]["sessionFailure"]
        assert {"category": body["category"], "actions": body["actions"]} == \
            GOLDEN["session_failure"]["policy"]["quota_exhausted"]
        if code == "1308":
            assert body["title"].startswith("The GLM Coding Plan's 5-hour window is used up")
        [update] = [u for u in b.client.of_kind(sid, "session_info_update") if "sessionFailure" in json.dumps(u)]
        assert update["_meta"]["jetbrains"]["air"]["sessionFailure"] == body


@run
async def test_the_window_said_at_the_turn_end_is_not_said_again_as_a_notice(tmp_path, plan):
    async with bridge(tmp_path, env=plan) as b:
        sid = await b.new_session()
        with pytest.raises(RequestError) as err:
            await b.prompt(sid, "#sim quota code=1308")
        assert "5-hour window is used up" in str(err.value)
        # Two more turns: a notice owed after the first turn's end is delivered by the end of these.
        await b.prompt(sid, "#sim stream count=1\nstill there?")
        await b.prompt(sid, "#sim stream count=1\nand now?")
        assert "used up" not in b.client.texts(sid)

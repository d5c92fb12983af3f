"""Wait and retry (``ZCODE_ACP_QUOTA_RETRY``, docs/quota.md "Wait and retry"), end to end.

The simulator's provider refuses the turn until its window resets (``#sim quota code=1308
until=EPOCH``, sim/provider_limits.py) and serves it from then on; the fake quota endpoint says the
5-hour window is used up and resets at that moment. On v4 the bridge answers the prompt with
``quotaExceeded``, shows a countdown, and at the reset sends one ``retryTurn`` on the failed reply (the
engine grants it ``canRetry``: rows.ts, fork-edit-retry.ts), whose turn streams as new output. The
legacy path has no retry without a repeated user message: it offers none.
"""

from __future__ import annotations

import os
import time

import pytest
from acp import RequestError

from tests.process.harness import bridge, eventually, run
from tests.quota_server import QuotaServer
from zcode_acp.config.coding_plan import key_path, save_plan_key

KEY = "plan-key-0123456789abcdef-SECRET"
RESET_IN = 6.0  # seconds: the window resets this soon (a bridge start under load can take 1.5 s; the retry is a little after)
COUNTDOWN = "will be retried once the GLM Coding Plan's 5-hour window resets at"
CANCELLED = "The retry at the window's reset is cancelled."
SERVED = "The window has reset: here is the answer."


def v4() -> bool:
    return os.environ.get("ZCODE_ACP_ENGINE_API") == "v4"


def used_up_until(reset: float) -> dict:
    return {"code": 200, "success": True, "data": {"level": "pro", "limits": [
        {"type": "TOKENS_LIMIT", "unit": 3, "number": 5, "percentage": 100, "nextResetTime": int(reset * 1000)},
        {"type": "TOKENS_LIMIT", "unit": 6, "number": 1, "percentage": 40, "nextResetTime": 4102444800000}]}}


@pytest.fixture
def reset():
    return time.time() + RESET_IN


@pytest.fixture
def plan(tmp_path, reset):
    save_plan_key(key_path({}, tmp_path), "zai", KEY)  # HOME is tmp_path in the harness
    server = QuotaServer(body=used_up_until(reset))
    yield {"ZCODE_ACP_QUOTA_URL": server.url}
    server.close()


def commands(b, kind: str) -> list[dict]:
    return [call for call in b.backend_calls("v4/command") if call["params"].get("type") == kind]


async def failed_at_the_limit(b, sid: str, reset: float) -> RequestError:
    with pytest.raises(RequestError) as err:
        await b.prompt(sid, f"#sim quota code=1308 until={reset}")
    assert err.value.code == -32003
    return err.value


async def counting_down(b, sid: str, reset: float) -> None:
    """The turn failed at the limit, and the retry's countdown is shown."""
    await failed_at_the_limit(b, sid, reset)
    await b.client.wait_for(lambda: COUNTDOWN in b.client.texts(sid))


@pytest.mark.dialects("cli016")
@run
async def test_the_v4_failure_names_the_window_and_its_reset(tmp_path, plan, reset):
    if not v4():
        pytest.skip("the legacy path's is tests/process/test_quota_failure.py")
    async with bridge(tmp_path, env=plan) as b:
        sid = await b.new_session()
        error = await failed_at_the_limit(b, sid, reset)
        assert str(error).startswith("The GLM Coding Plan's 5-hour window is used up; it resets at ")
        assert error.data["poolId"] == "plan" and error.data["meterId"] == "five_hour"
        assert error.data["resetsAt"].endswith("Z") and error.data["quotaReason"] == "window"


@pytest.mark.dialects("cli016")
@run
async def test_off_by_default_no_countdown_and_no_retry(tmp_path, plan, reset):
    async with bridge(tmp_path, env=plan) as b:
        sid = await b.new_session()
        await failed_at_the_limit(b, sid, reset)
        # A countdown comes right behind the failure's answer; by the next turn's end it would be shown.
        await b.prompt(sid, "#sim stream count=1\nstill there?")
        assert COUNTDOWN not in b.client.texts(sid) and CANCELLED not in b.client.texts(sid)
        assert not commands(b, "retryTurn")


@pytest.mark.dialects("cli016")
@run
async def test_on_a_countdown_then_one_retry_turn_at_the_reset_then_the_answer_streams(tmp_path, plan, reset):
    if not v4():
        pytest.skip("the legacy path offers no retry (below)")
    async with bridge(tmp_path, env={**plan, "ZCODE_ACP_QUOTA_RETRY": "1"}) as b:
        sid = await b.new_session()
        await counting_down(b, sid, reset)
        assert "Cancel, or send a new prompt, to stop it." in b.client.texts(sid)
        assert not commands(b, "retryTurn")  # not before the reset
        await b.client.wait_for(lambda: SERVED in b.client.texts(sid), timeout=RESET_IN + 15)
        assert "5-hour window has reset: retrying the turn." in b.client.texts(sid)
        [retry] = commands(b, "retryTurn")
        assert isinstance(retry["params"]["payload"]["target"]["rowId"], int)
        assert len(commands(b, "sendText")) == 1  # the engine re-ran the turn: no second user message


def notices(b, sid: str) -> list[dict]:
    return [f["params"]["update"] for f in b.frames if f.get("method") == "session/update"
            and f["params"]["sessionId"] == sid and f["params"]["update"]["sessionUpdate"] == "notice"]


@pytest.mark.dialects("cli016")
@run
async def test_a_client_that_reads_notices_gets_the_countdown_as_one(tmp_path, plan, reset):
    if not v4():
        pytest.skip("the legacy path offers no retry")
    async with bridge(tmp_path, env={**plan, "ZCODE_ACP_QUOTA_RETRY": "1"}) as b:
        # Raw: the Python SDK's capability model would drop session.notices (tests/process/test_session_notices.py).
        await b.conn._conn.send_request("initialize", {"protocolVersion": 1, "clientCapabilities": {
            "session": {"notices": {}}}})
        sid = await b.new_session()
        await failed_at_the_limit(b, sid, reset)
        shown = await eventually(lambda: notices(b, sid), lambda found: any(COUNTDOWN in n["title"] for n in found))
        assert any(COUNTDOWN in n["title"] for n in shown)
        assert COUNTDOWN not in b.client.texts(sid)
        await b.conn.cancel(session_id=sid)


@pytest.mark.dialects("cli016")
@run
async def test_cancel_during_the_countdown_stops_it(tmp_path, plan, reset):
    if not v4():
        pytest.skip("the legacy path offers no retry")
    async with bridge(tmp_path, env={**plan, "ZCODE_ACP_QUOTA_RETRY": "1"}) as b:
        sid = await b.new_session()
        await counting_down(b, sid, reset)
        await b.conn.cancel(session_id=sid)
        await b.client.wait_for(lambda: CANCELLED in b.client.texts(sid))
        assert not commands(b, "retryTurn")
        # (That nothing is sent at the reset afterwards is not tested here: it would wait on the clock.)


@pytest.mark.dialects("cli016")
@run
async def test_a_new_prompt_during_the_countdown_stops_it(tmp_path, plan, reset):
    if not v4():
        pytest.skip("the legacy path offers no retry")
    async with bridge(tmp_path, env={**plan, "ZCODE_ACP_QUOTA_RETRY": "1"}) as b:
        sid = await b.new_session()
        await counting_down(b, sid, reset)
        await b.prompt(sid, "#sim stream count=1\nsomething else")
        assert CANCELLED in b.client.texts(sid)
        assert not commands(b, "retryTurn")


@pytest.mark.dialects("classic", "cli016")
@run
async def test_the_legacy_path_offers_no_retry_with_the_setting_on(tmp_path, plan, reset):
    if v4():
        pytest.skip("v4 offers it (above)")
    async with bridge(tmp_path, env={**plan, "ZCODE_ACP_QUOTA_RETRY": "1"}) as b:
        sid = await b.new_session()
        error = await failed_at_the_limit(b, sid, reset)
        assert str(error).startswith("The GLM Coding Plan's 5-hour window is used up")
        await b.prompt(sid, "#sim stream count=1\nstill there?")
        assert COUNTDOWN not in b.client.texts(sid) and CANCELLED not in b.client.texts(sid)
        sends = await eventually(lambda: b.engine_acts("session/send"), lambda acts: len(acts) >= 2)
        assert len(sends) == 2  # the failed turn is never sent again

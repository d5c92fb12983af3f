"""``_session/steering``: text into the running turn, on either engine (engine-today row 6)."""

import asyncio

import pytest
from acp import RequestError

from tests.process.harness import bridge, run


@run
async def test_steering_is_applied_to_the_running_turn(tmp_path, sim_dialect):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        with pytest.raises(RequestError) as idle:  # nothing runs yet: an error that says so
            await b.conn.ext_method("session/steering", {"sessionId": sid, "prompt": "use tabs"})
        assert idle.value.code == -32602 and "No turn is running" in str(idle.value)
        turn = asyncio.ensure_future(b.prompt(sid, "#sim slow count=60 interval=0.05 text=."))
        await b.client.wait_for(lambda: "." in b.client.texts(sid))
        answer = await b.conn.ext_method("session/steering", {
            "sessionId": sid, "prompt": [{"type": "text", "text": "use tabs"}]})
        assert answer["applied"] is True and answer["queued"] is False
        assert (await turn).stop_reason == "end_turn"
        if sim_dialect == "cli016":
            # (On the v4 path the prompt itself is a sendText too: the steered text is the guided one.)
            [command] = [c["params"] for c in b.backend_calls("v4/command") if c["params"]["type"] == "sendText"
                         and c["params"]["payload"].get("requestedDelivery") == "guide"]
            assert command["payload"] == {"text": "use tabs", "requestedDelivery": "guide"}
            assert answer["delivery"] == "guide"
            assert "[steered: use tabs]" in b.client.texts(sid)  # the running turn took it in
        else:
            assert b.backend_calls("session/steer")[0]["params"]["content"] == "use tabs"


@run
@pytest.mark.dialects("cli016")
async def test_a_transient_foreign_key_failure_is_retried_once(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        turn = asyncio.ensure_future(b.prompt(sid, "#sim steer_fk count=60 interval=0.05 text=."))
        await b.client.wait_for(lambda: "." in b.client.texts(sid))
        answer = await b.conn.ext_method("session/steering", {"sessionId": sid, "prompt": "shorter"})
        assert answer["applied"] is True
        assert len([c for c in b.backend_calls("v4/command") if c["params"]["type"] == "sendText"
                    and c["params"]["payload"].get("requestedDelivery") == "guide"]) == 2
        assert (await turn).stop_reason == "end_turn"
        assert "[steered: shorter]" in b.client.texts(sid)

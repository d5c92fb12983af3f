"""What real ACP clients (Toad, acpx, a raw client) hit on the v4 path (issue 31, "real clients")."""

from __future__ import annotations

import asyncio

import pytest

from tests.process.harness import bridge, run

pytestmark = pytest.mark.dialects("cli016")
V4 = {"ZCODE_ACP_ENGINE_API": "v4"}


@run
async def test_after_the_stop_fallback_no_earlier_text_comes_back_as_new_output(tmp_path):
    async with bridge(tmp_path, env={**V4, "ZCODE_ACP_STOP_FALLBACK": "0.3"}) as b:
        sid = await b.new_session()
        assert (await b.prompt(sid, "Show me around")).stop_reason == "end_turn"  # reasoning, text, tools
        assert (await b.prompt(sid, "#sim stream count=3 text=early")).stop_reason == "end_turn"
        stuck = asyncio.ensure_future(b.prompt(sid, "#sim stubborn seconds=30"))
        await b.client.wait_for(lambda: "will not stop" in b.client.texts(sid))
        await b.conn.cancel(session_id=sid)
        assert (await stuck).stop_reason == "cancelled"
        before = len(b.client.texts(sid))
        # It waits for the fallback (0.3 s): the session closed and resumed, the topic subscribed again.
        assert (await b.prompt(sid, "#sim stream count=3 text=late")).stop_reason == "end_turn"
        assert b.backend_calls("session/close") and len(b.engine_acts("session/resume")) == 1
        new = b.client.texts(sid)[before:]
        # a resumed snapshot is never new output
        assert "early" not in new and "will not stop" not in new and "Let me look" not in new
        assert new.endswith("late" * 3)


@run
async def test_only_the_modes_the_v4_path_can_set_are_offered(tmp_path):
    async with bridge(tmp_path, env=V4) as b:
        response = await b.conn.new_session(cwd="/tmp", mcp_servers=[])
        offered = [mode.id for mode in response.modes.available_modes]
        assert "auto" not in offered and "yolo" in offered  # Toad: "Failed to set mode" on auto
        for mode_id in offered:  # each one offered can be chosen
            await b.conn.set_session_mode(session_id=response.session_id, mode_id=mode_id)

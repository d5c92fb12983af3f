"""Issue 21: a turn that ignores stop never jams its session (docs/decisions.md, "A turn that ignores stop").

The seed's engine has no ``session/close``: the bridge's fallback fails (``-32601``) and the stopped
turn holds the session until it ends by itself. The next prompt must say why it waits and must not
fail after the busy limit while that turn still runs.
"""

import asyncio

import pytest

from tests.process.harness import bridge, run

pytestmark = pytest.mark.dialects("classic")


@run
async def test_a_prompt_behind_a_turn_that_ignored_stop_waits_visibly_and_runs_when_it_ends(tmp_path):
    # The busy limit (0.5 s) is far shorter than the stubborn turn (it ends by itself 3 s after it began).
    env = {"ZCODE_ACP_STOP_FALLBACK": "0.3", "ZCODE_ACP_BUSY_LIMIT": "0.5"}
    async with bridge(tmp_path, env=env) as b:
        sid = await b.new_session()
        first = asyncio.ensure_future(b.prompt(sid, "#sim stubborn seconds=3"))
        await b.client.wait_for(lambda: "will not stop" in b.client.texts(sid))
        await b.conn.cancel(session_id=sid)
        assert (await first).stop_reason == "cancelled"
        # The fallback close is tried and fails on this engine; the user reads what that means.
        await b.client.wait_for(lambda: "ignored the stop" in b.client.texts(sid))
        assert b.backend_calls("session/close")
        second = await b.prompt(sid, "#sim stream count=3 text=new")
        assert second.stop_reason == "end_turn"
        text = b.client.texts(sid)
        assert "cancel the prompt to give up" in text  # how to stop waiting
        assert "this session takes prompts again" in text  # told when the engine freed it
        assert text.endswith("new" * 3) and "It finished." not in text  # the old turn's text stays away


@run
async def test_the_first_notice_promises_no_close_this_engine_cannot_do(tmp_path):
    # Issue 29: at 1 s the notice promised "the bridge closes and resumes this session"; on this
    # engine session/close is -32601, so 4 s later a second notice took the promise back.
    async with bridge(tmp_path) as b:  # the default stop fallback (5 s): the 1 s notice comes first
        sid = await b.new_session()
        first = asyncio.ensure_future(b.prompt(sid, "#sim stubborn seconds=4"))
        await b.client.wait_for(lambda: "will not stop" in b.client.texts(sid))
        await b.conn.cancel(session_id=sid)
        assert (await first).stop_reason == "cancelled"
        second = asyncio.ensure_future(b.prompt(sid, "#sim stream count=1 text=new"))
        await b.client.wait_for(lambda: "has not stopped yet" in b.client.texts(sid))
        told = b.client.texts(sid)
        assert "cannot close the session" in told and "closes and resumes" not in told
        assert (await second).stop_reason == "end_turn"
        assert "closes and resumes" not in b.client.texts(sid)

"""What acp-client 0.1.0 hit when it cancels a turn and asks again at once (issue 32, docs/clients.md).

acp-client's ``Agent.ask`` sends ``session/cancel`` when its wait is cancelled and its next ``ask``
sends ``session/prompt`` in the same moment (one read of the bridge holds both). The cancelled prompt
is answered first and the next one runs clean. On cli016-v4 the bridge used to answer the new prompt
with a "Queued" notice and stream the new turn's updates before it answered the cancelled prompt
(fixed on main by "v4: a cancel answers its prompts at once"; this test failed before it).
"""

from __future__ import annotations

import asyncio

from acp import text_block

from tests.process.harness import TIMEOUT, bridge, run

def _is_update_of_a_turn(frame: dict) -> bool:
    update = (frame.get("params") or {}).get("update") or {}
    return frame.get("method") == "session/update" and update.get("sessionUpdate") in (
        "agent_message_chunk", "agent_thought_chunk", "tool_call")


@run
async def test_a_prompt_sent_with_the_cancel_starts_after_the_cancelled_one_is_answered(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        assert (await b.prompt(sid, "hello")).stop_reason == "end_turn"
        slow = asyncio.ensure_future(b.prompt(sid, "#sim slow count=400 interval=0.05 text=s"))
        await b.client.wait_for(lambda: "s" in b.client.texts(sid))
        before = len(b.frames)
        # As acp-client does it: the cancel and the next prompt written together, nothing awaited between.
        await b.conn.cancel(session_id=sid)
        again = asyncio.ensure_future(b.conn.prompt(session_id=sid, prompt=[text_block("hello after cancel")]))
        assert (await asyncio.wait_for(slow, TIMEOUT)).stop_reason == "cancelled"
        assert (await asyncio.wait_for(again, TIMEOUT)).stop_reason == "end_turn"
        after = b.frames[before:]
        cancelled_answer = next(index for index, frame in enumerate(after)
                                if (frame.get("result") or {}).get("stopReason") == "cancelled")
        # The new turn's updates: its notice, and the reply that quotes its prompt.
        new_turn = [index for index, frame in enumerate(after) if _is_update_of_a_turn(frame)
                    and ("hello after cancel" in str(frame) or "Queued" in str(frame))]
        assert "Queued" not in b.client.texts(sid)
        assert all(index > cancelled_answer for index in new_turn), (cancelled_answer, new_turn)

"""Background tasks, sub-agents, extension methods and slash commands."""

import asyncio
import os

import pytest
from acp import RequestError

from tests.process.harness import bridge, run


def card_updates(client, sid, card_id):
    return [u for u in client.updates.get(sid, []) if u.get("toolCallId") == card_id]


def closed(update):
    return update.get("status") in ("completed", "failed")


@run
async def test_background_bash_reuses_its_launch_card_until_the_task_ends(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        response = await b.prompt(sid, "#sim bg_bash")
        assert response.stop_reason == "end_turn"  # the prompt ends; the task goes on
        [card] = b.client.of_kind(sid, "tool_call")
        launch = card["toolCallId"]
        await b.client.wait_for(lambda: any(closed(u) for u in card_updates(b.client, sid, launch)))
        updates = card_updates(b.client, sid, launch)
        assert len(b.client.of_kind(sid, "tool_call")) == 1  # no second card for the task
        closes = [u for u in updates if closed(u)]
        assert len(closes) == 1 and closes[0]["status"] == "completed"
        assert closes[0]["_meta"]["terminal_exit"]["exit_code"] == 0
        output = "".join(u["_meta"]["terminal_output"]["data"] for u in updates
                         if "terminal_output" in (u.get("_meta") or {}))
        if os.environ.get("ZCODE_ACP_ENGINE_API") == "v4":  # the cli016-v4 run (conftest.py)
            # By the engine's design a v4 background work carries no output in its frames
            # (snapshot.ts backgroundWork: status only); the engine serves it on request, which
            # the bridge does not ask yet (docs/v4.md, "Not built yet"). The terminal shows the
            # launch's own words, once, and the work's end is its exit.
            assert output.startswith("Command running in background with ID: ")
            assert output.count("Command running in background") == 1  # streamed once
        else:
            assert output.endswith("compiling\nlinking\ndone\n")
            assert output.count("compiling") == 1  # streamed once
        await b.client.wait_for(lambda: "Background task" in b.client.texts(sid))


@run
async def test_background_bash_failure_on_a_plain_client(tmp_path):
    async with bridge(tmp_path, capabilities={}) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim bg_bash status=failed")
        launch = b.client.of_kind(sid, "tool_call")[0]["toolCallId"]
        await b.client.wait_for(lambda: any(closed(u) for u in card_updates(b.client, sid, launch)))
        final = [u for u in card_updates(b.client, sid, launch) if closed(u)]
        assert [u["status"] for u in final] == ["failed"]
        assert "terminal_exit" not in (final[0].get("_meta") or {})


@run
async def test_background_sub_agent_gets_its_own_card(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim bg_agent description=Survey-the-repo")
        await b.client.wait_for(lambda: any(c["toolCallId"].startswith("bg_")
                                            for c in b.client.of_kind(sid, "tool_call")))
        card = next(c for c in b.client.of_kind(sid, "tool_call") if c["toolCallId"].startswith("bg_"))
        assert card["title"] == "[background] Survey-the-repo" and card["status"] == "in_progress"
        assert card["_meta"]["backgroundTask"]["taskId"].startswith("agent_")
        await b.client.wait_for(lambda: any(closed(u) for u in card_updates(b.client, sid, card["toolCallId"])))
        assert [u["status"] for u in card_updates(b.client, sid, card["toolCallId"]) if closed(u)] == ["completed"]


@run
async def test_a_synchronous_sub_agent_card_carries_its_usage(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim subagent")
        [done] = [u for u in b.client.of_kind(sid, "tool_call_update") if u.get("status") == "completed"]
        assert done["_meta"]["subagent"] == {"agentId": "agent_73c7c63d", "tokens": 40904, "toolUses": 1,
                                             "durationMs": 10559}


@run
async def test_a_completion_turn_during_a_prompt_stays_apart_from_it(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim bg_bash after=0.15 interval=0.01")
        response = await b.prompt(sid, "#sim slow count=40 interval=0.01 text=P")
        assert response.stop_reason == "end_turn"
        chunks = b.client.of_kind
        await b.client.wait_for(lambda: any(c["content"]["text"] == "completed." for c in chunks(sid, "agent_message_chunk")))
        all_chunks = chunks(sid, "agent_message_chunk")
        prompt_ids = {c["messageId"] for c in all_chunks if c["content"]["text"] == "P"}
        [background_id] = {c["messageId"] for c in all_chunks if c["content"]["text"] == "completed."}
        background_text = "".join(c["content"]["text"] for c in all_chunks if c["messageId"] == background_id)
        assert background_text == "Background task build the project completed."
        assert len([c for c in all_chunks if c["content"]["text"] == "P"]) == 40  # not cut short
        assert background_id not in prompt_ids


@run
async def test_a_prompt_during_a_notification_turn_waits_for_the_lock(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim bg_bash after=0 interval=0")
        await b.client.wait_for(lambda: "Background " in b.client.texts(sid))  # the notification turn runs
        response = await b.prompt(sid, "#sim stream count=3 text=Z")
        assert response.stop_reason == "end_turn" and b.client.texts(sid).endswith("ZZZ")


@run
async def test_cancelling_a_background_task_fails_its_card_once(tmp_path, sim_dialect):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim bg_bash interval=0.5 output=a|b|c|d|e")
        launch = b.client.of_kind(sid, "tool_call")[0]["toolCallId"]
        await b.client.wait_for(lambda: any("backgroundTask" in (u.get("_meta") or {})
                                            for u in card_updates(b.client, sid, launch)))
        task_id = next(u["_meta"]["backgroundTask"]["taskId"] for u in card_updates(b.client, sid, launch)
                       if "backgroundTask" in (u.get("_meta") or {}))
        result = await b.conn.ext_method("session/cancelBackgroundTask", {"sessionId": sid, "taskId": task_id})
        # The seed answers {cancelled}; the 0.16 engine adds the task's status and id.
        assert result == ({"cancelled": True, "status": "cancelled", "taskId": task_id} if sim_dialect == "cli016"
                          else {"cancelled": True})
        await b.client.wait_for(lambda: any(closed(u) for u in card_updates(b.client, sid, launch)))
        await b.prompt(sid, "#sim stream count=1")  # barrier: the task's own "cancelled" event came by now
        final = [u for u in card_updates(b.client, sid, launch) if closed(u)]
        assert len(final) == 1 and final[0]["status"] == "failed"
        assert final[0]["_meta"]["backgroundTask"]["cancelled"] is True
        assert "terminal_exit" in final[0]["_meta"]


@run
async def test_fork_then_prompt_the_fork(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim stream count=2")
        forked = await b.conn.fork_session(session_id=sid, cwd="/tmp")
        assert forked.session_id != sid
        response = await b.prompt(forked.session_id, "#sim stream count=2 text=F")
        assert response.stop_reason == "end_turn" and b.client.texts(forked.session_id) == "FF"
        sends = {c["params"]["sessionId"] for c in b.engine_acts("session/send")}  # the prompts, on either path
        assert len(sends) == 2  # the fork is its own backend session


@run
async def test_compact_then_prompt_the_prompt_waits_and_sees_no_compaction_text(tmp_path, sim_dialect):
    async with bridge(tmp_path, env={"ZCODE_SIM_COMPACT_SECONDS": "0.5"}) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim stream count=2 text=a")
        compaction = asyncio.ensure_future(b.conn.ext_method("session/compact", {"sessionId": sid}))
        await asyncio.sleep(0.01)  # let the compaction reach the bridge first (order of two requests)
        response = await b.prompt(sid, "#sim stream count=2 text=b")
        if sim_dialect == "cli016":  # answered once the engine said it is over, not when it accepted
            assert (await compaction)["compact"]["state"] == "completed"
        else:
            assert (await compaction) == {"compacted": True}
        assert response.stop_reason == "end_turn"
        assert "Summarizing" not in b.client.texts(sid)
        assert b.client.texts(sid).endswith("bb")


@run
async def test_goal_steer_and_a_backend_without_rewind(tmp_path, sim_dialect):
    async with bridge(tmp_path, env={"ZCODE_SIM_WITHOUT": "rewind"}) as b:
        sid = await b.new_session()
        goal = await b.conn.ext_method("session/goal", {"sessionId": sid, "action": "set", "objective": "Ship"})
        if sim_dialect == "cli016":  # sent again as "replace"; the 0.16 engine words the goal: {response, snapshot}
            assert goal["response"] == "Goal: Ship (active)"
        else:
            assert goal["goal"] == {"objective": "Ship", "status": "active"}
        with pytest.raises(RequestError) as err:
            await b.conn.ext_method("session/goal", {"sessionId": sid, "action": "set"})
        assert err.value.code == -32602 and "objective" in str(err.value)
        with pytest.raises(RequestError) as err:  # no turn is running: nothing to steer
            await b.conn.ext_method("session/steer", {"sessionId": sid, "content": "faster"})
        assert err.value.code == -32602 and "No turn is running" in str(err.value)
        with pytest.raises(RequestError) as err:
            await b.conn.ext_method("session/rewind", {"sessionId": sid, "target": {"kind": "latestCheckpoint"}})
        assert err.value.code == -32601
        assert "session/rewind" in str(err.value) and "ZCode CLI" in str(err.value)


@run
async def test_slash_commands_are_handled_by_the_bridge(tmp_path, sim_dialect):
    async with bridge(tmp_path, env={"ZCODE_SIM_COMPACT_SECONDS": "0.5"}) as b:
        sid = await b.new_session()
        await b.client.wait_for(lambda: b.client.of_kind(sid, "available_commands_update"))
        names = [c["name"] for c in b.client.of_kind(sid, "available_commands_update")[0]["availableCommands"]]
        assert names == ["compact", "goal", "fork", "mode", "model", "thought", "rename"]

        async def command(text):
            before = len(b.client.of_kind(sid, "agent_message_chunk"))
            response = await b.prompt(sid, text)
            assert response.stop_reason == "end_turn"
            return "".join(c["content"]["text"] for c in b.client.of_kind(sid, "agent_message_chunk")[before:])

        assert await command("/goal Ship the bridge") == "Goal: Ship the bridge (active)"
        assert await command("/goal") == "Goal: Ship the bridge (active)"
        assert await command("/mode plan") == "Mode set to plan."
        assert b.client.of_kind(sid, "current_mode_update")[-1]["currentModeId"] == "plan"
        assert await command("/model glm-5-air") == "Model set to glm-5-air."
        assert await command("/thought low") == "Thought set to low."
        assert (await command("/mode turbo")).startswith("/mode failed: Invalid params")
        # The engine compacts, and forks from, only a conversation with something in it (v4 says so
        # in its availability: compact idleCannotCompact, fork forkTargetNotStable): one turn first.
        assert (await b.prompt(sid, "#sim stream count=1")).stop_reason == "end_turn"
        compacted = await command("/compact")
        assert compacted == "Conversation compacted."  # the 0.16 engine: only after session_compacted
        forked = await command("/fork")
        assert forked.startswith("Forked this conversation into a new session: ")
        new_id = forked.rsplit(" ", 1)[-1]
        assert (await b.prompt(new_id, "#sim stream count=1")).stop_reason == "end_turn"
        ours = ("/goal", "/mode", "/model", "/thought", "/compact", "/fork")

        def sent(act):  # the prompt's text: ``content`` in session/send, ``text`` in v4's sendText
            return act["params"].get("content", act["params"].get("text"))

        assert not [c for c in b.engine_acts("session/send") if sent(c).startswith(ours)]
        await b.prompt(sid, "/tmp/some/path.py explain this file")  # not a command: goes to the backend
        assert sent(b.engine_acts("session/send")[-1]) == "/tmp/some/path.py explain this file"

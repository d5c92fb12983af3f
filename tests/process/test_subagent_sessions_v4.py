"""Sub-agents as child sessions on the v4 path (protocol/v4/conversation_children.py): the engine's
``subagent`` row (rows.ts) becomes the legacy path's child session — announced running with the
Agent call's prompt as messages, idle when the row ends — while the sub-agent's own calls, which
live in its own conversation topic (not subscribed), stay out of it. Every frame is checked
against the schemas by the harness."""

from __future__ import annotations

import asyncio
import os

import pytest

from tests.process.harness import bridge, run

pytestmark = pytest.mark.dialects("cli016")  # today's simulator; its v4 variant only (below)


@pytest.fixture(autouse=True)
def v4_only(sim_dialect):
    if os.environ.get("ZCODE_ACP_ENGINE_API") != "v4":
        pytest.skip("the v4 path's child sessions (the legacy ones: test_subagent_sessions.py)")


def updates(b, since=0):
    return [(f["params"]["sessionId"], f["params"]["update"]) for f in b.frames[since:]
            if f.get("method") == "session/update"]


def links(seen):
    return [(s, u) for s, u in seen if u["sessionUpdate"] in ("subagent_update", "session_message")]


async def declaring_bridge_session(b):
    # Raw: the Python SDK's capability model (schema 1.19) would drop subagents.
    await b.conn._conn.send_request("initialize", {"protocolVersion": 1, "clientCapabilities": {"subagents": {}}})
    return await b.new_session()


@run
async def test_a_v4_sub_agent_row_is_a_child_session_with_its_prompt_and_its_end(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await declaring_bridge_session(b)
        assert (await b.prompt(sid, "#sim subagent_tools")).stop_reason == "end_turn"
        seen = updates(b)
        agent = next(u for s, u in seen if s == sid and u["sessionUpdate"] == "tool_call"
                     and u["_meta"]["claudeCode"]["toolName"] == "Agent")  # the parent's card stays
        child = f"{sid}/subagent/{agent['toolCallId']}"  # the legacy path's id for the same call
        [(_, announce), (_, end)] = [(s, u) for s, u in seen if u["sessionUpdate"] == "subagent_update"]
        assert announce["sessionId"] == child and announce["state"] == {"state": "running"}
        assert announce["title"] == "look around"  # the call's description, as on the legacy path
        assert end == {"sessionUpdate": "subagent_update", "sessionId": child,
                       "state": {"state": "idle", "stopReason": "end_turn"}}
        messages = [(s, u) for s, u in seen if u["sessionUpdate"] == "session_message"]
        assert [(s, u["messageId"]) for s, u in messages] == [
            (sid, f"{agent['toolCallId']}-prompt"), (child, f"{agent['toolCallId']}-prompt-received")]
        assert all(u["content"] == [{"type": "text", "text": "Read the project's files."}] for _, u in messages)
        kinds = [u["sessionUpdate"] for s, u in seen if s == child or u["sessionUpdate"] == "subagent_update"]
        assert kinds == ["subagent_update", "session_message", "subagent_update"]  # no calls in the child
        order = [u for _, u in seen]
        assert order.index(agent) < order.index(announce) < order.index(end)
        assert {s for s, _ in seen} == {sid, child}


@run
async def test_a_v4_sub_agent_whose_turn_is_cancelled_ends_its_child_failed_once(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await declaring_bridge_session(b)
        opened = asyncio.Event()
        dialog: asyncio.Future = asyncio.get_running_loop().create_future()

        async def held_until_cancelled(session_id, params):
            opened.set()
            return await dialog

        b.client.on_permission = held_until_cancelled
        turn = asyncio.ensure_future(b.prompt(sid, "#sim subagent_tools ask=1"))  # the sub-agent's Read asks
        await asyncio.wait_for(opened.wait(), 30)
        await b.conn.cancel(session_id=sid)
        dialog.set_result({"outcome": {"outcome": "cancelled"}})  # as ACP asks of a client after a cancel
        assert (await turn).stop_reason == "cancelled"
        states = [u["state"] for _, u in updates(b) if u["sessionUpdate"] == "subagent_update"]
        assert states == [{"state": "running"}, {"state": "idle", "_meta": {"zcode": {"outcome": "failed"}}}]


@run
async def test_a_v4_load_replays_the_sub_agent_as_the_child_session_it_was_live(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await declaring_bridge_session(b)
        assert (await b.prompt(sid, "#sim subagent_tools")).stop_reason == "end_turn"
        live = links(updates(b))
        before = len(b.frames)
        await b.conn._conn.send_request("session/load", {"sessionId": sid, "cwd": "/tmp", "mcpServers": []})
        assert live and links(updates(b, before)) == live


@run
async def test_a_v4_client_without_the_capability_keeps_the_nested_card(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        assert (await b.prompt(sid, "#sim subagent_tools")).stop_reason == "end_turn"
        seen = updates(b)
        assert {s for s, _ in seen} == {sid} and not links(seen)
        assert any(u["sessionUpdate"] == "tool_call" and u["_meta"]["claudeCode"]["toolName"] == "Agent"
                   for _, u in seen)

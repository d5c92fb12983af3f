"""Sub-agents as child sessions (protocol/subagents.py) against the simulator's ``subagent_tools``:
a client that declares ``clientCapabilities.subagents`` sees the child announced on the parent, the
sub-agent's Read calls in the child session, and the child idle at the end; every frame is checked
against the schemas by the harness."""

from __future__ import annotations

import os

import pytest
from acp.exceptions import RequestError

from tests.process.harness import allow_first, bridge, eventually, run


def updates(b):
    return [(f["params"]["sessionId"], f["params"]["update"]) for f in b.frames
            if f.get("method") == "session/update"]


def skip_on_v4():
    if os.environ.get("ZCODE_ACP_ENGINE_API") == "v4":
        # v4's child shows its state and prompt, not the sub-agent's calls (its own conversation topic,
        # not subscribed): test_subagent_sessions_v4.py, docs/protocol-mapping.md.
        pytest.skip("the sub-agent's own calls are not routed on v4 (test_subagent_sessions_v4.py)")


@run
async def test_a_client_that_declares_subagents_sees_each_sub_agent_as_a_child_session(tmp_path):
    skip_on_v4()
    async with bridge(tmp_path) as b:
        # Raw: the Python SDK's capability model (schema 1.19) would drop subagents.
        await b.conn._conn.send_request("initialize", {"protocolVersion": 1, "clientCapabilities": {"subagents": {}}})
        sid = await b.new_session()
        assert (await b.prompt(sid, "#sim subagent_tools")).stop_reason == "end_turn"
        seen = updates(b)
        [(_, announce), (_, end)] = [(s, u) for s, u in seen if u["sessionUpdate"] == "subagent_update"]
        child = announce["sessionId"]
        assert child != sid and announce["state"] == {"state": "running"}
        assert end == {"sessionUpdate": "subagent_update", "sessionId": child,
                       "state": {"state": "idle", "stopReason": "end_turn"}}
        order = [s for s, u in seen if s == child or u["sessionUpdate"] == "subagent_update"]
        assert order[0] == sid and order[-1] == sid  # announced before any child traffic, ended after
        # The call's prompt: sent by the parent, received by the child, before the child's own work.
        messages = [(s, u) for s, u in seen if u["sessionUpdate"] == "session_message"]
        assert [s for s, _ in messages] == [sid, child]
        assert all(u["senderSessionId"] == sid and u["recipientSessionId"] == child
                   and u["content"] == [{"type": "text", "text": "Read the project's files."}] for _, u in messages)
        assert [s for s, _ in seen].index(child) == seen.index(messages[1])  # the child's first frame
        reads = [u for s, u in seen if s == child and u["sessionUpdate"] == "tool_call"]
        assert [u["rawInput"]["file_path"] for u in reads] == ["README.md", "setup.cfg"]
        assert any(s == sid and u["sessionUpdate"] == "tool_call" and u["_meta"]["claudeCode"]["toolName"] == "Agent"
                   for s, u in seen)  # the parent's card stays
        # The child is read-only: a request naming it gets a clean error, never a hang.
        with pytest.raises(RequestError) as refused:
            await b.conn._conn.send_request("session/prompt", {"sessionId": child, "prompt": [
                {"type": "text", "text": "hi"}]})
        assert refused.value.code == -32002  # session not found: the bridge serves no child requests


@run
async def test_a_client_without_the_capability_sees_todays_nested_cards(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        assert (await b.prompt(sid, "#sim subagent_tools")).stop_reason == "end_turn"
        seen = updates(b)
        assert {s for s, _ in seen} == {sid}
        assert not [u for _, u in seen if u["sessionUpdate"] == "subagent_update"]


def child_states(b, child=None):
    return [u["state"]["state"] for _, u in updates(b) if u["sessionUpdate"] == "subagent_update"
            and (child is None or u["sessionId"] == child)]


@run
async def test_a_sub_agents_dialog_makes_its_child_require_action_until_it_is_answered(tmp_path):
    skip_on_v4()
    async with bridge(tmp_path) as b:
        await b.conn._conn.send_request("initialize", {"protocolVersion": 1, "clientCapabilities": {"subagents": {}}})
        sid = await b.new_session()

        async def answer_once_the_child_waits(session_id, params):
            # The dialog is open: the child says so before anyone answers it.
            states = await eventually(lambda: child_states(b), lambda seen: "requires_action" in seen)
            assert states == ["running", "requires_action"]
            return allow_first(session_id, params)

        b.client.on_permission = answer_once_the_child_waits
        assert (await b.prompt(sid, "#sim subagent_tools ask=1")).stop_reason == "end_turn"
        assert child_states(b) == ["running", "requires_action", "running", "idle"]
        child = next(u["sessionId"] for _, u in updates(b) if u["sessionUpdate"] == "subagent_update")
        waits = [f for f in b.frames if f.get("method") == "session/update"
                 and f["params"]["update"].get("state", {}).get("state") == "requires_action"]
        assert [w["params"]["sessionId"] for w in waits] == [sid]  # on the parent, naming the child
        assert waits[0]["params"]["update"]["sessionId"] == child
        reads = [u for s, u in updates(b) if s == child and u["sessionUpdate"] == "tool_call_update"
                 and u.get("status") == "completed"]
        assert len(reads) == 2  # the asked read ran once allowed


@run
async def test_without_the_capability_a_sub_agents_dialog_changes_no_frame(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        assert (await b.prompt(sid, "#sim subagent_tools ask=1")).stop_reason == "end_turn"
        assert {s for s, _ in updates(b)} == {sid}
        assert not child_states(b)
        assert len(b.client.dialogs_of("session/request_permission")) == 1


@run
async def test_a_cancel_naming_a_child_stops_nothing_since_no_child_grants_cancel(tmp_path):
    skip_on_v4()
    async with bridge(tmp_path) as b:
        await b.conn._conn.send_request("initialize", {"protocolVersion": 1, "clientCapabilities": {"subagents": {}}})
        sid = await b.new_session()

        async def cancel_the_child_then_allow(session_id, params):
            await eventually(lambda: child_states(b), lambda seen: "requires_action" in seen)
            child = next(u["sessionId"] for _, u in updates(b) if u["sessionUpdate"] == "subagent_update")
            await b.conn._conn.send_notification("session/cancel", {"sessionId": child})
            await b.conn._conn.send_request("session/list", {})  # the Supervisor has handled the cancel
            return allow_first(session_id, params)

        b.client.on_permission = cancel_the_child_then_allow
        assert (await b.prompt(sid, "#sim subagent_tools ask=1")).stop_reason == "end_turn"  # the parent ran on
        assert child_states(b)[-1] == "idle"
        announce = next(u for _, u in updates(b) if u["sessionUpdate"] == "subagent_update")
        assert "capabilities" not in announce  # never supplied: no mutation, cancel included, is granted
        assert not b.backend_calls("session/stop") and not b.backend_calls("session/cancelBackgroundTask")


def child_frames(frames):
    """What makes the child sessions: the associations, the messages, and which cards each session holds."""
    shown = [(f["params"]["sessionId"], f["params"]["update"]) for f in frames if f.get("method") == "session/update"]
    links = [(s, u) for s, u in shown if u["sessionUpdate"] in ("subagent_update", "session_message")]
    cards = sorted({(s, u["toolCallId"]) for s, u in shown if u["sessionUpdate"] == "tool_call"})
    return links, cards


@run
async def test_a_load_replays_the_sub_agents_as_the_child_sessions_they_were_live(tmp_path):
    skip_on_v4()
    async with bridge(tmp_path) as b:
        await b.conn._conn.send_request("initialize", {"protocolVersion": 1, "clientCapabilities": {"subagents": {}}})
        sid = await b.new_session()
        assert (await b.prompt(sid, "#sim subagent_tools")).stop_reason == "end_turn"
        live = list(b.frames)
        await b.conn._conn.send_request("session/load", {"sessionId": sid, "cwd": "/tmp", "mcpServers": []})
        replayed = b.frames[len(live):]
        links, cards = child_frames(live)
        assert links and len({s for s, _ in cards}) == 2  # the parent's cards and the child's
        assert child_frames(replayed) == (links, cards)


@run
async def test_without_the_capability_a_load_replays_todays_nested_cards(tmp_path):
    skip_on_v4()  # (a v4 load replays the conversation's rows, not this history)
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        assert (await b.prompt(sid, "#sim subagent_tools")).stop_reason == "end_turn"
        before = len(b.frames)
        await b.conn.load_session(session_id=sid, cwd="/tmp", mcp_servers=[])
        links, cards = child_frames(b.frames[before:])
        assert not links and {s for s, _ in cards} == {sid} and len(cards) == 3

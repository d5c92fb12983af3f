"""The bridge on the engine's v4 data plane (``ZCODE_ACP_ENGINE_API=v4``), through the official SDK.

The cli016 dialect serves the v4 plane (docs/simulator.md, "v4 data plane"); every frame
both ways is checked against the engine's schemas by the process conftest, and every
ACP frame against the official ACP schema by the harness.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.process.harness import NoForms, bridge, pick, run

pytestmark = pytest.mark.dialects("cli016")
V4 = {"ZCODE_ACP_ENGINE_API": "v4"}


def methods(b) -> list[str]:
    return [c["method"] for c in b.backend_calls()]


@run
async def test_a_prompt_streams_through_the_conversation_topic(tmp_path):
    async with bridge(tmp_path, env=V4) as b:
        sid = await b.new_session()
        response = await b.prompt(sid, "Show me around")
        assert response.stop_reason == "end_turn"
        client = b.client
        assert "Let me look at the project." in client.texts(sid)
        assert "README first" in client.texts(sid, "agent_thought_chunk")
        cards = {c["toolCallId"]: c for c in client.of_kind(sid, "tool_call")}
        assert len(cards) == 2
        finals = {u["toolCallId"] for u in client.of_kind(sid, "tool_call_update") if u.get("status") == "completed"}
        assert finals == set(cards)
        calls = methods(b)
        assert "session/send" not in calls and "session/subscribe" not in calls and "session/create" not in calls
        assert calls.index("v4/conversation/subscribe") < len(calls)
        commands = [c["params"]["type"] for c in b.backend_calls("v4/command")]
        # the engine starts a made session in its default mode (build), the bridge's is yolo: switched first
        assert commands[:3] == ["createSession", "switchCollaborationMode", "sendText"]


@run
async def test_cancel_stops_through_the_v4_command_and_answers_cancelled(tmp_path):
    async with bridge(tmp_path, env=V4) as b:
        sid = await b.new_session()
        prompt = asyncio.ensure_future(b.prompt(sid, "#sim hang"))
        await b.client.wait_for(lambda: "Thinking very hard" in b.client.texts(sid))
        await b.conn.cancel(session_id=sid)
        response = await prompt
        assert response.stop_reason == "cancelled"
        stops = await b.backend_calls_once("v4/command", lambda call: call["params"]["type"] == "stop")
        assert len(stops) == 1
        assert b.backend_calls("session/stop") == []


@run
async def test_two_prompts_in_a_row_each_get_their_own_answer(tmp_path):
    async with bridge(tmp_path, env=V4) as b:
        sid = await b.new_session()
        first = await b.prompt(sid, "hello")
        second = await b.prompt(sid, "hello again")
        assert first.stop_reason == second.stop_reason == "end_turn"
        assert len([c for c in b.backend_calls("v4/command") if c["params"]["type"] == "sendText"]) == 2


@run
async def test_a_load_replays_the_snapshot_not_the_history(tmp_path):
    async with bridge(tmp_path, env=V4) as b:
        sid = await b.new_session()
        await b.prompt(sid, "Show me around")
        client = b.client
        live_cards = {c["toolCallId"] for c in client.of_kind(sid, "tool_call")}
        assert client.texts(sid, "user_message_chunk") == ""  # the prompter is not echoed its prompt
        before = len(client.updates[sid])
        await b.conn.load_session(session_id=sid, cwd="/tmp", mcp_servers=[])
        replayed = client.updates[sid][before:]
        kinds = [u["sessionUpdate"] for u in replayed]
        assert kinds[0] == "user_message_chunk" and replayed[0]["content"]["text"] == "Show me around"
        text = "".join(u["content"]["text"] for u in replayed if u["sessionUpdate"] == "agent_message_chunk")
        assert "Let me look at the project." in text
        assert {u["toolCallId"] for u in replayed if u["sessionUpdate"] == "tool_call"} == live_cards
        calls = methods(b)
        assert "session/messages" not in calls and "session/read" not in calls  # no history read
        response = await b.prompt(sid, "hello again")  # and it goes on
        assert response.stop_reason == "end_turn"


async def queue_once_listed(b, sid, timeout=10.0):
    """``_session/queue`` once the engine's queue frame has reached the Session (each read a round trip)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        listed = await b.conn._conn.send_request("_session/queue", {"sessionId": sid})
        if listed["items"] or asyncio.get_running_loop().time() > deadline:
            return listed
        await asyncio.sleep(0.02)  # between round trips: the condition is the frame, read again


@run
async def test_the_engines_queue_is_an_extension_on_the_v4_path(tmp_path):
    async with bridge(tmp_path, env=V4) as b:
        sid = await b.new_session()
        running = asyncio.ensure_future(b.prompt(sid, "#sim hang"))
        await b.client.wait_for(lambda: "Thinking very hard" in b.client.texts(sid))
        queued = asyncio.ensure_future(b.prompt(sid, "after that"))
        await b.client.wait_for(lambda: "Queued" in b.client.texts(sid))
        # "Queued" comes with the sendText ack; the frame that puts the item in the engine's queue
        # follows it (frames a request causes come after its answer), so read until that frame is in.
        listed = await queue_once_listed(b, sid)
        assert [item["text"] for item in listed["items"]] == ["after that"]
        await b.conn._conn.send_request("_session/queueRemove", {"sessionId": sid,
                                                                 "queueItemId": listed["items"][0]["queueItemId"]})
        assert (await queued).stop_reason == "cancelled"
        await b.conn.cancel(session_id=sid)
        assert (await running).stop_reason == "cancelled"
        assert (await b.conn._conn.send_request("_session/queue", {"sessionId": sid}))["items"] == []


@run
@pytest.mark.parametrize("faults", ["gap", "checksum", "stale_subscription,duplicate", "fragment*3"])
async def test_frames_the_engine_garbles_are_resynced_and_the_text_arrives_whole(tmp_path, faults):
    async with bridge(tmp_path, env={**V4, "ZCODE_SIM_V4_FAULTS": faults}) as b:
        sid = await b.new_session()
        clean = await b.prompt(sid, "Show me around")
        assert clean.stop_reason == "end_turn"
        text = b.client.texts(sid)
        assert text.startswith("Let me look at the project.") and text.endswith("open anything in it.")
        assert text.count("Let me look at the project.") == 1  # nothing twice
        if faults in ("gap", "checksum"):
            assert b.backend_calls("v4/conversation/resync")


def request_answers(b) -> list[tuple]:
    """(JSON-RPC id, answer) of every answer the engine got to its interaction requests, in order."""
    entries = [json.loads(line) for line in b.trace.read_text().splitlines() if line.strip()]
    return [(e["response"], e["result"]) for e in entries
            if "response" in e and isinstance(e.get("result"), dict) and ("decision" in e["result"] or "action" in e["result"])]


def resolutions(b) -> list[dict]:
    return [c["params"]["payload"] for c in b.backend_calls("v4/command") if c["params"]["type"] == "resolveInteraction"]


@run
@pytest.mark.parametrize("choice,option", [("allow_once", "allow_once"), ("deny", "deny")])
async def test_a_permission_is_answered_with_resolve_interaction(tmp_path, choice, option):
    client = NoForms()
    client.on_permission = lambda sid, params: pick(choice)
    async with bridge(tmp_path, client=client, env=V4) as b:
        sid = await b.new_session()
        assert (await b.prompt(sid, "#sim permission")).stop_reason == "end_turn"
        [resolved] = resolutions(b)
        assert resolved["answer"] == {"optionId": option}
        assert resolved["interactionId"].startswith("perm_")  # the engine's name for it: its request's requestId
        await b.conn.list_sessions(cwd="/tmp")  # a barrier: the legacy answers follow the command on the pipe
        answers = request_answers(b)  # the legacy request too, once per id, with the option's own answer
        assert answers and len({i for i, _ in answers}) == len(answers)
        assert {a["decision"] for _, a in answers} == {"allow" if choice == "allow_once" else "deny"}


@run
async def test_a_question_is_answered_with_resolve_interaction(tmp_path):
    client = NoForms()
    answers = iter([pick("o_1"), pick("o_2"), pick("done")])
    client.on_permission = lambda sid, params: next(answers)
    async with bridge(tmp_path, client=client, env=V4) as b:
        sid = await b.new_session()
        assert (await b.prompt(sid, "#sim questions multi=1")).stop_reason == "end_turn"
        [resolved] = resolutions(b)
        assert resolved["answer"] == {"action": "accept", "content": {"answers": {
            "Which file should I test?": "user.test.ts", "Which checks should run?": "unit"}}}
        await b.conn.list_sessions(cwd="/tmp")  # a barrier: the legacy answers follow the command on the pipe
        answers = request_answers(b)
        assert answers and len({i for i, _ in answers}) == len(answers)
        assert all(a == resolved["answer"] for _, a in answers)


@run
async def test_a_turns_file_changes_come_as_diffs_from_the_engines_ledger(tmp_path):
    """``session/fileChanges``: the engine's per-turn ledger (v4/conversation/fileChanges), pinned to
    the turn's ``turnHeader`` row and the revision the bridge saw, each file's hunks also as one diff."""
    async with bridge(tmp_path, env=V4) as b:
        sid = await b.new_session()
        assert (await b.prompt(sid, "#sim edit")).stop_reason == "end_turn"
        changes = await b.conn._conn.send_request("_session/fileChanges", {"sessionId": sid})
        asked = [c["params"] for c in b.backend_calls("v4/conversation/fileChanges")]
        assert len(asked) == 1 and asked[0]["target"]["rowId"] == changes["rowId"]
        assert (changes["files"], changes["additions"], changes["deletions"]) == (1, 1, 1)
        (item,) = changes["items"]
        assert item["path"] == "/tmp/example.py" and item["toolNames"] == ["Edit"] and item["writeCount"] == 1
        assert item["diff"] == "--- a//tmp/example.py\n+++ b//tmp/example.py\n@@ -1,1 +1,1 @@\n-x = 1\n+x = 2\n"
        # A turn that wrote nothing has an empty ledger; a row that is not a turn is refused, never sent.
        assert (await b.prompt(sid, "hello")).stop_reason == "end_turn"
        quiet = await b.conn._conn.send_request("_session/fileChanges", {"sessionId": sid})
        assert quiet["files"] == 0 and quiet["items"] == [] and quiet["rowId"] > changes["rowId"]
        with pytest.raises(Exception, match="rowId"):
            await b.conn._conn.send_request("_session/fileChanges", {"sessionId": sid, "rowId": 10_000})
        assert len(b.backend_calls("v4/conversation/fileChanges")) == 2


@run
async def test_file_changes_are_refused_on_the_legacy_path(tmp_path):
    async with bridge(tmp_path, env={"ZCODE_ACP_ENGINE_API": "legacy"}) as b:  # whichever run this is
        sid = await b.new_session()
        with pytest.raises(Exception, match=r"(?i)v4|not found|method"):
            await b.conn._conn.send_request("_session/fileChanges", {"sessionId": sid})
        assert b.backend_calls("v4/conversation/fileChanges") == []

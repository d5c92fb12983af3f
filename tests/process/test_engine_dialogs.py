"""The 0.16 engine as its source says (issue 19): images, history replay, task endings, host requests.

The simulator's ``cli016`` dialect reads and answers these the way the engine's
source does (docs/simulator.md): it drops an attachment it cannot read, marks
model-only messages, keeps a failed tool's ``state.error``, names a sub-agent
tool call's parent, ends tasks ``timed_out``/``spawn_error``/``lost``, asks for
provider headers before a model request in host auth mode only, and reads the
official-MCP-auth answer strictly.
"""

import asyncio
import os
import json

import pytest
from acp import RequestError, image_block, resource_link_block, text_block

from tests.process.harness import bridge, run

pytestmark = pytest.mark.dialects("cli016")
NO_FORMS = {"_meta": {"terminal_output": True}}
PLAIN = {}


def backend_answers(b):
    answers = {}
    for line in b.trace.read_text().splitlines():
        entry = json.loads(line)
        if "response" in entry:
            answers[entry["response"]] = entry["result"]
    return answers


def asked(b, method):
    return [c for c in b.backend_calls(method)]


@run
async def test_images_reach_the_engine_as_it_reads_them(tmp_path):
    shot = tmp_path / "shot.png"
    shot.write_bytes(b"\x89PNG\r\n")
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        prompt = [text_block("what is in these?"), image_block(data="AAAA", mime_type="image/png"),
                  resource_link_block(name="shot.png", uri=shot.as_uri())]
        response = await asyncio.wait_for(b.conn.prompt(session_id=sid, prompt=prompt), 10)
        assert response.stop_reason == "end_turn"
        # The engine names what it could read; a {type, data} image it drops without a word.
        if os.environ.get("ZCODE_ACP_ENGINE_API") == "v4":
            # By design on v4: a command carries files by ref only, so the bridge uploads the linked
            # file's bytes (v4/attachment/*) where the legacy engine read its path itself.
            assert "[attachments: image-2 (3 bytes), shot.png (6 bytes)]" in b.client.texts(sid)
            uploads = [c["params"] for c in b.backend_calls("v4/attachment/begin")]
            assert [(u["fileName"], u["mime"], u["totalBytes"]) for u in uploads] == [
                ("image-2", "image/png", 3), ("shot.png", "image/png", 6)]
            [send] = b.engine_acts("session/send")
            assert [a["fileName"] for a in send["params"]["attachments"]] == ["image-2", "shot.png"]
        else:
            assert f"[attachments: image-2 (3 bytes), shot.png ({shot})]" in b.client.texts(sid)


@run
async def test_a_prompt_the_engine_cannot_take_is_refused_whole(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        bad = [text_block("look"), image_block(data="AAAA", mime_type="text/plain")]
        with pytest.raises(RequestError) as err:
            await asyncio.wait_for(b.conn.prompt(session_id=sid, prompt=bad), 10)
        assert err.value.code == -32602 and "not an image type" in str(err.value.data or err.value)
        assert asked(b, "session/send") == []  # nothing half-sent


@run
async def test_load_replays_only_what_the_user_saw_with_failed_tools_and_sub_agents(tmp_path):
    async with bridge(tmp_path, NO_FORMS) as first:
        sid = await first.new_session()
        await first.prompt(sid, "#sim tool_error")
        await first.prompt(sid, "#sim subagent_tools")
        await first.prompt(sid, "#sim bg_bash after=0 interval=0")
        await first.client.wait_for(lambda: "Background task" in first.client.texts(sid))
        await first.prompt(sid, "#sim stream count=1")  # the engine has stored the notification by now
    async with bridge(tmp_path, NO_FORMS) as second:
        await second.conn.load_session(session_id=sid, cwd="/tmp", mcp_servers=[])
        updates = second.client.updates[sid]
        users = [u["content"]["text"] for u in updates if u["sessionUpdate"] == "user_message_chunk"]
        assert users == ["#sim tool_error", "#sim subagent_tools", "#sim bg_bash after=0 interval=0",
                         "#sim stream count=1"]  # not the model-only <task-notification>
        cards = [u for u in updates if u["sessionUpdate"] == "tool_call"]
        [failed] = [c for c in cards if c["status"] == "failed"]
        assert "No such file or directory" in failed["content"][0]["content"]["text"]
        if os.environ.get("ZCODE_ACP_ENGINE_API") == "v4":
            # By the engine's design: rawOutput is the engine's own output of the call, and a v4
            # toolCall row's output is {text} (rows.ts), where the legacy history has {error}.
            assert failed["rawOutput"] == {"text": "cat: missing.txt: No such file or directory"}
        else:
            assert failed["rawOutput"] == {"error": "cat: missing.txt: No such file or directory"}
        agent = next(c for c in cards if c["_meta"]["claudeCode"]["toolName"] == "Agent")
        children = [c for c in cards if c["_meta"].get("zcode", {}).get("parentToolCallId") == agent["toolCallId"]]
        if os.environ.get("ZCODE_ACP_ENGINE_API") == "v4":
            # By the engine's design: a sub-agent's own calls live in its conversation
            # (conversation/<childSessionId>, rows.ts), not in its parent's rows; the parent's
            # history shows the sub-agent's card alone (docs/v4.md, "Not built yet").
            assert children == [] and "Read: README.md" not in [c["title"] for c in cards]
            assert agent["status"] == "completed"
            return
        assert [c["title"] for c in children] == ["Read: README.md", "Read: setup.cfg"]
        order = [c["toolCallId"] for c in cards]
        assert order.index(agent["toolCallId"]) < min(order.index(c["toolCallId"]) for c in children)


@pytest.mark.parametrize("status", ["timed_out", "spawn_error", "lost"])
@run
async def test_final_task_statuses_close_their_cards(tmp_path, status):
    async with bridge(tmp_path, PLAIN) as b:
        sid = await b.new_session()
        await b.prompt(sid, f"#sim bg_agent status={status} after=0")
        card = "bg_"
        if os.environ.get("ZCODE_ACP_ENGINE_API") == "v4":
            # By the engine's design: a v4 background work is only running, resultPending, failed or
            # cancelled (snapshot.ts), so its card (bg_<workId>, protocol/v4/work_cards.py) closes
            # failed, once, without the legacy reason (docs/v4.md).
            def failed_work():
                return [u for u in b.client.of_kind(sid, "tool_call_update")
                        if u["toolCallId"].startswith(card) and u.get("status") == "failed"]

            await b.client.wait_for(failed_work)
            await b.prompt(sid, "#sim stream count=1")  # barrier: any later frame of the work came by now
            [last] = failed_work()
            assert "status" not in last["_meta"]["backgroundTask"]  # no word for why on v4
            assert last["_meta"]["backgroundTask"]["taskId"] == last["toolCallId"].removeprefix(card)
            return

        def closed():
            return [u for u in b.client.of_kind(sid, "tool_call_update")
                    if u["toolCallId"].startswith(card) and u.get("status") == "failed"]

        await b.client.wait_for(closed)
        [last] = closed()
        assert last["_meta"]["backgroundTask"]["status"] == status
        words = " ".join(json.dumps(u.get("content")) for u in b.client.of_kind(sid, "tool_call_update"))
        assert {"timed_out": "timed out", "spawn_error": "could not be started", "lost": "was lost"}[status] in words


@run
async def test_a_logged_in_user_in_standalone_mode_is_never_asked_for_headers(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        assert (await b.prompt(sid, "#sim stream count=2")).stop_reason == "end_turn"
        assert "interaction/requestProviderRuntimeHeaders" not in json.dumps(backend_answers(b)) and \
            not [f for f in b.trace.read_text().splitlines() if "RuntimeHeaders" in f]


@run
async def test_host_auth_mode_tells_the_user_why_and_what_to_do(tmp_path):
    async with bridge(tmp_path, env={"ZCODE_APP_SERVER_AUTH_MODE": "host"}) as b:
        sid = await b.new_session()
        with pytest.raises(RequestError) as err:
            await b.prompt(sid, "#sim stream count=2")
        said = json.dumps(err.value.data) + str(err.value)
        assert "ZCODE_APP_SERVER_AUTH_MODE" in said and "zcode login" in said
        assert "the engine's own provider configuration applies" not in said


def provider_config(tmp_path, key):
    """A personal provider configuration with a Coding Plan rule (the shape kingsword09/zcode-cli documents)."""
    path = tmp_path / "provider_config.json"
    path.write_text(json.dumps({"schemaVersion": 1, "config": {"providerConfigRules": {"providerRules": [
        {"providerId": "custom", "enabled": True, "config": {"access": {"type": "api-key", "apiKey": "not-this"}}},
        {"providerId": "zhipu", "enabled": True, "config": {"access": {"type": "zhipu-coding-plan-api-key",
                                                                        "apiKey": key}}}]}}}))
    return path


@run
async def test_host_auth_mode_gets_the_coding_plan_key_of_the_users_provider_config(tmp_path):
    env = {"ZCODE_APP_SERVER_AUTH_MODE": "host",
           "ZCODE_PERSONAL_PROVIDER_CONFIG_FILE": str(provider_config(tmp_path, "cp-key-123"))}
    async with bridge(tmp_path, env=env) as b:
        sid = await b.new_session()
        assert (await b.prompt(sid, "#sim stream count=2")).stop_reason == "end_turn"
        assert {"headersApplied": True, "requestAuth": {"apiKey": "cp-key-123"}} in backend_answers(b).values()


@run
async def test_official_mcp_auth_is_answered_in_the_engines_own_shape(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim official_mcp")
        # A {headersApplied} answer the engine cannot read; {ok: false, reason} it can.
        assert b.client.texts(sid).endswith("official MCP unavailable: official_auth_unavailable")
        assert {"ok": False, "reason": "official_auth_unavailable"} in backend_answers(b).values()


@run
async def test_runtime_preferences_turn_question_auto_resolution_off(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim stream count=1")
        [preferences] = [a for a in backend_answers(b).values() if a and "nativeSearchEnhancementsEnabled" in a]
        assert preferences["askUserQuestionAutoResolutionEnabled"] is False  # omitted, it reads as true

"""Sessions that survive: placeholders on disk, load with history, resume, list, close, settings."""

import asyncio
import os

import pytest
from acp import RequestError

from tests.process.harness import file_contains, bridge, run


@run
async def test_a_session_survives_a_bridge_restart_with_its_whole_history(tmp_path):
    async with bridge(tmp_path) as first:
        sid = await first.new_session()
        await first.prompt(sid, "Show me around")
        backend_id = first.engine_acts("session/send")[0]["params"]["sessionId"]
        calls_before = len(first.backend_calls())
        creates_before = len(first.engine_acts("session/create"))
    async with bridge(tmp_path) as second:  # a new bridge process and a new backend process
        response = await second.conn.load_session(session_id=sid, cwd="/tmp", mcp_servers=[])
        assert response.modes.current_mode_id == "yolo"
        updates = second.client.updates[sid]
        kinds = [u["sessionUpdate"] for u in updates]
        assert kinds[0] == "user_message_chunk"
        assert updates[0]["content"]["text"] == "Show me around"
        assert "agent_thought_chunk" in kinds and "agent_message_chunk" in kinds
        cards = [u for u in updates if u["sessionUpdate"] == "tool_call"]
        assert [c["title"] for c in cards] == ["Read: README.md", "Bash: ls -la"]
        # Replayed cards keep the ids the live turn used (the 0.16 engine spells them callId).
        live = {u["toolCallId"] for u in first.client.updates[sid] if u["sessionUpdate"] == "tool_call"}
        assert {c["toolCallId"] for c in cards} == live
        assert all(c["status"] == "completed" and c["rawInput"] for c in cards)
        assert "README.md" in cards[1]["content"][0]["content"]["text"]
        assert kinds[-2:] == ["plan", "usage_update"]  # then the plan and one usage update
        text = second.client.texts(sid)
        assert text.startswith("Let me look at the project.") and text.endswith("open anything in it.")
        calls = second.backend_calls()[calls_before:]
        assert [c["method"] for c in calls if c["method"] == "session/resume"] == ["session/resume"]
        # A new prompt continues the same backend session.
        await second.prompt(sid, "#sim stream count=3")
        assert second.engine_acts("session/send")[-1]["params"]["sessionId"] == backend_id
        assert len(second.engine_acts("session/create")) == creates_before  # no new engine session


@run
async def test_a_never_used_placeholder_gets_a_fresh_session_after_a_restart(tmp_path):
    # A catalog remembered from an earlier run: with none, the first session/new and a load of a
    # never-used session make it in the engine at once, to learn the models (test_model_catalog_first_run.py).
    folder = tmp_path / "zcode-home" / "v2"
    folder.mkdir(parents=True)
    (folder / "acp-model-catalog.json").write_text(
        '{"version": 1, "available": [{"providerId": "zhipu", "modelId": "glm-5", "name": "GLM-5"}]}')
    async with bridge(tmp_path) as first:
        sid = await first.new_session()
    assert first.backend_calls() == []
    async with bridge(tmp_path) as second:
        await second.conn.load_session(session_id=sid, cwd="/tmp", mcp_servers=[])
        assert second.client.updates.get(sid, []) == []
        response = await second.prompt(sid, "#sim stream count=2")
        assert response.stop_reason == "end_turn"
        assert len(second.engine_acts("session/create")) == 1


@run
async def test_an_unknown_id_is_session_not_found_naming_it(tmp_path):
    async with bridge(tmp_path) as b:
        for method in (b.conn.load_session, b.conn.resume_session):
            with pytest.raises(RequestError) as err:
                await method(session_id="sess_nobody_knows", cwd="/tmp", mcp_servers=[])
            assert err.value.code == -32002 and "sess_nobody_knows" in str(err.value)


@run
async def test_a_load_with_another_cwd_is_refused(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session(cwd="/tmp")
        with pytest.raises(RequestError) as err:
            await b.conn.load_session(session_id=sid, cwd="/elsewhere", mcp_servers=[])
        assert err.value.code == -32602 and "cwd" in str(err.value)


@run
async def test_two_loads_racing_make_one_resume_and_both_replay(tmp_path):
    async with bridge(tmp_path) as first:
        sid = await first.new_session()
        await first.prompt(sid, "#sim stream count=4 text=hey")
    async with bridge(tmp_path) as second:
        resumes_before = len(second.backend_calls("session/resume"))
        await asyncio.gather(
            second.conn.load_session(session_id=sid, cwd="/tmp", mcp_servers=[]),
            second.conn.load_session(session_id=sid, cwd="/tmp", mcp_servers=[]))
        assert len(second.backend_calls("session/resume")) - resumes_before == 1
        users = second.client.of_kind(sid, "user_message_chunk")
        assert len(users) == 2  # each load replayed the history
        assert second.client.texts(sid) == "hey" * 4 * 2


@run
async def test_live_updates_during_a_replay_arrive_after_it(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim stream count=3 text=old")
        running = asyncio.ensure_future(b.prompt(sid, "#sim slow count=60 interval=0.005 text=live"))
        await b.client.wait_for(lambda: "live" in b.client.texts(sid))
        mark = len(b.client.updates[sid])
        await b.conn.load_session(session_id=sid, cwd="/tmp", mcp_servers=[])
        await running
        after = b.client.updates[sid][mark:]
        first = next(i for i, u in enumerate(after) if u["sessionUpdate"] == "user_message_chunk")
        last = next(i for i, u in enumerate(after) if u["sessionUpdate"] == "usage_update" and i > first)
        chunk_ids = [u["messageId"] for u in after[first:last + 1] if u["sessionUpdate"] == "agent_message_chunk"]
        if os.environ.get("ZCODE_ACP_ENGINE_API") == "v4":
            # On v4 (docs/v4.md) the replay is the snapshot the bridge holds, one chunk per row under the
            # row's id (row-<n>) as live chunks are: a live delta inside it would be a second chunk of a row.
            assert chunk_ids and len(chunk_ids) == len(set(chunk_ids)), "a live update landed inside the replay"
            live_row = chunk_ids[-1]  # the running turn's answer, replayed as far as it had come
            assert any(u["sessionUpdate"] == "agent_message_chunk" and u["messageId"] == live_row
                       for u in after[last + 1:])  # its live deltas came right after
            return
        # Replayed chunks carry the backend's message ids (msg_…); live ones the bridge's own.
        assert chunk_ids and all(mid.startswith("msg_") for mid in chunk_ids), "a live update landed inside the replay"
        assert any(u["sessionUpdate"] == "agent_message_chunk" and not u["messageId"].startswith("msg_")
                   for u in after[last + 1:])  # the held live updates came right after


@run
async def test_resume_attaches_without_replay(tmp_path):
    async with bridge(tmp_path) as first:
        sid = await first.new_session()
        await first.prompt(sid, "#sim stream count=2")
    async with bridge(tmp_path) as second:
        response = await second.conn.resume_session(session_id=sid, cwd="/tmp", mcp_servers=[])
        assert response.config_options
        assert second.client.updates.get(sid, []) == []
        assert (await second.prompt(sid, "#sim stream count=2")).stop_reason == "end_turn"


@run
async def test_list_shows_used_sessions_under_their_editor_ids_and_close_forgets(tmp_path):
    async with bridge(tmp_path) as b:
        used, unused = await b.new_session(), await b.new_session()
        await b.prompt(used, "#sim stream count=2")
        listed = await b.conn.list_sessions(cwd="/tmp")
        ids = [s.session_id for s in listed.sessions]
        assert used in ids and unused not in ids
        info = next(s for s in listed.sessions if s.session_id == used)
        assert info.cwd == "/tmp" and info.updated_at.endswith("Z") and info.title
        if os.environ.get("ZCODE_ACP_ENGINE_API") == "v4":  # read from the workspace's sessions-index topic
            topics = [c["params"]["topic"] for c in b.backend_calls("v4/conversation/subscribe")]
            assert "sessions-index//tmp" in topics and not b.backend_calls("session/list")
        await b.conn.close_session(session_id=used)
        with pytest.raises(RequestError) as err:
            await b.prompt(used, "again")
        assert err.value.code == -32002
        # The backend kept the history: the session can be loaded again.
        await b.conn.load_session(session_id=used, cwd="/tmp", mcp_servers=[])
        assert b.client.of_kind(used, "user_message_chunk")


@run
async def test_a_new_bridge_lists_the_sessions_of_an_earlier_one(tmp_path):
    async with bridge(tmp_path) as first:
        sid = await first.new_session()
        await first.prompt(sid, "#sim stream count=2\nList me later")
    async with bridge(tmp_path) as second:  # a new engine process: the session is in its store only
        listed = await second.conn.list_sessions(cwd="/tmp")
        [info] = [s for s in listed.sessions if s.session_id == sid]  # under the editor's id
        assert info.title and info.updated_at.endswith("Z")
        await second.conn.load_session(session_id=sid, cwd="/tmp", mcp_servers=[])
        assert second.client.of_kind(sid, "user_message_chunk")


@run
async def test_a_deleted_session_leaves_the_list_and_on_v4_the_engine_deletes_it(tmp_path):
    async with bridge(tmp_path) as b:
        kept, doomed = await b.new_session(), await b.new_session()
        await b.prompt(kept, "#sim stream count=1")
        await b.prompt(doomed, "#sim stream count=1")
        backend_id = b.engine_acts("session/send")[-1]["params"]["sessionId"]
        assert {kept, doomed} <= {s.session_id for s in (await b.conn.list_sessions(cwd="/tmp")).sessions}
        assert await b.conn._conn.send_request("session/delete", {"sessionId": doomed}) == {}
        if os.environ.get("ZCODE_ACP_ENGINE_API") == "v4":  # the v4 command deletes it in the engine
            await file_contains(b.trace, '"deleteSession"')
            assert [c["params"]["sessionId"] for c in b.engine_acts("session/delete")] == [backend_id]
            assert not b.backend_calls("session/close")  # deleted, not merely closed
        ids = {s.session_id for s in (await b.conn.list_sessions(cwd="/tmp")).sessions}
        assert kept in ids and doomed not in ids and backend_id not in ids


@run
async def test_an_evicted_session_is_resumed_and_the_prompt_retried(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim evict")
        response = await b.prompt(sid, "#sim stream count=2 text=back")
        assert response.stop_reason == "end_turn"
        assert b.client.texts(sid).endswith("backback")
        assert len(b.engine_acts("session/resume")) == 1


@run
async def test_mode_model_and_thought_changes(tmp_path, sim_dialect):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        assert b.backend_calls() == []
        await b.conn.set_session_mode(session_id=sid, mode_id="plan")  # materializes the session
        first_call = b.backend_calls()[0]  # the engine session is made first (v4: the createSession command)
        assert first_call["method"] == "session/create" or first_call["params"].get("type") == "createSession"
        # The mode sent last is the one asked for (v4: switchCollaborationMode; a session createSession made is
        # first switched from the engine's default to the bridge's configured mode, docs/v4.md "Lifecycle").
        assert b.engine_acts("session/setMode")[-1]["params"]["mode"] == "plan"
        await b.client.wait_for(lambda: b.client.of_kind(sid, "current_mode_update"))
        assert b.client.of_kind(sid, "current_mode_update")[-1]["currentModeId"] == "plan"
        response = await b.conn.set_config_option(session_id=sid, config_id="model", value="glm-5-air")
        model = next(o for o in response.config_options if o.root.id == "model") if hasattr(
            response.config_options[0], "root") else next(o for o in response.config_options if o.id == "model")
        assert (model.root if hasattr(model, "root") else model).current_value == "glm-5-air"
        expected = {"modelId": "glm-5-air", "providerId": "zhipu"}
        if sim_dialect == "cli016":  # a model with reasoning levels is selected with one of them
            expected["options"] = {"reasoningLevel": "high"}
        assert b.models_selected()[0] == expected  # v4: switchModelConfig {provider, model, thought}
        await b.conn.set_config_option(session_id=sid, config_id="thought", value="low")
        if os.environ.get("ZCODE_ACP_ENGINE_API") == "v4":  # the engine takes a level only with its model
            assert b.models_selected()[-1] == {**expected, "options": {"reasoningLevel": "low"}}
        else:
            assert b.backend_calls("session/setThoughtLevel")[0]["params"]["thoughtLevel"] == "low"
        with pytest.raises(RequestError) as err:
            await b.conn.set_config_option(session_id=sid, config_id="model", value="gpt-0")
        assert err.value.code == -32602
        with pytest.raises(RequestError) as err:
            await b.conn.set_session_mode(session_id=sid, mode_id="turbo")
        assert err.value.code == -32602


@run
async def test_set_mode_in_an_older_drafts_words_is_told_modeid_is_missing(tmp_path):
    """chuk-acp sends ``session/set_mode {sessionId, mode}`` (an older draft's name for ``modeId``):
    the answer names the field to change (docs/decisions.md, "Clients that speak an older draft")."""
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        with pytest.raises(RequestError) as err:
            await b.conn._conn.send_request("session/set_mode", {"sessionId": sid, "mode": "plan"})
        assert err.value.code == -32602 and "modeId is missing" in str(err.value)


@run
async def test_the_agent_switching_mode_itself_updates_the_editor(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim plan_mode")
        await b.client.wait_for(lambda: b.client.of_kind(sid, "current_mode_update"))
        assert b.client.of_kind(sid, "current_mode_update")[-1]["currentModeId"] == "plan"
        options = b.client.of_kind(sid, "config_option_update")[-1]["configOptions"]
        assert next(o for o in options if o["id"] == "mode")["currentValue"] == "plan"
        await b.client.wait_for(lambda: b.client.of_kind(sid, "session_info_update"))


@run
async def test_racing_first_uses_make_one_session_create(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        response, _ = await asyncio.gather(b.prompt(sid, "#sim stream count=2"),
                                           b.conn.set_session_mode(session_id=sid, mode_id="edit"))
        assert response.stop_reason == "end_turn"
        assert len(b.engine_acts("session/create")) == 1
        backend_id = b.engine_acts("session/send")[0]["params"]["sessionId"]
        stored = await file_contains(tmp_path / "zcode-home" / "v2" / "acp-lazy-sessions.json", backend_id)
        assert backend_id in stored


@run
async def test_a_session_continues_on_a_restarted_backend(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim stream count=2 text=before")
        with pytest.raises(RequestError):
            await b.prompt(sid, "#sim die")
        response = await b.prompt(sid, "#sim stream count=2 text=after")
        assert response.stop_reason == "end_turn"
        assert len(b.engine_acts("session/create")) == 1
        assert len(b.engine_acts("session/resume")) == 1

"""The 2026 ACP surface: session/delete, logout, session/fork (standard and extension),
additionalDirectories, advertised capabilities (docs/protocol-mapping.md)."""

from __future__ import annotations

import json
import os
from datetime import datetime

import pytest
from acp import RequestError

from tests.process.harness import bridge, file_contains, run


@run
async def test_initialize_advertises_delete_and_fork_but_not_logout_or_extra_roots(tmp_path):
    async with bridge(tmp_path) as b:
        answer = next(f["result"] for f in b.frames if b.methods.get(f.get("id")) == "initialize")
        capabilities = answer["agentCapabilities"]
        assert capabilities["sessionCapabilities"] == {"list": {}, "resume": {}, "close": {}, "delete": {}, "fork": {}}
        assert capabilities["auth"] == {}  # no "logout": the CLI keeps its own account


@run
async def test_logout_is_refused_by_name_not_silently_accepted(tmp_path):
    async with bridge(tmp_path) as b:
        with pytest.raises(RequestError) as err:
            await b.conn._conn.send_request("logout", {})
        assert err.value.code == -32601 and "logout" in str(err.value)
        # authenticate with the advertised method still works.
        await b.conn.authenticate(method_id="zcode-credentials")


@run
async def test_delete_removes_a_session_from_list_the_store_and_the_engine(tmp_path):
    async with bridge(tmp_path) as b:
        kept, doomed = await b.new_session(), await b.new_session()
        await b.prompt(kept, "#sim stream count=1")
        await b.prompt(doomed, "#sim stream count=1")
        backend_id = b.engine_acts("session/send")[-1]["params"]["sessionId"]
        listed = await b.conn.list_sessions(cwd="/tmp")
        assert {kept, doomed} <= {s.session_id for s in listed.sessions}

        assert await b.conn._conn.send_request("session/delete", {"sessionId": doomed}) == {}

        if os.environ.get("ZCODE_ACP_ENGINE_API") == "v4":
            # On v4 the engine's own deleteSession command deletes it (it leaves the workspace's index):
            # deleted, not merely closed (docs/v4.md, "Lifecycle").
            await file_contains(b.trace, '"deleteSession"')
            assert [c["params"]["sessionId"] for c in b.engine_acts("session/delete")] == [backend_id]
            assert not b.backend_calls("session/close")
        else:
            await file_contains(b.trace, '"session/close"')  # sent as the session is torn down
            closes = [c["params"]["sessionId"] for c in b.backend_calls("session/close")]
            assert closes == [backend_id]  # the engine's session is closed (classic: -32601, ignored)
        listed = await b.conn.list_sessions(cwd="/tmp")
        ids = {s.session_id for s in listed.sessions}
        assert kept in ids and doomed not in ids and backend_id not in ids
        with pytest.raises(RequestError) as err:
            await b.prompt(doomed, "again")
        assert err.value.code == -32002
        with pytest.raises(RequestError) as err:
            await b.conn.load_session(session_id=doomed, cwd="/tmp", mcp_servers=[])
        assert err.value.code == -32002
        store = tmp_path / "zcode-home" / "v2" / "acp-lazy-sessions.json"
        text = await file_contains(store, '"deleted"')
        assert json.loads(text)[doomed]["deleted"] is True
        # Deleting again is harmless (idempotent), and a bad id is -32602.
        assert await b.conn._conn.send_request("session/delete", {"sessionId": doomed}) == {}
        with pytest.raises(RequestError) as err:
            await b.conn._conn.send_request("session/delete", {})
        assert err.value.code == -32602 and "sessionId" in str(err.value.data or err.value)
    async with bridge(tmp_path) as again:  # another bridge on the same store: still gone
        listed = await again.conn.list_sessions(cwd="/tmp")
        ids = {s.session_id for s in listed.sessions}
        assert kept in ids and doomed not in ids and backend_id not in ids
        with pytest.raises(RequestError) as err:
            await again.conn.resume_session(session_id=doomed, cwd="/tmp", mcp_servers=[])
        assert err.value.code == -32002


@run
async def test_delete_of_a_listed_backend_session_hides_it(tmp_path):
    async with bridge(tmp_path) as first:
        sid = await first.new_session()
        await first.prompt(sid, "#sim stream count=1")
        backend_id = first.engine_acts("session/send")[-1]["params"]["sessionId"]
    async with bridge(tmp_path, env={"ZCODE_HOME": str(tmp_path / "other-home")}) as b:
        listed = await b.conn.list_sessions(cwd="/tmp")
        assert backend_id in {s.session_id for s in listed.sessions}  # not ours: listed by its backend id
        await b.conn._conn.send_request("session/delete", {"sessionId": backend_id})
        listed = await b.conn.list_sessions(cwd="/tmp")
        assert backend_id not in {s.session_id for s in listed.sessions}


@run
async def test_standard_and_extension_fork_both_answer_a_new_usable_session(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim stream count=1 text=S")
        standard = await b.conn.fork_session(session_id=sid, cwd="/tmp")
        extension = await b.conn.ext_method("session/fork", {"sessionId": sid})
        assert standard.session_id not in (sid, extension["sessionId"])
        assert standard.config_options and extension["configOptions"]
        for forked in (standard.session_id, extension["sessionId"]):
            response = await b.prompt(forked, "#sim stream count=2 text=F")
            assert response.stop_reason == "end_turn" and b.client.texts(forked) == "FF"
        assert len(b.engine_acts("session/fork")) == 2  # session/fork, or forkAssistant on the v4 path


@run
async def test_additional_directories_are_refused_naming_the_field_everywhere(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        extra = {"cwd": "/tmp", "additional_directories": ["/srv"]}
        calls = [
            lambda: b.conn.new_session(mcp_servers=[], **extra),
            lambda: b.conn.load_session(session_id=sid, mcp_servers=[], **extra),
            lambda: b.conn.resume_session(session_id=sid, mcp_servers=[], **extra),
            lambda: b.conn.fork_session(session_id=sid, **extra),
        ]
        for call in calls:
            with pytest.raises(RequestError) as err:
                await call()
            assert err.value.code == -32602 and "additionalDirectories" in str(err.value)
        assert not b.backend_calls("session/fork")
        # An empty list is no extra root at all: accepted.
        await b.conn.new_session(cwd="/tmp", mcp_servers=[], additional_directories=[])


BOOLEANS = {"_meta": {"terminal_output": True}, "session": {"configOptions": {"boolean": {}}}}


def plan_first(options: list[dict]) -> dict | None:
    return next((o for o in options if o["id"] == "planFirst"), None)


@run
async def test_the_plan_toggle_is_a_boolean_option_for_clients_that_opt_in(tmp_path):
    async with bridge(tmp_path, capabilities=BOOLEANS) as b:
        response = await b.conn.new_session(cwd="/tmp", mcp_servers=[])
        sid = response.session_id
        options = [o.model_dump(by_alias=True) for o in response.config_options]
        assert plan_first(options)["type"] == "boolean" and plan_first(options)["currentValue"] is False
        answer = await b.conn.set_config_option(config_id="planFirst", session_id=sid, value=True)
        options = [o.model_dump(by_alias=True) for o in answer.config_options]
        assert plan_first(options)["currentValue"] is True
        assert next(o for o in options if o["id"] == "mode")["currentValue"] == "plan"
        assert b.engine_acts("session/setMode")[-1]["params"]["mode"] == "plan"
        update = b.client.of_kind(sid, "config_option_update")[-1]
        assert plan_first(update["configOptions"])["currentValue"] is True
        # Off goes back to the mode the session had (yolo), on the engine too.
        await b.conn.set_config_option(config_id="planFirst", session_id=sid, value=False)
        assert b.engine_acts("session/setMode")[-1]["params"]["mode"] == "yolo"
        with pytest.raises(RequestError) as err:
            await b.conn._conn.send_request("session/set_config_option", {
                "sessionId": sid, "configId": "planFirst", "type": "boolean", "value": "yes"})
        assert err.value.code == -32602 and "value" in str(err.value)
        # The engine switching to plan mode itself turns the toggle on: config_option_update.
        await b.prompt(sid, "#sim plan_mode")
        await b.client.wait_for(lambda: plan_first(b.client.of_kind(sid, "config_option_update")[-1][
            "configOptions"])["currentValue"] is True)


@run
async def test_without_the_capability_there_is_no_boolean_option(tmp_path):
    async with bridge(tmp_path) as b:
        response = await b.conn.new_session(cwd="/tmp", mcp_servers=[])
        assert all(o.model_dump(by_alias=True)["type"] == "select" for o in response.config_options)
        with pytest.raises(RequestError) as err:
            await b.conn.set_config_option(config_id="planFirst", session_id=response.session_id, value=True)
        assert err.value.code == -32602 and "session.configOptions.boolean" in str(err.value)
        assert not b.engine_acts("session/setMode")


@run
async def test_the_title_update_carries_the_time_of_the_activity_and_usage_the_occupancy(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "Name this session please")
        await b.client.wait_for(lambda: b.client.of_kind(sid, "session_info_update"))
        info = b.client.of_kind(sid, "session_info_update")[-1]
        assert info["title"] == "Name this session please"
        assert datetime.fromisoformat(info["updatedAt"].replace("Z", "+00:00")).tzinfo is not None
        usage = b.client.of_kind(sid, "usage_update")[-1]
        assert 0 < usage["used"] < usage["size"]  # what the context holds now, out of its window
        assert "cost" not in usage  # neither engine reports a cost

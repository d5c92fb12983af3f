"""The 0.16 engine at the session level, through the official SDK client (docs/backend-protocol.md §11):
the model picker keeps the catalog, resume keeps the workspace identity and maps the engine's
``-32004`` to "not found", no removed method is called, the engine's slash commands are offered,
MCP servers are connected, plan mode is offered where it works."""

import pytest
from acp import RequestError

from tests.process.harness import bridge, run
from tests.sim.peer import SimPeer

pytestmark = pytest.mark.dialects("cli016")


def option(options, config_id):
    return next(o for o in options if o["id"] == config_id)


def model_values(options) -> list[str]:
    return [o["value"] for o in option(options, "model")["options"]]


@run
async def test_the_model_picker_keeps_the_whole_catalog_after_changes_and_turns(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim stream count=2")  # the create lists three models
        answer = await b.conn.set_config_option(session_id=sid, config_id="model", value="glm-5-air")
        assert model_values([o.model_dump(by_alias=True) for o in answer.config_options]) == [
            "glm-5", "glm-5-air", "glm-4.6-flash"]
        await b.prompt(sid, "#sim stream count=2")  # and a read, a state.updated: each lists one model
        updates = b.client.of_kind(sid, "config_option_update")
        assert updates and model_values(updates[-1]["configOptions"]) == ["glm-5", "glm-5-air", "glm-4.6-flash"]
        sent = b.models_selected()[-1]
        assert sent["providerId"] == "zhipu" and sent["modelId"] == "glm-5-air"


@run
async def test_an_unknown_session_on_resume_is_resource_not_found(tmp_path):
    async with bridge(tmp_path) as first:
        sid = await first.new_session()
        await first.prompt(sid, "#sim stream count=1")
        backend_id = first.engine_acts("session/send")[0]["params"]["sessionId"]
    (tmp_path / "sim-data" / f"{backend_id}.json").unlink()  # the engine no longer has it
    async with bridge(tmp_path) as second:
        with pytest.raises(RequestError) as err:
            await second.conn.load_session(session_id=sid, cwd="/tmp", mcp_servers=[])
        assert err.value.code == -32002 and sid in str(err.value)
        # (the trace is shared: on v4 the first bridge resumed its new session once too, for the catalog)
        resumed = [c for c in second.backend_calls() if c["method"] == "session/resume"][-1]
        assert resumed["params"]["sessionId"] == backend_id


@run
async def test_resume_keeps_the_workspace_identity(tmp_path):
    made = SimPeer(tmp_path, "cli016")  # a session made elsewhere (a desktop, a remote workspace)
    try:
        workspace = {"workspacePath": "/tmp", "workspaceKey": "ssh-box-tmp", "workspaceIdentity": "ssh://box/tmp"}
        created = made.result("session/create", {"workspace": workspace})
        backend_id = created["session"]["sessionId"]
    finally:
        made.close()
    async with bridge(tmp_path) as b:
        await b.conn.load_session(session_id=backend_id, cwd="/tmp", mcp_servers=[])
        [resumed] = b.backend_calls("session/resume")
        assert resumed["params"]["workspace"] == workspace


@run
async def test_removed_methods_are_refused_without_calling_the_engine(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim stream count=1")
        with pytest.raises(RequestError) as err:
            await b.conn.ext_method("session/rewind", {"sessionId": sid, "target": {"kind": "latestCheckpoint"}})
        assert err.value.code == -32601 and "removed" in str(err.value)
        assert b.backend_calls("session/rewind") == []
        assert b.backend_calls("session/steer") == []


@run
async def test_the_engines_own_slash_commands_are_offered(tmp_path):
    folder = tmp_path / "project" / ".zcode" / "commands"
    folder.mkdir(parents=True)
    (folder / "review.md").write_text("# Review the diff\n")
    async with bridge(tmp_path) as b:
        sid = await b.new_session(cwd=str(tmp_path / "project"))
        await b.prompt(sid, "#sim stream count=1")

        def offered() -> list[str]:
            listed = b.client.of_kind(sid, "available_commands_update")
            return [c["name"] for c in listed[-1]["availableCommands"]] if listed else []

        await b.client.wait_for(lambda: "review" in offered())
        names = offered()
        assert names[:6] == ["compact", "goal", "fork", "mode", "model", "thought"]  # the bridge's own first
        assert {"init", "plan", "review"} <= set(names) and names.count("compact") == 1


@run
async def test_mcp_servers_of_a_session_are_connected(tmp_path):
    async with bridge(tmp_path) as b:
        server = {"name": "docs", "command": "docs-mcp", "args": [], "env": []}
        response = await b.conn.new_session(cwd="/tmp", mcp_servers=[server])
        await b.prompt(response.session_id, "#sim stream count=1")
        await b.client.wait_for(lambda: b.backend_calls("mcp/list"))
        [connect] = b.backend_calls("mcp/list")
        assert connect["params"] == {"workspace": {"workspacePath": "/tmp", "workspaceKey": "/tmp"},
                                     "mode": "connect"}


@run
async def test_a_session_without_mcp_servers_connects_nothing(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim stream count=1")
        await b.client.wait_for(lambda: b.backend_calls("runtime/capabilities"))  # asked after the create
        assert b.backend_calls("mcp/list") == []


@run
async def test_plan_mode_is_offered_only_where_it_works(tmp_path):
    async with bridge(tmp_path, env={"ZCODE_SIM_VERSION": "0.16.5"}) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim stream count=1")
        await b.client.wait_for(lambda: b.client.of_kind(sid, "config_option_update") and "plan" not in [
            o["value"] for o in option(b.client.of_kind(sid, "config_option_update")[-1]["configOptions"],
                                       "mode")["options"]])
        with pytest.raises(RequestError) as err:
            await b.conn.set_session_mode(session_id=sid, mode_id="plan")
        assert err.value.code == -32602 and "0.16.9" in str(err.value)
        # no switch to plan was sent (v4: a made session's opening switch to the configured mode is one, docs/v4.md)
        assert [a for a in b.engine_acts("session/setMode") if a["params"]["mode"] == "plan"] == []
    async with bridge(tmp_path) as b:  # 0.16.9: plan works and stays offered
        sid = await b.new_session()
        await b.prompt(sid, "#sim stream count=1")
        await b.conn.set_session_mode(session_id=sid, mode_id="plan")
        assert b.engine_acts("session/setMode")[-1]["params"]["mode"] == "plan"

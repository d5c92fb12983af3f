"""Issue 32, "the model list on a first run, and always on the seed's dialect", through the official
SDK client on every dialect: with no catalog remembered, the first ``session/new`` is answered at
once with the placeholder and the engine is started behind it, so the catalog reaches the picker
(and the file) without a prompt; a model chosen before then is applied, or refused with the list,
once it is known (docs/sessions.md, "The model list from the start")."""

import json

from acp import RequestError

from tests.process.harness import bridge, file_contains, run

CATALOG_FILE = ("zcode-home", "v2", "acp-model-catalog.json")


def model_values(options) -> list[str]:
    [model] = [o for o in options if o["id"] == "model"]
    return [o["value"] for o in model["options"]]


def catalog_updates(b, sid) -> list[list[str]]:
    return [model_values(u["configOptions"]) for u in b.client.of_kind(sid, "config_option_update")]


@run
async def test_a_fresh_install_learns_the_catalog_without_a_prompt(tmp_path):
    async with bridge(tmp_path) as b:
        response = await b.conn.new_session(cwd="/tmp", mcp_servers=[])
        sid = response.session_id
        options = [o.model_dump(by_alias=True) for o in response.config_options]
        assert model_values(options) == ["default"]  # answered at once, before the engine listed anything
        await b.client.wait_for(lambda: any("glm-5-air" in values for values in catalog_updates(b, sid)))
        assert "default" not in catalog_updates(b, sid)[-1]
        stored = json.loads(await file_contains(tmp_path.joinpath(*CATALOG_FILE), "glm-5-air"))
        assert "glm-5-air" in json.dumps(stored["available"])
        assert b.backend_calls("session/send") == [] and b.engine_acts("session/send") == []  # no prompt


@run
async def test_the_next_run_offers_the_catalog_the_first_one_learned(tmp_path):
    async with bridge(tmp_path) as first:
        await first.new_session()
        await file_contains(tmp_path.joinpath(*CATALOG_FILE), "glm-5-air")
    async with bridge(tmp_path) as b:
        response = await b.conn.new_session(cwd="/tmp", mcp_servers=[])
        options = [o.model_dump(by_alias=True) for o in response.config_options]
        assert "glm-5-air" in model_values(options) and "default" not in model_values(options)


@run
async def test_a_model_chosen_before_the_catalog_is_known_is_applied_once_it_is(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        answer = await b.conn.set_config_option(session_id=sid, config_id="model", value="glm-5-air")
        options = [o.model_dump(by_alias=True) for o in answer.config_options]
        model = next(o for o in options if o["id"] == "model")
        assert model["currentValue"] == "glm-5-air" and "default" not in model_values(options)
        assert b.models_selected()[-1]["modelId"] == "glm-5-air"


@run
async def test_a_model_the_engine_does_not_list_is_refused_with_the_list(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        try:
            await b.conn.set_config_option(session_id=sid, config_id="model", value="no-such-model")
        except RequestError as error:
            assert error.code == -32602 and "no-such-model" in str(error) and "glm-5-air" in str(error)
        else:
            raise AssertionError("a model the engine does not list was accepted")
        assert b.models_selected() == []


@run
async def test_a_never_used_session_reopened_on_a_fresh_install_answers_with_the_catalog(tmp_path):
    # acpx's `sessions new` ends the bridge before the engine has answered; its `set model` reopens
    # the session in a new bridge and checks the choice against that answer's list.
    async with bridge(tmp_path) as first:
        sid = await first.new_session()
    (tmp_path.joinpath(*CATALOG_FILE)).unlink(missing_ok=True)  # as if the first bridge had learned nothing
    async with bridge(tmp_path) as b:
        response = await b.conn.resume_session(session_id=sid, cwd="/tmp", mcp_servers=[])
        options = [o.model_dump(by_alias=True) for o in response.config_options]
        assert "glm-5-air" in model_values(options) and "default" not in model_values(options)
        assert (await b.prompt(sid, "#sim stream count=1")).stop_reason == "end_turn"

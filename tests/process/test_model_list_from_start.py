"""Issue 21, "the model list from the start", through the official SDK client: the real catalog
from the first ``session/new`` (remembered under ``ZCODE_HOME`` from the last run), a choice from
it before the backend runs, ``config_option_update`` when the live catalog arrives, and the
unstable ``session/set_model`` / ``models`` older clients use (docs/sessions.md)."""

import asyncio
import json
import os
import stat

import pytest

from tests.process.harness import TIMEOUT, bridge, file_contains, run

pytestmark = pytest.mark.dialects("cli016")  # the seed's engine has no ref-keyed catalog to remember
CATALOG = ["glm-5", "glm-5-air", "glm-4.6-flash"]


def model_values(options) -> list[str]:
    [model] = [o for o in options if o["id"] == "model"]
    return [o["value"] for o in model["options"]]


async def remember_a_catalog(tmp_path) -> int:
    """A first run whose first prompt lists the engine's catalog; how many backend calls it made."""
    async with bridge(tmp_path) as first:
        sid = await first.new_session()
        await first.prompt(sid, "#sim stream count=1")
        await file_contains(tmp_path / "zcode-home" / "v2" / "acp-model-catalog.json", "glm-4.6-flash")
        return len(first.backend_calls())


@run
async def test_the_live_catalog_is_announced_when_it_arrives_and_remembered_privately(tmp_path):
    async with bridge(tmp_path) as b:
        response = await b.conn.new_session(cwd="/tmp", mcp_servers=[])
        sid = response.session_id
        options = [o.model_dump(by_alias=True) for o in response.config_options]
        assert model_values(options) == ["default"]  # nothing remembered yet: the placeholder
        await b.prompt(sid, "#sim stream count=1")
        await b.client.wait_for(lambda: any(model_values(u["configOptions"]) == CATALOG
                                            for u in b.client.of_kind(sid, "config_option_update")))
        path = tmp_path / "zcode-home" / "v2" / "acp-model-catalog.json"
        stored = json.loads(await file_contains(path, "glm-4.6-flash"))
        assert [e["ref"]["modelId"] for e in stored["available"]] == CATALOG
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


@run
async def test_the_first_session_new_offers_the_remembered_catalog(tmp_path):
    before = await remember_a_catalog(tmp_path)
    async with bridge(tmp_path) as b:
        response = await b.conn.new_session(cwd="/tmp", mcp_servers=[])
        raw = response.model_dump(by_alias=True)
        assert model_values(raw["configOptions"]) == CATALOG
        # Offered before this run made any backend session.
        assert [c for c in b.backend_calls()[before:] if c["method"] == "session/create"] == []
        # The unstable SessionModelState rides along (the SDK drops it; read the raw answer).
        answer = [f for f in b.frames if isinstance(f.get("result"), dict) and "models" in f["result"]]
        assert answer and [m["modelId"] for m in answer[-1]["result"]["models"]["availableModels"]] == CATALOG
        assert answer[-1]["result"]["models"]["currentModelId"] == "glm-5"


@run
async def test_a_model_chosen_before_the_backend_runs_is_the_one_the_engine_gets(tmp_path):
    await remember_a_catalog(tmp_path)
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        answer = await b.conn.set_config_option(session_id=sid, config_id="model", value="glm-5-air")
        options = [o.model_dump(by_alias=True) for o in answer.config_options]
        assert next(o for o in options if o["id"] == "model")["currentValue"] == "glm-5-air"
        assert b.models_selected()[-1] == {"providerId": "zhipu", "modelId": "glm-5-air",
                                           "options": {"reasoningLevel": "high"}}
        assert (await b.prompt(sid, "#sim stream count=1")).stop_reason == "end_turn"


@run
async def test_the_unstable_session_set_model_selects_a_model(tmp_path):
    await remember_a_catalog(tmp_path)
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        assert await b.conn._conn.send_request("session/set_model", {"sessionId": sid, "modelId": "glm-4.6-flash"}) == {}
        assert b.models_selected()[-1] == {
            "providerId": "zhipu", "modelId": "glm-4.6-flash"}


@run
async def test_a_catalog_file_that_never_reads_does_not_hold_session_new(tmp_path):
    folder = tmp_path / "zcode-home" / "v2"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "acp-model-catalog.json")  # opening it for reading blocks until a writer comes
    async with bridge(tmp_path) as b:
        response = await b.conn.new_session(cwd="/tmp", mcp_servers=[])  # answered once the wait gives up
        options = [o.model_dump(by_alias=True) for o in response.config_options]
        assert model_values(options) == ["default"]
        assert (await b.prompt(response.session_id, "#sim stream count=1")).stop_reason == "end_turn"


@run
async def test_a_temporary_file_left_by_a_killed_bridge_is_removed_at_start(tmp_path):
    folder = tmp_path / "zcode-home" / "v2"
    folder.mkdir(parents=True)
    leftover = folder / ".acp-model-catalog.json.999999999.tmp"  # no such process
    leftover.write_text("{")
    async with bridge(tmp_path) as b:
        await b.new_session()  # normally answered after the start-up read (which cleans)
        deadline = asyncio.get_running_loop().time() + TIMEOUT
        while leftover.exists():  # (bounded: the read may end after the 1 s wait on a loaded machine)
            assert asyncio.get_running_loop().time() < deadline, "the leftover was never removed"
            await asyncio.sleep(0.05)


def test_a_client_that_leaves_right_after_its_first_session_new_leaves_nothing_orphaned(tmp_path):
    """`acpx sessions new` exits once its session is answered: the engine's session, made in the
    background to learn the models, must be the one the next run resumes (its id stored), and the
    models remembered; else the next run makes a second engine session and learns them again."""
    from tests.process.raw import RawBridge

    bridge_ = RawBridge(tmp_path)
    bridge_.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
    bridge_.until(lambda f: f.get("id") == 0)
    bridge_.send({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": str(tmp_path), "mcpServers": []}})
    session_id = bridge_.until(lambda f: f.get("id") == 1)["result"]["sessionId"]
    assert bridge_.close() == 0  # stdin closed at once, as the client exits
    home = tmp_path / "zcode-home" / "v2"
    engine_sessions = [path.stem for path in (tmp_path / "sim").glob("sess_*.json")]
    stored = json.loads((home / "acp-lazy-sessions.json").read_text())
    assert len(engine_sessions) <= 1
    if engine_sessions:  # the create reached the engine before the teardown: its id and models are kept
        assert stored[session_id].get("zcodeSid") == engine_sessions[0]
        catalog = json.loads((home / "acp-model-catalog.json").read_text())
        assert [e["ref"]["modelId"] for e in catalog["available"]] == CATALOG

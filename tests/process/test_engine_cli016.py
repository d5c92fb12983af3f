"""The 0.16 engine (docs/backend-protocol.md §11): one test per difference, against the ``cli016`` simulator.

Everything else in tests/process runs against both dialects; these tests
concern the newer engine's habits only.
"""

import asyncio
import json
import os

import pytest

from tests.process.harness import bridge, run

pytestmark = pytest.mark.dialects("cli016")


def trace_start(b) -> dict:
    """The simulator's first trace line: the dialect and the provider variables it was given."""
    for line in b.trace.read_text().splitlines():
        entry = json.loads(line)
        if "start" in entry:
            return entry["start"]
    raise AssertionError("the simulator never started")


# -- row 3: provider configuration ------------------------------------------------------------


@run
async def test_provider_files_are_derived_for_the_child_when_absent(tmp_path):
    home = tmp_path / "zcode-home"
    builtin = home / "v2" / "runtime" / "provider" / "zhipu" / "3.15.0" / "abc" / "zcode-builtin.json"
    builtin.parent.mkdir(parents=True)
    builtin.write_text("{}")
    personal = home / "v2" / "provider_config.json"
    personal.write_text("{}")
    # Without both files a desktop engine exits at start: the prompt only works if the bridge named them.
    async with bridge(tmp_path, env={"ZCODE_SIM_PROVIDER_CONFIG": "exit"}) as b:
        sid = await b.new_session()
        assert (await b.prompt(sid, "hello")).stop_reason == "end_turn"
        assert trace_start(b)["env"] == {"ZCODE_BUILTIN_PROVIDER_CONFIG_FILE": str(builtin),
                                         "ZCODE_PERSONAL_PROVIDER_CONFIG_FILE": str(personal)}
    log = b.log.read_text()
    assert f"ZCODE_BUILTIN_PROVIDER_CONFIG_FILE={builtin} (derived" in log


@run
async def test_provider_files_the_user_set_are_never_overridden(tmp_path):
    home = tmp_path / "zcode-home"
    (home / "v2").mkdir(parents=True)
    (home / "v2" / "provider_config.json").write_text("{}")
    mine = tmp_path / "my-builtin.json"
    mine.write_text("{}")
    env = {"ZCODE_BUILTIN_PROVIDER_CONFIG_FILE": str(mine), "ZCODE_PERSONAL_PROVIDER_CONFIG_FILE": str(mine)}
    async with bridge(tmp_path, env=env) as b:
        sid = await b.new_session()
        assert (await b.prompt(sid, "hello")).stop_reason == "end_turn"
        assert trace_start(b)["env"] == env


# -- rows 5 and 10: stopping a turn, preemption, turn.started before the send's answer ------------

LONG = "#sim slow count=400 interval=0.05 text=old"  # 20 s unless really stopped
QUICK = 8.0  # a prompt after a stop must not wait for the stopped turn (busy retries would take 20 s)
SHORT_COUNT = 40
# On v4 a prompt during a turn waits for it (the engine queues it), so the turn it waits for is short.
SHORT = f"#sim slow count={SHORT_COUNT} interval=0.05 text=old"


def on_v4() -> bool:
    """The bridge runs on the engine's v4 data plane (the cli016-v4 run, tests/process/conftest.py)."""
    return os.environ.get("ZCODE_ACP_ENGINE_API") == "v4"


def turn_to_preempt() -> str:
    """The running turn a second prompt meets: long on the legacy path (it is stopped), short on v4."""
    return SHORT if on_v4() else LONG


def v4_stops(b) -> list[dict]:
    return [c["params"] for c in b.backend_calls("v4/command") if c["params"]["type"] == "stop"]


@run
async def test_cancel_of_a_long_turn_then_a_prompt_runs_at_once(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        first = asyncio.ensure_future(b.prompt(sid, LONG))
        await b.client.wait_for(lambda: "old" in b.client.texts(sid))
        await b.conn.cancel(session_id=sid)
        assert (await first).stop_reason == "cancelled"
        second = await b.prompt(sid, "#sim stream count=3 text=new", timeout=QUICK)
        assert second.stop_reason == "end_turn"
        [stop] = v4_stops(b)
        assert stop["payload"]["expectedForegroundExecutionId"].startswith("exec_")
        assert stop["clientId"] and stop["commandId"] and isinstance(stop["issuedAt"], int)
        if os.environ.get("ZCODE_ACP_ENGINE_API") == "v4":
            # By design: a v4 session reads the conversation topic, which the v4 stop settles; the
            # legacy stream that session/stop recovers is never subscribed (docs/v4.md, "Cancel").
            assert not b.backend_calls("session/stop")
        else:
            assert b.backend_calls("session/stop")  # sent too: it recovers the stream
        assert not b.backend_calls("session/close")  # the v4 stop was enough


@run
async def test_preemption_stops_the_running_turn_the_same_way(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        first = asyncio.ensure_future(b.prompt(sid, turn_to_preempt()))
        await b.client.wait_for(lambda: "old" in b.client.texts(sid))
        if on_v4():
            # By the engine's design a prompt during a turn is the engine's to route (its
            # ``inputRouting``; docs/v4.md, "Preemption"): the prompt waits in the engine's queue,
            # nothing is stopped, and it runs once the running turn has ended.
            second = await b.prompt(sid, "#sim stream count=3 text=new")
            assert (await first).stop_reason == second.stop_reason == "end_turn"
            text = b.client.texts(sid)
            assert "Queued:" in text and text.count("old") == SHORT_COUNT and text.endswith("new" * 3)
            assert v4_stops(b) == []
            return
        second = await b.prompt(sid, "#sim stream count=3 text=new", timeout=QUICK)
        assert (await first).stop_reason == "cancelled"
        assert second.stop_reason == "end_turn"
        assert b.client.texts(sid).endswith("new" * 3)
        assert len(v4_stops(b)) == 1


@run
async def test_a_turn_that_ignores_the_stop_is_closed_and_the_session_resumed(tmp_path):
    # A 3 s fallback: the next prompt waits that long, past the 1 s after which it says why.
    async with bridge(tmp_path, env={"ZCODE_ACP_STOP_FALLBACK": "3"}) as b:
        sid = await b.new_session()
        first = asyncio.ensure_future(b.prompt(sid, "#sim stubborn"))
        await b.client.wait_for(lambda: "will not stop" in b.client.texts(sid))
        await b.conn.cancel(session_id=sid)
        assert (await first).stop_reason == "cancelled"
        second = await b.prompt(sid, "#sim stream count=3 text=new", timeout=QUICK)
        assert second.stop_reason == "end_turn"
        assert "The previous turn has not stopped yet" in b.client.texts(sid)  # why the prompt waited
        methods = [c["method"] for c in b.backend_calls()]
        close = methods.index("session/close")
        # The v4 path streams the conversation topic, not the legacy event stream (docs/v4.md).
        subscribe = "v4/conversation/subscribe" if on_v4() else "session/subscribe"
        assert "session/resume" in methods[close:] and subscribe in methods[close:]
        if on_v4():  # the prompt that waited went to the engine after the resume, once
            sends = [i for i, c in enumerate(b.backend_calls()) if c["method"] == "v4/command"
                     and c["params"]["type"] == "sendText"]
            assert len(sends) == 2 and sends[-1] > methods.index("session/resume")
        # Resumed with the session's own workspace: the model selection survived (row 15).
        assert "Select a model" not in b.client.texts(sid)


@run
async def test_turn_started_before_the_send_answer_is_still_this_prompts_turn(tmp_path):
    async with bridge(tmp_path, env={"ZCODE_SIM_EARLY_START": "1"}) as b:
        sid = await b.new_session()
        for text in ("one", "two"):
            response = await b.prompt(sid, f"#sim stream count=4 text={text}")
            assert response.stop_reason == "end_turn"
            assert b.client.texts(sid).endswith(text * 4)
        first = asyncio.ensure_future(b.prompt(sid, turn_to_preempt()))
        await b.client.wait_for(lambda: "old" in b.client.texts(sid))
        if on_v4():
            # The engine routes a prompt during a turn (docs/v4.md, "Preemption"): queued, it runs
            # after the first turn, and its turn is still this prompt's, early start or not.
            third = await b.prompt(sid, "#sim stream count=2 text=three")
            assert (await first).stop_reason == third.stop_reason == "end_turn"
            assert b.client.texts(sid).endswith("three" * 2)
            assert v4_stops(b) == []
            return
        third = await b.prompt(sid, "#sim stream count=2 text=three", timeout=QUICK)  # preempts
        assert (await first).stop_reason == "cancelled" and third.stop_reason == "end_turn"
        assert b.client.texts(sid).endswith("three" * 2)


# -- row 9: the model catalog, reasoning levels per model ---------------------------------------------


def option(options, config_id):
    found = [o for o in options if o["id"] == config_id]
    return found[0] if found else None


async def config(b, sid, config_id, value):
    response = await b.conn.set_config_option(session_id=sid, config_id=config_id, value=value)
    return [o.model_dump(by_alias=True, exclude_none=True, mode="json") for o in response.config_options]


@run
async def test_switching_model_and_reasoning_level_from_the_ref_catalog(tmp_path):
    from acp import RequestError

    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        options = await config(b, sid, "thought", "max")  # creates the session: glm-5, levels low/high/max
        models = option(options, "model")
        assert models["currentValue"] == "glm-5"
        labels = {o["value"]: (o["name"], o.get("description")) for o in models["options"]}
        assert labels["glm-5"] == ("GLM-5", "200K context · reasoning: low, high, max")
        # On v4 too: the catalog is the resume snapshot's (the workspace-config topic carries no model option).
        assert labels["glm-4.6-flash"][1] == "128K context"
        assert option(options, "thought")["currentValue"] == "max"
        # glm-5-air has no "max": it is selected with its default level, and the selector follows it.
        options = await config(b, sid, "model", "glm-5-air")
        assert b.models_selected()[-1] == {
            "modelId": "glm-5-air", "providerId": "zhipu", "options": {"reasoningLevel": "high"}}
        thought = option(options, "thought")
        assert [o["value"] for o in thought["options"]] == ["low", "high"] and thought["currentValue"] == "high"
        with pytest.raises(RequestError) as refused:
            await config(b, sid, "thought", "max")
        assert refused.value.code == -32602
        # A model without reasoning levels: no level sent, no thought selector.
        options = await config(b, sid, "model", "glm-4.6-flash")
        assert b.models_selected()[-1] == {
            "modelId": "glm-4.6-flash", "providerId": "zhipu"}
        assert option(options, "thought") is None
        assert (await b.prompt(sid, "hello")).stop_reason == "end_turn"


# -- row 7: the title as an event type ---------------------------------------------------------------------


@run
async def test_the_title_event_becomes_a_session_info_update(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "Fix the login form validation please now")
        await b.client.wait_for(lambda: b.client.of_kind(sid, "session_info_update"))
        [info] = b.client.of_kind(sid, "session_info_update")
        assert info["title"] == "Fix the login form validation please"


# -- rows 11-15: goal, compaction, usage, close, resume -----------------------------------------------------


@run
async def test_goal_set_is_sent_as_set_and_compaction_waits_out_a_busy_engine(tmp_path):
    async with bridge(tmp_path, env={"ZCODE_SIM_COMPACT_SECONDS": "0.5"}) as b:
        sid = await b.new_session()
        goal = await b.conn.ext_method("session/goal", {"sessionId": sid, "action": "set", "objective": "Ship"})
        assert goal["response"] == "Goal: Ship (active)"
        # The engine's goal schema has "set": one call, never a second as "replace".
        assert [c["params"]["action"] for c in b.backend_calls("session/goal")] == ["set"]
        # Compaction while a turn holds the session: -32010, retried until it is free; its summary is the answer.
        turn = asyncio.ensure_future(b.prompt(sid, "#sim slow count=20 interval=0.05 text=."))
        await b.client.wait_for(lambda: "." in b.client.texts(sid))
        compaction = await b.conn.ext_method("session/compact", {"sessionId": sid})
        assert compaction["compact"]["state"] == "completed"
        assert (await turn).stop_reason == "end_turn"
        if os.environ.get("ZCODE_ACP_ENGINE_API") == "v4":
            # v4's compact during a turn is accepted and queued by the engine (goal-compact.ts): sent once,
            # reported done at its own end, after the turn's.
            assert len(b.engine_acts("session/compact")) == 1
        else:
            assert len(b.engine_acts("session/compact")) >= 2


@run
async def test_prompts_wait_for_the_engines_word_that_compaction_is_over_not_its_acceptance(tmp_path):
    # The engine accepts at once and compacts for longer than the bridge's whole busy allowance (0.5 s here):
    # a prompt sent when the answer came would meet -32010 until it gave up.
    env = {"ZCODE_SIM_COMPACT_SECONDS": "1.5", "ZCODE_ACP_BUSY_LIMIT": "0.5"}
    async with bridge(tmp_path, env=env) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim stream count=2 text=a")
        # One connection, two requests in this order: the bridge reads the compaction first.
        compaction = asyncio.ensure_future(b.conn.ext_method("session/compact", {"sessionId": sid}))
        prompt = asyncio.ensure_future(b.prompt(sid, "#sim stream count=2 text=b"))
        await b.client.wait_for(lambda: "compaction to finish" in b.client.texts(sid))  # why it waits
        result = await compaction
        assert result["compact"]["state"] == "completed" and result["compact"]["operationId"]
        assert (await prompt).stop_reason == "end_turn"
        sent = b.engine_acts("session/send")[-1]["params"]
        assert sent.get("content", sent.get("text")).endswith("text=b")  # session/send's content, sendText's text


@pytest.mark.parametrize("outcome", ["failed", "cancelled"])
@run
async def test_a_compaction_that_fails_or_is_cancelled_is_not_reported_done(tmp_path, outcome):
    env = {"ZCODE_SIM_COMPACT_SECONDS": "1.0", "ZCODE_SIM_COMPACT_OUTCOME": outcome}
    async with bridge(tmp_path, env=env) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim stream count=2 text=a")
        compaction = asyncio.ensure_future(b.prompt(sid, "/compact"))  # the sim's engine fails or cancels it
        assert (await compaction).stop_reason == "end_turn"
        text = b.client.texts(sid)
        assert "Conversation compacted." not in text
        assert ("/compact failed" in text and "compaction failed" in text) if outcome == "failed" \
            else "Compaction cancelled" in text


@run
async def test_the_context_meter_shows_occupancy_not_cumulative_tokens(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        for _ in range(3):
            await b.prompt(sid, "Show me around")  # tools: the turn reads session/read before answering
        meters = b.client.of_kind(sid, "usage_update")
        assert meters and meters[-1]["size"] == 200_000
        # Three turns each re-send the whole context: the cumulative count is far above what the context holds.
        assert meters[-1]["used"] < 2 * meters[0]["used"] + 2000


@run
async def test_acp_close_closes_the_engine_session(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "hello")
        backend_id = b.engine_acts("session/send")[0]["params"]["sessionId"]
        await b.conn.close_session(session_id=sid)
        for _ in range(100):
            if b.backend_calls("session/close"):
                break
            await asyncio.sleep(0.02)  # polling a file the simulator appends to
        assert [c["params"] for c in b.backend_calls("session/close")] == [{"sessionId": backend_id}]


@run
async def test_a_session_made_elsewhere_is_resumed_under_its_own_workspace_key(tmp_path):
    async with bridge(tmp_path) as first:
        sid = await first.new_session()
        await first.prompt(sid, "hello")
        backend_id = first.engine_acts("session/send")[0]["params"]["sessionId"]
    # As the desktop app made it: the same folder under a key of its own.
    stored = tmp_path / "sim-data" / f"{backend_id}.json"
    data = json.loads(stored.read_text())
    data["workspace"] = {"workspacePath": "/tmp", "workspaceKey": "desktop-ws-7f3a"}
    stored.write_text(json.dumps(data))
    async with bridge(tmp_path, env={"ZCODE_HOME": str(tmp_path / "other-home")}) as second:
        await second.conn.resume_session(session_id=backend_id, cwd="/tmp", mcp_servers=[])
        response = await second.prompt(backend_id, "hello again")
        assert response.stop_reason == "end_turn"  # a resume under /tmp as its key would have lost the model
        [resume] = second.backend_calls("session/resume")[-1:]
        assert resume["params"]["workspace"]["workspaceKey"] == "desktop-ws-7f3a"


# -- row 17: the version floor --------------------------------------------------------------------------------


@run
@pytest.mark.dialects("classic", "cli016")
async def test_a_cli_without_session_subscribe_is_refused_naming_the_version_floor(tmp_path):
    from acp import RequestError

    async with bridge(tmp_path, env={"ZCODE_SIM_VERSION": "0.14.6"}) as b:
        sid = await b.new_session()
        with pytest.raises(RequestError) as refused:
            await b.prompt(sid, "hello", timeout=5)
        message = str(refused.value)
        assert refused.value.code != -32601
        assert "0.14.8" in message and "0.15.0" in message and "session/subscribe" in message
        if on_v4():
            # The v4 path asks the v4 data plane, which this simulated CLI lacks as well: the refusal
            # says what is known to answer it (3.14.4 / CLI 0.16.9, no floor claimed: docs/v4.md) and
            # the way back to the legacy stream, at the first v4 command (the create), with no retry.
            assert "0.16.9" in message and "ZCODE_ACP_ENGINE_API" in message and "0.16.0" not in message
            assert len(b.engine_acts("session/create")) == 1 and not b.backend_calls("session/subscribe")
            return
        assert len(b.backend_calls("session/subscribe")) == 1  # at once: no retry

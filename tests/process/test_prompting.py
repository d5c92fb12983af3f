"""The real bridge process on the simulated backend, driven by the official SDK."""

import asyncio
import os
import time

import pytest
from acp import RequestError, text_block

from tests.process.harness import AT_ONCE, bridge, eventually, run


def on_v4() -> bool:
    """The bridge runs on the engine's v4 data plane (the cli016-v4 run, tests/process/conftest.py)."""
    return os.environ.get("ZCODE_ACP_ENGINE_API") == "v4"


@run
async def test_a_prompt_streams_text_thoughts_and_tool_cards(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        assert b.backend_calls() == []  # session/new is lazy: no backend yet
        response = await b.prompt(sid, "Show me around")
        assert response.stop_reason == "end_turn"
        assert response.usage is not None and response.usage.output_tokens > 0
        client = b.client
        assert "Let me look at the project." in client.texts(sid)
        assert "README first" in client.texts(sid, "agent_thought_chunk")
        cards = {c["toolCallId"]: c for c in client.of_kind(sid, "tool_call")}
        assert sorted(c["title"] for c in cards.values()) == ["Bash: ls -la", "Read: README.md"]
        updates = client.of_kind(sid, "tool_call_update")
        terminal = "".join(u["_meta"]["terminal_output"]["data"] for u in updates
                           if "terminal_output" in (u.get("_meta") or {}))
        # Cumulative tails arrive as suffixes: every line exactly once.
        assert terminal == "total 8\ndrwxr-xr-x  src\n-rw-r--r--  README.md\n"
        exits = [u for u in updates if "terminal_exit" in (u.get("_meta") or {})]
        assert len(exits) == 1 and exits[0]["status"] == "completed"
        assert {u["toolCallId"] for u in updates if u.get("status") == "completed"} == set(cards)
        # On v4 the prompt is a sendText command and the stream the conversation topic (docs/v4.md).
        calls = [c["method"] if c["method"] != "v4/command" else c["params"].get("type") for c in b.backend_calls()]
        subscribe, send = ("v4/conversation/subscribe", "sendText") if on_v4() else ("session/subscribe", "session/send")
        assert calls.index(subscribe) < calls.index(send)  # subscribe before send
        assert len(b.frames) > 20  # every one of them was schema-validated on arrival
        await client.wait_for(lambda: client.of_kind(sid, "plan"))
        assert client.of_kind(sid, "plan")[-1]["entries"][0]["content"] == "Read the README"


@run
async def test_cancel_answers_cancelled_at_once_and_stops_the_backend(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        prompt = asyncio.ensure_future(b.prompt(sid, "#sim hang"))
        await b.client.wait_for(lambda: "Thinking very hard" in b.client.texts(sid))
        started = time.monotonic()
        await b.conn.cancel(session_id=sid)
        response = await prompt
        elapsed = time.monotonic() - started
        assert response.stop_reason == "cancelled"
        assert elapsed < AT_ONCE, f"cancel took {elapsed:.3f}s"
        # The legacy path sends session/stop (and, to the 0.16 engine, the v4 stop beside it); the v4
        # path the v4 stop alone.
        def stops():
            return b.engine_acts("session/stop") if on_v4() else b.backend_calls("session/stop")

        assert len(await eventually(stops, bool)) == 1  # (the stop may reach the trace after the answer)


@run
async def test_a_new_prompt_preempts_the_running_one(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        first = asyncio.ensure_future(b.prompt(sid, "#sim slow count=500 interval=0.01 text=old"))
        await b.client.wait_for(lambda: "old" in b.client.texts(sid))
        if on_v4():
            # By the engine's design a prompt during a turn is the engine's to route (its
            # ``inputRouting``; docs/decisions.md, "The bridge's v4 path"): this one waits in the
            # engine's queue, nothing is stopped, and it runs once the first turn has ended.
            second = await b.prompt(sid, "#sim stream count=5 text=new")
            assert (await first).stop_reason == second.stop_reason == "end_turn"
            text = b.client.texts(sid)
            assert "Queued:" in text and text.count("old") == 500 and text.endswith("new" * 5)
            assert "old" not in text[text.index("new"):]
            assert len(b.engine_acts("session/send")) == 2 and b.engine_acts("session/stop") == []
            return
        second = await b.prompt(sid, "#sim stream count=5 text=new")
        assert (await first).stop_reason == "cancelled"
        assert second.stop_reason == "end_turn"
        text = b.client.texts(sid)
        assert text.endswith("new" * 5)
        assert "(leftover)" not in text  # the stopped turn's late events never reach the client
        assert "old" not in text[text.index("new"):]


@run
async def test_two_sessions_stream_at_once_without_cross_talk(tmp_path):
    async with bridge(tmp_path) as b:
        one, two = await b.new_session(), await b.new_session()
        first, second = await asyncio.gather(
            b.prompt(one, "#sim stream count=300 text=A"), b.prompt(two, "#sim stream count=300 text=B"))
        assert first.stop_reason == second.stop_reason == "end_turn"
        assert b.client.texts(one) == "A" * 300
        assert b.client.texts(two) == "B" * 300


@run
async def test_a_sequence_gap_is_filled_in_order_and_duplicates_dropped(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim gap")
        assert b.client.texts(sid) == "one two three four"
        if not on_v4():
            assert any(c["params"].get("afterSeq") is not None for c in b.backend_calls("session/subscribe"))
            return
        # The hole above is in the legacy event stream, which the v4 path does not read (docs/v4.md);
        # the conversation topic's own holes are what it fills: a resync from the seq it holds, and a
        # duplicate frame dropped.
        await b.prompt(sid, "#sim v4fault fault=gap count=4 text=tick")
        await b.prompt(sid, "#sim v4fault fault=duplicate count=4 text=tock")
        assert b.client.texts(sid) == "one two three four" + "tick" * 4 + "tock" * 4
        assert any(c["params"].get("base") is not None for c in b.backend_calls("v4/conversation/resync"))


@run
async def test_a_failed_turn_is_an_internal_error_with_the_backend_message(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        with pytest.raises(RequestError) as err:
            await b.prompt(sid, "#sim fail code=context_overflow message=too-long")
        assert err.value.code == -32603
        assert "too-long" in str(err.value) and "context_overflow" in str(err.value)


@run
async def test_a_failed_turn_is_final_the_prompt_is_never_sent_twice(tmp_path):
    # The engine retries transient failures itself and has stored the user's message: a turn.failed is
    # its last word, and a second send would put the prompt in the history twice.
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        with pytest.raises(RequestError) as err:
            await b.prompt(sid, "#sim fail code=model_rate_limited message=slow-down times=1")
        assert err.value.code == -32603 and "slow-down" in str(err.value)
        assert len(b.engine_acts("session/send")) == 1


@run
async def test_a_retry_the_engine_makes_itself_is_shown_while_it_lasts_and_not_resent(tmp_path, sim_dialect):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        response = await b.prompt(sid, "#sim retry attempts=2")
        assert response.stop_reason == "end_turn"
        assert len(b.engine_acts("session/send")) == 1
        cards = [c for c in b.client.of_kind(sid, "tool_call") if c["toolCallId"].startswith("zcode-retry-")]
        # Only the 0.16 engine also recovers the interrupted stream (streamRecovery.updated).
        assert [c["status"] for c in cards] == ["in_progress"] * (2 if sim_dialect == "cli016" else 1)
        assert "Retrying the model request (1/10)" in cards[0]["title"]
        assert sim_dialect != "cli016" or "Recovering" in cards[1]["title"]
        updates = b.client.of_kind(sid, "tool_call_update")
        first = [u for u in updates if u["toolCallId"] == cards[0]["toolCallId"]]
        assert any("(2/10)" in (u.get("title") or "") for u in first)  # each attempt, as it happens
        for card in cards:  # each closes once the engine got through, before the answer
            assert [u["status"] for u in updates if u["toolCallId"] == card["toolCallId"] and "status" in u] \
                == ["completed"]
        # Issue 32: no finished card keeps an interim title ("… (2/10)"); it says how it ended.
        finals = [[u.get("title") for u in updates if u["toolCallId"] == card["toolCallId"]][-1] for card in cards]
        assert finals == ["The model request went through after retrying",
                          "The interrupted model stream was recovered"][:len(cards)]
        assert b.client.texts(sid).endswith("Recovered and done.")


@pytest.mark.parametrize("result_type, stop_reason", [
    ("error_max_turns", "max_turn_requests"), ("error_max_tool_calls", "max_turn_requests"),
    ("error_max_budget", "max_tokens"), ("cancelled", "cancelled")])
@run
async def test_error_endings_map_to_their_stop_reasons(tmp_path, result_type, stop_reason):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        if on_v4() and stop_reason != "cancelled":
            # By the engine's design: its conversation ends an error ending of turn.completed in the
            # ``error`` phase with no ``lastError`` and a ``failed`` header — which limit it was is not
            # projected (docs/v4.md, "Error endings"), so the bridge cannot name a stop reason and
            # fails the prompt, with the turn's last words.
            with pytest.raises(RequestError) as err:
                await b.prompt(sid, f"#sim end result={result_type} text=so-far")
            assert err.value.code == -32603 and "before it finished" in str(err.value) and "so-far" in str(err.value)
            assert (await b.prompt(sid, "#sim stream count=2")).stop_reason == "end_turn"
            return
        response = await b.prompt(sid, f"#sim end result={result_type}")
        assert response.stop_reason == stop_reason
        if stop_reason != "cancelled":
            assert "ZCode stopped" in b.client.texts(sid)


@run
async def test_an_error_during_execution_fails_the_prompt_with_the_engines_words(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        with pytest.raises(RequestError) as err:
            await b.prompt(sid, "#sim end result=error_during_execution text=the-disk-is-full")
        assert err.value.code == -32603 and "the-disk-is-full" in str(err.value)
        assert (await b.prompt(sid, "#sim stream count=2")).stop_reason == "end_turn"


@run
async def test_backend_death_fails_the_prompt_quickly_and_the_next_prompt_works(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        started = time.monotonic()
        with pytest.raises(RequestError) as err:
            await b.prompt(sid, "#sim die")
        assert err.value.code == -32603 and "exited" in str(err.value)
        assert time.monotonic() - started < AT_ONCE
        other = await b.new_session()
        response = await b.prompt(other, "#sim stream count=3")
        assert response.stop_reason == "end_turn"


@run
async def test_client_errors_get_clear_json_rpc_errors(tmp_path):
    async with bridge(tmp_path) as b:
        with pytest.raises(RequestError) as err:
            await b.conn.prompt(session_id="no-such-session", prompt=[text_block("hi")])
        assert err.value.code == -32002 and "no-such-session" in str(err.value)
        sid = await b.new_session()
        with pytest.raises(RequestError) as err:
            await b.conn.prompt(session_id=sid, prompt=[text_block("   ")])
        assert err.value.code == -32602
        with pytest.raises(RequestError) as err:
            await b.conn.new_session(cwd="relative/path", mcp_servers=[])
        assert err.value.code == -32602 and "cwd" in str(err.value)
        with pytest.raises(RequestError) as err:
            await b.conn._conn.send_request("session/frobnicate", {})
        assert err.value.code == -32601
        with pytest.raises(RequestError) as err:
            await b.conn._conn.send_request("_zcode/unknown", {})
        assert err.value.code == -32601


@run
async def test_a_missing_cli_is_named_only_when_first_needed(tmp_path):
    async with bridge(tmp_path, env={"ZCODE_BIN": str(tmp_path / "no-such-zcode")}) as b:
        sid = await b.new_session()  # initialize and session/new never start the backend
        with pytest.raises(RequestError) as err:
            await b.prompt(sid, "hello")
        assert err.value.code == -32603 and "ZCODE_BIN" in str(err.value)

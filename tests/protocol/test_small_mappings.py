import pytest
from hypothesis import given
from hypothesis import strategies as st

from zcode_acp.protocol import handshake, session_config, tools, usage
from zcode_acp.protocol.errors import RpcError, from_backend_error, is_busy
from tests.schema import assert_valid_result


@given(st.text(max_size=50), st.text(max_size=50))
def test_new_suffix_of_a_growing_snapshot_is_exactly_the_growth(old, growth):
    assert tools.new_suffix(old, old + growth) == growth


def test_new_suffix_of_a_front_trimmed_tail():
    sent = "line1\nline2\nline3\n"
    assert tools.new_suffix(sent, "line2\nline3\nline4\n") == "line4\n"
    assert tools.new_suffix(sent, "line3\n") == ""


def test_prompt_usage_is_cache_exclusive_and_keeps_backend_extras():
    result = usage.prompt_result("end_turn", {
        "source": "api", "modelRequestCount": 2, "inputTokens": 1500, "outputTokens": 100, "totalTokens": 1600,
        "cacheReadTokens": 1000, "cacheWriteTokens": 200, "reasoningTokens": 30,
        "webFetchRequests": 1, "webSearchRequests": 0})
    assert result["usage"] == {"inputTokens": 300, "outputTokens": 100, "totalTokens": 1600, "thoughtTokens": 30,
                               "cachedReadTokens": 1000, "cachedWriteTokens": 200}
    assert result["_meta"]["zcode"]["usage"] == {"source": "api", "modelRequestCount": 2,
                                                 "webFetchRequests": 1, "webSearchRequests": 0}
    assert_valid_result("session/prompt", result)


def test_prompt_result_without_usage_omits_it():
    assert usage.prompt_result("cancelled") == {"stopReason": "cancelled"}


def test_initialize_answer_matches_the_schema_and_never_offers_audio():
    result = handshake.initialize_result(1, "1.2.3")
    assert_valid_result("initialize", result)
    caps = result["agentCapabilities"]
    assert caps["loadSession"] and not caps["promptCapabilities"]["audio"]
    assert result["agentInfo"] == {"name": "zcode-acp", "title": "ZCode", "version": "1.2.3"}


def test_initialize_rejects_a_non_integer_version():
    with pytest.raises(RpcError) as err:
        handshake.initialize_result("1", "x")
    assert err.value.code == -32602 and "protocolVersion" in err.value.message


def test_authenticate_knows_only_its_method():
    assert handshake.authenticate_result("zcode-credentials") == {}
    with pytest.raises(RpcError):
        handshake.authenticate_result("api-key")


def test_capabilities_or_merge():
    merged = handshake.merge_capabilities({}, {"fs": {"readTextFile": True}, "_meta": {"terminal_output": False}})
    merged = handshake.merge_capabilities(merged, {"fs": {"readTextFile": False}, "_meta": {"terminal_output": True},
                                                   "elicitation": {"form": {}}})
    assert merged["fs"]["readTextFile"] is True
    assert handshake.supports_terminal_output(merged)
    assert handshake.supports_elicitation_form(merged)


def test_session_state_matches_the_schema():
    state = session_config.session_state(session_config.SessionSettings())
    assert_valid_result("session/new", {"sessionId": "s", **state})
    assert [o["id"] for o in state["configOptions"]] == ["mode", "model", "thought"]
    assert state["modes"]["currentModeId"] == "yolo"


def test_backend_settings_and_patches_fold_in():
    settings = session_config.SessionSettings().with_backend_settings({
        "mode": {"current": "plan"},
        "model": {"current": {"modelId": "glm-5"}, "available": [{"modelId": "glm-5", "name": "GLM-5"}]},
        "thoughtLevel": {"current": "max"}})
    assert (settings.mode, settings.model, settings.thought) == ("plan", "glm-5", "max")
    assert settings.with_patch({"mode": {"current": "build"}}).mode == "build"


def test_busy_and_method_not_found_errors():
    assert is_busy({"code": 1308, "message": "prompt is running"})
    assert is_busy({"code": -32010, "message": "A prompt is already running for this session"})
    assert not is_busy({"code": -32603, "message": "x"})
    error = from_backend_error({"code": -32601, "message": "nope"}, "session/rewind")
    assert error.code == -32601 and "session/rewind" in error.message and "ZCode CLI" in error.message


def test_extension_calls_forward_only_the_keys_the_engine_schema_has() -> None:
    """The 0.16 engine checks params strictly: a client's extra keys would fail the whole call."""
    from zcode_acp.protocol import extension_calls

    compact = extension_calls.compact({"sessionId": "s", "instructions": "keep the API", "_meta": {}})
    assert compact.params == {"instructions": "keep the API"}
    rewind = extension_calls.rewind({"sessionId": "s", "checkpointId": "c1", "force": True})
    assert rewind.params == {"checkpointId": "c1"}
    cancel = extension_calls.cancel_task({"sessionId": "s", "taskId": "t1", "force": True})
    assert cancel == extension_calls.TaskStop("t1")  # sent as {taskId} alone (Controls.cancel_task)
    steer = extension_calls.steer({"sessionId": "s", "content": "go", "priority": 1})
    assert steer == extension_calls.Steer("go")  # sent as {content} alone (Controls.steer)

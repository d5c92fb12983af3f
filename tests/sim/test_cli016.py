"""The 0.16 engine (ZCODE_SIM_DIALECT=cli016): one test (or more) per row of the evidence table.

Where the seed's dialect differs, the same test checks ``classic`` keeps its old behaviour.
"""

from __future__ import annotations

import json
import subprocess
import uuid

import pytest

from tests.sim.peer import SIM, SimPeer


def command(peer: SimPeer, sid: str, kind: str, payload: dict, command_id: str | None = None) -> dict:
    return peer.result("v4/command", {"commandId": command_id or uuid.uuid4().hex, "clientId": "tests",
                                      "sessionId": sid, "type": kind, "payload": payload, "issuedAt": 1})


def running(peer: SimPeer, sid: str, prompt: str = "#sim hang") -> tuple[int, dict]:
    """Start a turn; (the frame index it started at, its turn.started event)."""
    start, send_id = peer.send_prompt(sid, prompt)
    assert "result" in peer.answer_to(send_id)
    return start, peer.event(sid, "turn.started", start)


def never_completed(peer: SimPeer, sid: str, turn_id: str) -> bool:
    """After a close: a new turn runs (0.4 s, far past when leftovers of a stopped turn come), and the
    closed turn's turn.completed is in no event the session ever logged."""
    logged = peer.result("session/subscribe", {"sessionId": sid, "deliveryKind": "desktop-continuous",
                                               "includeSnapshot": False, "afterSeq": 0})["events"]
    assert peer.turn(sid, "#sim slow count=20 interval=0.02")
    logged += peer.result("session/subscribe", {"sessionId": sid, "deliveryKind": "desktop-continuous",
                                                "includeSnapshot": False, "afterSeq": logged[-1]["seq"]})["events"]
    return not [e for e in logged if e.get("turnId") == turn_id and e["type"] == "turn.completed"]


# -- row 1: server→bridge request ids -------------------------------------------------------

def test_row1_server_request_ids_are_strings_today_and_integers_in_classic(sim: SimPeer) -> None:
    sim.create()
    [request] = sim.requests("session/requestRuntimePreferences")
    if sim.dialect == "cli016":
        assert isinstance(request["id"], str) and request["id"].startswith("server-")
    else:
        assert isinstance(request["id"], int)


# -- row 2: the create handshake --------------------------------------------------------------

def test_row2_create_asks_only_the_preferences_with_the_new_session_id(today: SimPeer) -> None:
    # The engine's source asks provider headers before each model request (host auth mode only),
    # never during create; official MCP auth only for an official plugin's server.
    result = today.result("session/create", {"workspace": today.workspace(), "mode": "yolo"})
    sid = result["session"]["sessionId"]
    asked = [f for f in today.frames if "method" in f and "id" in f]
    assert [f["method"] for f in asked] == ["session/requestRuntimePreferences"]
    assert asked[0]["params"] == {"scope": "runtime-materialization", "sessionId": sid}
    assert result["session"]["title"] == "" and result["session"]["traceId"]


def test_row2_classic_asks_preferences_with_empty_params(start) -> None:
    classic = start("classic")
    classic.create()
    assert [f["params"] for f in classic.frames if f.get("method", "").startswith(("interaction/", "session/req"))] \
        == [{}]


def test_row2_standalone_mode_never_asks_for_provider_headers(today: SimPeer) -> None:
    sid = today.create()
    assert today.text_of(today.turn(sid, "#sim text")) and \
        today.requests("interaction/requestProviderRuntimeHeaders") == []


def test_row2_host_mode_asks_before_the_model_request_and_nothing_applied_fails_it(start) -> None:
    peer = start("cli016", env={"ZCODE_APP_SERVER_AUTH_MODE": "host"})
    sid = peer.create()
    start, _ = peer.send_prompt(sid, "#sim text")
    failed = peer.event(sid, "turn.failed", start)
    [asked] = peer.requests("interaction/requestProviderRuntimeHeaders")
    assert asked["params"]["sessionId"] == sid and asked["params"]["reason"] and asked["params"]["turnId"]
    assert failed["payload"]["error"]["message"] == "the test peer has no runtime headers"


def test_row2_host_mode_with_headers_applied_runs_the_turn(start) -> None:
    peer = start("cli016", env={"ZCODE_APP_SERVER_AUTH_MODE": "host"})
    peer.auto["interaction/requestProviderRuntimeHeaders"] = \
        lambda frame: {"result": {"headersApplied": True, "requestAuth": {"apiKey": "k"}}}
    sid = peer.create()
    assert not [e for e in peer.turn(sid, "#sim text") if e["type"] == "turn.failed"]


@pytest.mark.parametrize("answer,said", [
    ({"result": {"ok": False, "reason": "official_auth_unavailable"}}, "unavailable: official_auth_unavailable"),
    ({"result": {"ok": True, "headers": {"Authorization": "Bearer x"}}}, "connected"),
    ({"result": {"headersApplied": False}}, "unavailable: official_auth_unavailable"),  # unreadable
    ({"error": {"code": -32601, "message": "Method not found"}}, "unavailable: official_auth_unavailable"),
])
def test_row2_official_mcp_auth_has_its_real_params_and_a_strict_answer(start, answer, said) -> None:
    peer = start("cli016")
    peer.auto["interaction/requestOfficialMcpAuthHeaders"] = lambda frame: answer
    sid = peer.create()
    text = peer.text_of(peer.turn(sid, "#sim official_mcp"))
    [asked] = peer.requests("interaction/requestOfficialMcpAuthHeaders")
    assert set(asked["params"]) == {"requestId", "workspace", "pluginId", "mcpKey", "targetOrigin"}
    assert text.endswith(said)


def test_row2_questions_answer_themselves_when_the_host_leaves_auto_resolution_on(start) -> None:
    peer = start("cli016", env={"ZCODE_SIM_AUTO_RESOLVE": "0.2"})
    peer.auto["session/requestRuntimePreferences"] = lambda frame: {"result": {"nativeSearchEnhancementsEnabled": False}}
    sid = peer.create()
    assert peer.text_of(peer.turn(sid, "#sim questions")) == "Answers: {}"


# -- row 3: provider configuration files --------------------------------------------------------

def test_row3_without_provider_files_the_engine_exits_when_asked_to(tmp_path, start) -> None:
    peer = start("cli016", env={"ZCODE_SIM_PROVIDER_CONFIG": "exit"})
    assert peer.proc.wait(timeout=10) == 1
    stderr = peer.stderr_path.read_text()
    assert "ZCODE_BUILTIN_PROVIDER_CONFIG_FILE" in stderr and "ZCODE_PERSONAL_PROVIDER_CONFIG_FILE" in stderr


def test_row3_with_provider_files_it_serves_and_records_them(tmp_path, start) -> None:
    builtin, personal = tmp_path / "zcode-builtin.json", tmp_path / "provider_config.json"
    builtin.write_text("{}")
    personal.write_text("{}")
    peer = start("cli016", env={"ZCODE_SIM_PROVIDER_CONFIG": "exit",
                               "ZCODE_BUILTIN_PROVIDER_CONFIG_FILE": str(builtin),
                               "ZCODE_PERSONAL_PROVIDER_CONFIG_FILE": str(personal)})
    peer.create()
    [start_line] = [line["start"] for line in peer.trace() if "start" in line]
    assert start_line["env"] == {"ZCODE_BUILTIN_PROVIDER_CONFIG_FILE": str(builtin),
                                 "ZCODE_PERSONAL_PROVIDER_CONFIG_FILE": str(personal)}


def test_row3_without_provider_files_create_can_hang(start) -> None:
    peer = start("cli016", env={"ZCODE_SIM_PROVIDER_CONFIG": "hang"})
    create_id = peer.request("session/create", {"workspace": peer.workspace()})
    peer.result("session/list")  # answered after the create was handled ...
    assert not [f for f in peer.frames if f.get("id") == create_id]  # ... which never is


# -- row 4: strict MCP entries ----------------------------------------------------------------

GOOD_MCP = [{"name": "files", "command": "mcp-files", "args": ["--root", "/tmp"], "env": [{"name": "A", "value": "1"}]},
            {"name": "docs", "type": "http", "url": "https://127.0.0.1:9/mcp", "headers": []},
            {"name": "events", "type": "sse", "url": "https://127.0.0.1:9/sse",
             "headers": [{"name": "Authorization", "value": "Bearer x"}]}]
BAD_MCP = {
    "_meta": ({"name": "a", "command": "c", "args": [], "env": [], "_meta": {"x": 1}},
              "mcpServers.0: Unrecognized key(s) in object: '_meta'"),
    "type stdio": ({"name": "a", "type": "stdio", "command": "c", "args": [], "env": []},
                   "mcpServers.0: Unrecognized key(s) in object: 'type'"),
    "env as a map": ({"name": "a", "command": "c", "args": [], "env": {"A": "1"}},
                     "mcpServers.0.env: Expected array, received object"),
    "env missing": ({"name": "a", "command": "c", "args": []}, "mcpServers.0.env: Required"),
    "headers as a map": ({"name": "d", "type": "http", "url": "u", "headers": {"A": "1"}},
                         "mcpServers.0.headers: Expected array, received object"),
    "pair with extra key": ({"name": "a", "command": "c", "args": [], "env": [{"name": "A", "value": "1", "x": 0}]},
                            "mcpServers.0.env.0: Unrecognized key(s) in object: 'x'"),
}


def test_row4_well_formed_entries_pass(today: SimPeer) -> None:
    assert today.create(mcpServers=GOOD_MCP)
    assert today.requests("interaction/requestOfficialMcpAuthHeaders") == []  # only official plugin servers ask


@pytest.mark.parametrize("case", sorted(BAD_MCP))
def test_row4_one_bad_entry_fails_the_whole_create_before_anything_else(today: SimPeer, case: str) -> None:
    entry, message = BAD_MCP[case]
    error = today.error("session/create", {"workspace": today.workspace(), "mcpServers": [GOOD_MCP[0], entry]})
    assert error["code"] == -32602 and message.replace("mcpServers.0", "mcpServers.1") in error["message"]
    assert error["data"]["issues"]
    assert [f for f in today.frames if "method" in f] == []  # refused before any request to the host


def test_row4_resume_checks_the_entries_as_strictly(today: SimPeer) -> None:
    sid = today.create()
    error = today.error("session/resume", {"sessionId": sid, "workspace": today.workspace(),
                                           "mcpServers": [BAD_MCP["_meta"][0]]})
    assert error["code"] == -32602


def test_row4_classic_takes_entries_as_given(start) -> None:
    classic = start("classic")
    assert classic.create(mcpServers=[BAD_MCP["_meta"][0], BAD_MCP["env as a map"][0]])


# -- row 5: stopping a turn ---------------------------------------------------------------------

def test_row5_session_stop_does_nothing_to_a_running_send_turn(today: SimPeer) -> None:
    sid = today.create()
    start, started = running(today, sid, "#sim slow count=100000 interval=0.01")
    stopped_at = today.mark()
    assert today.result("session/stop", {"sessionId": sid}) == {}
    # The turn streams on: 30 more deltas (well past when a stopped turn would have ended) ...
    first = today.event(sid, "model.streaming", stopped_at)
    today.event(sid, "model.streaming", stopped_at, where=lambda e: e["seq"] >= first["seq"] + 30)
    # ... still holds the session, and never completed; session/stop wrote no event of its own.
    assert today.result("session/read", {"sessionId": sid})["projection"]["status"] == "running"
    assert today.error("session/send", {"sessionId": sid, "content": "next"})["code"] == -32010
    assert not today.events(sid, "turn.completed", start)
    assert not today.events(sid, "streamRecovery.updated", start)


def test_row5_v4_stop_quoting_the_foreground_execution_stops_the_turn(today: SimPeer) -> None:
    sid = today.create()
    assert command(today, sid, "stop", {})["status"] == "accepted"  # idle, no target: accepted, nothing done
    start, started = running(today, sid)
    execution = started["payload"]["foregroundExecutionId"]
    assert execution.startswith("exec_")
    stale = command(today, sid, "stop", {"expectedForegroundExecutionId": "exec_someone_else"})
    assert (stale["status"], stale["reasonCode"]) == ("noop", "guard.stopTargetChanged")
    accepted = command(today, sid, "stop", {"expectedForegroundExecutionId": execution}, "stop-1")
    assert accepted["status"] == "accepted" and accepted["commandId"] == "stop-1"
    done = today.event(sid, "turn.completed", start)
    assert done["payload"]["resultType"] == "cancelled"
    # The next prompt runs at once, and a repeated command id is a duplicate.
    assert today.turn(sid, "#sim stream count=2")
    assert command(today, sid, "stop", {}, "stop-1")["status"] == "duplicate"


def test_row5_classic_stops_with_session_stop_and_has_no_v4(start) -> None:
    classic = start("classic")
    sid = classic.create()
    begin, _ = running(classic, sid)
    classic.result("session/stop", {"sessionId": sid})
    assert classic.event(sid, "turn.completed", begin)["payload"]["resultType"] == "cancelled"
    assert classic.error("v4/command", {"commandId": "x", "sessionId": sid, "type": "stop"})["code"] == -32601


def test_row5_a_stubborn_turn_survives_every_stop_and_close_then_resume_recovers(today: SimPeer) -> None:
    sid = today.create()
    start, started = running(today, sid, "#sim stubborn")
    today.result("session/stop", {"sessionId": sid})
    assert command(today, sid, "stop", {"expectedForegroundExecutionId":
                                        started["payload"]["foregroundExecutionId"]})["status"] == "accepted"
    assert today.error("session/send", {"sessionId": sid, "content": "next"})["code"] == -32010
    assert today.result("session/close", {"sessionId": sid}) == {"closed": True}
    assert today.error("session/send", {"sessionId": sid, "content": "next"})["code"] == -32004
    today.result("session/resume", {"sessionId": sid, "workspace": today.workspace()})
    assert never_completed(today, sid, started["turnId"])


# -- row 6: steering ------------------------------------------------------------------------------

def test_row6_session_steer_is_gone_and_guided_send_text_joins_the_running_turn(today: SimPeer) -> None:
    sid = today.create()
    assert today.error("session/steer", {"sessionId": sid, "content": "x"})["code"] == -32601
    start, started = running(today, sid, "#sim slow count=50 interval=0.02")
    answer = command(today, sid, "sendText", {"text": "use tabs", "requestedDelivery": "guide"}, "guide-1")
    # The engine acks a guided input "queue" (session-flow.ts: startNow or queue only); it steers it all the same.
    assert answer["status"] == "accepted" and answer["result"]["delivery"] == "queue"
    queued = today.event(sid, "turn.steerQueued", start)
    assert queued["payload"]["delivery"] == "guide" and queued["turnId"] == started["turnId"]
    assert queued["payload"]["intent"]["sourceCommandId"] == "guide-1"
    drained = today.event(sid, "turn.steerDrained", start)["payload"]["drainedInputs"][0]
    assert drained["delivery"] == "guide" and drained["intent"]["sourceCommandId"] == "guide-1"
    done = today.event(sid, "turn.completed", start)
    assert done["turnId"] == started["turnId"]
    assert "[steered: use tabs]" in today.text_of(today.turn_events(sid, started["turnId"], start))
    history = today.result("session/messages", {"sessionId": sid})["messages"]
    assert drained["messageId"] in [m["info"]["messageId"] for m in history]


def test_row6_a_steer_can_fail_once_with_a_foreign_key_error(today: SimPeer) -> None:
    sid = today.create()
    start, _ = running(today, sid, "#sim steer_fk count=40 interval=0.05")
    failed = command(today, sid, "sendText", {"text": "a", "requestedDelivery": "guide"}, "fk-1")
    assert (failed["status"], failed["reasonCode"]) == ("failed", "fault.command.executionFailed")
    assert "FOREIGN KEY" in failed["message"]
    assert command(today, sid, "sendText", {"text": "a", "requestedDelivery": "guide"}, "fk-1")["status"] == "duplicate"
    assert command(today, sid, "sendText", {"text": "a", "requestedDelivery": "guide"}, "fk-2")["status"] == "accepted"
    today.event(sid, "turn.steerDrained", start)


def test_row6_send_text_before_the_first_send_fails_and_without_a_turn_starts_one(today: SimPeer) -> None:
    sid = today.create()
    assert command(today, sid, "sendText", {"text": "hi"})["reasonCode"] == "fault.command.executionFailed"
    today.turn(sid, "#sim stream count=1")
    start = today.mark()
    answer = command(today, sid, "sendText", {"text": "#sim stream count=2"})
    assert answer["result"]["delivery"] == "startNow"
    started = today.event(sid, "turn.started", start)
    assert today.event(sid, "turn.completed", start)["turnId"] == started["turnId"]


def test_row6_plain_send_text_during_a_turn_queues_a_turn_behind_it(today: SimPeer) -> None:
    sid = today.create()
    start, first = running(today, sid, "#sim slow count=50 interval=0.02")
    command(today, sid, "sendText", {"text": "#sim stream count=3"})
    queued = today.event(sid, "turn.steerQueued", start)
    assert "delivery" not in queued["payload"] and queued["payload"]["intent"]["admittedDelivery"] == "queue"
    second = today.event(sid, "turn.started", start, where=lambda e: e["turnId"] != first["turnId"])
    assert second["payload"]["input"] == "#sim stream count=3"
    today.event(sid, "turn.completed", start, where=lambda e: e["turnId"] == second["turnId"])


# -- row 7: the title ----------------------------------------------------------------------------

def test_row7_the_title_is_an_event_type_today_and_a_notification_in_classic(sim: SimPeer) -> None:
    sid = sim.create()
    start = sim.mark()
    sim.turn(sid, "Fix the flaky login test please now")
    notifications = [f for f in sim.frames[start:] if f.get("method") == "session.titleUpdated"]
    titles = sim.events(sid, "session.titleUpdated")
    if sim.dialect == "cli016":
        assert notifications == []
        [event] = titles
        assert event["payload"] == {"previousTitle": "", "source": "first_input",
                                    "title": "Fix the flaky login test please"}
        assert event["seq"] + 1 == sim.events(sid, "turn.started")[0]["seq"]  # just before the first turn
    else:  # the notification follows the turn's end
        notification = sim.wait(lambda f: f.get("method") == "session.titleUpdated", start=start)
        assert titles == [] and notification["params"]["title"] == "Fix the flaky login test please"
    assert any(s["title"] == "Fix the flaky login test please" for s in sim.result("session/list")["sessions"])


# -- row 8: history spelling -----------------------------------------------------------------------

def test_row8_history_uses_the_engines_message_and_part_shapes(sim: SimPeer) -> None:
    sid = sim.create()
    sim.turn(sid, "Show me around")
    messages = sim.result("session/messages", {"sessionId": sid})["messages"]
    user, assistant = messages
    tools = [p for p in assistant["parts"] if p["type"] == "tool"]
    if sim.dialect == "cli016":
        # The engine's strict message schema: user info, assistant info (with its parent and costs).
        assert set(user["info"]) == {"messageId", "sessionId", "role", "time", "agent"}
        assert set(assistant["info"]) == {"messageId", "sessionId", "role", "time", "agent", "parentMessageId",
                                          "path", "cost", "tokens"}
        assert assistant["info"]["parentMessageId"] == user["info"]["messageId"]
        assert all(p["partId"] and p["messageId"] and p["sessionId"] == sid for p in user["parts"] + assistant["parts"])
        assert all(set(t["state"]) == {"status", "input", "output", "title", "metadata", "startedAt", "completedAt"}
                   for t in tools)
        assert all(p["callId"].startswith("call_") and "id" not in p for p in tools)
        after = sim.result("session/messages", {"sessionId": sid, "afterMessageId": user["info"]["messageId"]})
        assert after["messages"] == [assistant]
        read = sim.result("session/read", {"sessionId": sid, "messageLimit": 1})
        assert read["messages"] == [assistant]
    else:
        assert set(user["info"]) == {"id", "role"} and all(p["id"] for p in tools)
        assert "messages" not in sim.result("session/read", {"sessionId": sid})
    assert [t["tool"] for t in tools] == ["Read", "Bash"]


def test_row8_history_has_model_only_notifications_failed_tools_and_sub_agent_parents(today: SimPeer) -> None:
    sid = today.create()
    today.turn(sid, "#sim tool_error")
    today.turn(sid, "#sim subagent_tools")
    start, _ = today.send_prompt(sid, "#sim bg_bash after=0 interval=0")
    note = today.event(sid, "turn.started", start, where=lambda e: e["payload"].get("inputSource") == "background_task")
    today.event(sid, "turn.completed", start, where=lambda e: e.get("turnId") == note.get("turnId"))
    messages = today.result("session/messages", {"sessionId": sid})["messages"]
    [hidden] = [m for m in messages if m["info"].get("visibility") == "model-only"]
    assert hidden["info"]["semantics"]["uiVisibility"] == "hidden" and hidden["info"]["synthetic"] is True
    parts = [p for m in messages for p in m["parts"] if p["type"] == "tool"]
    [failed] = [p for p in parts if p["state"]["status"] == "error"]
    assert failed["state"]["error"].startswith("cat: missing.txt") and "output" not in failed["state"]
    children = [p for p in parts if (p.get("metadata") or {}).get("parentToolCallId")]
    parents = {p["callId"] for p in parts if p["tool"] == "Agent"}
    assert len(children) == 2 and {p["metadata"]["parentToolCallId"] for p in children} <= parents


# -- row 9: the model catalog ----------------------------------------------------------------------

def test_row9_the_catalog_is_ref_keyed_with_labels_windows_and_levels(today: SimPeer) -> None:
    settings = today.result("session/create", {"workspace": today.workspace()})["settings"]
    available = settings["model"]["available"]
    assert available[0] == {"ref": {"providerId": "zhipu", "modelId": "glm-5"}, "label": "GLM-5",
                            "providerLabel": "Zhipu", "contextWindow": 200_000,
                            "reasoning": {"levels": [{"value": "low", "label": "Low"}, {"value": "high", "label": "High"},
                                                     {"value": "max", "label": "Max"}], "defaultLevel": "high"},
                            "properties": {"inputFormat": {"supportsText": True, "supportsImage": True,
                                                           "supportsVideo": False, "supportsAudio": False,
                                                           "supportsPdf": True},
                                           "outputFormat": {"supportsText": True}}}
    assert "reasoning" not in available[2]  # an entry may have no reasoning levels at all
    assert settings["model"]["current"] == {"providerId": "zhipu", "modelId": "glm-5",
                                            "options": {"reasoningLevel": "high"}}


def test_row9_set_model_wants_a_level_the_model_has(today: SimPeer) -> None:
    sid = today.create()

    def set_model(model_id: str, level: str | None = None) -> dict:
        model: dict = {"providerId": "zhipu", "modelId": model_id}
        if level is not None:
            model["options"] = {"reasoningLevel": level}
        return today.call("session/setModel", {"sessionId": sid, "model": model})

    assert "max" in set_model("glm-5-air", "max")["error"]["message"]
    assert set_model("glm-5-air")["error"]["code"] == -32602  # a model with levels needs one
    assert set_model("glm-4.6-flash", "low")["error"]["code"] == -32602  # no levels at all
    assert set_model("glm-9")["error"]["message"] == "Model not available: zhipu/glm-9"
    current = set_model("glm-5-air", "low")["result"]["settings"]
    assert current["model"]["current"]["options"] == {"reasoningLevel": "low"}
    assert current["thoughtLevel"]["current"] == "low"
    assert today.error("session/setThoughtLevel", {"sessionId": sid, "thoughtLevel": "max"})["code"] == -32602
    assert "result" in set_model("glm-4.6-flash")
    assert today.turn(sid, "#sim stream count=1")


# -- row 10: turn.started may precede the send's answer ----------------------------------------------

@pytest.mark.parametrize("how", ["early=1 on the #sim line", "ZCODE_SIM_EARLY_START=1"])
def test_row10_turn_started_can_arrive_before_the_send_answer(start, how) -> None:
    peer = start("cli016", env={"ZCODE_SIM_EARLY_START": "1"} if how.startswith("ZCODE") else {})
    sid = peer.create()
    begin, send_id = peer.send_prompt(sid, "#sim stream count=2 early=1" if how.startswith("early") else "hi")
    answer = peer.answer_to(send_id)
    started = peer.wait(lambda f: f.get("method") == "session/event" and f["params"]["type"] == "turn.started", start=begin)
    assert peer.index_of(started) < peer.index_of(answer)
    peer.event(sid, "turn.completed", begin)


def test_row10_by_default_the_send_answer_comes_first(sim: SimPeer) -> None:
    sid = sim.create()
    begin, send_id = sim.send_prompt(sid, "#sim stream count=2")
    answer = sim.answer_to(send_id)
    started = sim.wait(lambda f: f.get("method") == "session/event" and f["params"]["type"] == "turn.started", start=begin)
    assert sim.index_of(answer) < sim.index_of(started)


# -- row 11: goal ------------------------------------------------------------------------------------

def test_row11_goal_set_and_replace_are_both_valid(sim: SimPeer) -> None:
    """The engine's goal schema lists show|set|replace|pause|resume|clear (set is valid)."""
    sid = sim.create()
    goal = sim.result("session/goal", {"sessionId": sid, "action": "set", "objective": "Ship it"})
    # The seed answers the goal as data; the 0.16 engine words it ({response, snapshot}).
    assert (goal["response"] if sim.dialect == "cli016" else goal["goal"]["objective"]).count("Ship it") == 1
    if sim.dialect == "cli016":
        wrong = sim.error("session/goal", {"sessionId": sid, "action": "start", "objective": "x"})
        assert wrong["code"] == -32602 and "'set' | 'replace'" in wrong["message"]
    replaced = sim.result("session/goal", {"sessionId": sid, "action": "replace", "objective": "Ship the bridge"})
    if sim.dialect != "cli016":
        assert replaced["goal"] == {"objective": "Ship the bridge", "status": "active"}
    else:
        assert replaced["response"] == "Goal: Ship the bridge (active)"
        assert sim.result("session/goal", {"sessionId": sid, "action": "clear"})["response"] == "No goal is set."


# -- row 12: slow compaction ---------------------------------------------------------------------------

def test_row12_compaction_is_accepted_at_once_busy_meanwhile_and_ends_with_a_reason(start) -> None:
    peer = start("cli016", env={"ZCODE_SIM_COMPACT_SECONDS": "1.5"})
    sid = peer.create()
    peer.turn(sid, "#sim stream count=3")
    begin = peer.mark()
    result = peer.result("session/compact", {"sessionId": sid, "instructions": "the API decisions"})
    assert result["response"] == "" and result["compact"]["state"] == "accepted" and result["snapshot"]
    operation = result["compact"]["operationId"]
    peer.event(sid, "turn.started", begin, where=lambda e: e["payload"]["input"].startswith("/compact"))
    assert peer.error("session/send", {"sessionId": sid, "content": "hi"})["code"] == -32010
    again = peer.result("session/compact", {"sessionId": sid})["compact"]
    assert again == {"state": "already_running", "operationId": operation}
    ended = peer.wait(lambda f: f.get("method") == "state.updated"
                      and f["params"].get("reason", "").startswith("session_compact"), timeout=10, start=begin)
    assert ended["params"]["reason"] == "session_compacted"
    assert peer.turn(sid, "#sim stream count=1")


# -- row 13: usage ------------------------------------------------------------------------------------

def test_row13_usage_is_cumulative_and_read_reports_occupancy(today: SimPeer) -> None:
    sid = today.create()
    turns = [today.turn(sid, "#sim stream count=40") for _ in range(3)]
    per_turn = [t[-1]["payload"]["usage"] for t in turns]
    usage = today.result("session/usage", {"sessionId": sid})
    assert usage["totalTokens"] == sum(u["totalTokens"] for u in per_turn)
    assert usage["outputTokens"] == 120 and usage["modelRequestCount"] == 3
    read = today.result("session/read", {"sessionId": sid})
    used = read["runtime"]["contextUsage"]["used"]
    assert used == read["projection"]["contextUsed"] == per_turn[-1]["totalTokens"]
    assert read["runtime"]["contextUsage"]["size"] == 200_000
    assert used < usage["totalTokens"] == read["projection"]["totalTokenCount"]


def test_row13_classic_has_no_session_usage(start) -> None:
    classic = start("classic")
    sid = classic.create()
    assert classic.error("session/usage", {"sessionId": sid})["code"] == -32601


# -- row 14: close -------------------------------------------------------------------------------------

def test_row14_close_ends_a_running_turn_at_once_and_resume_brings_the_session_back(today: SimPeer) -> None:
    sid = today.create()
    today.turn(sid, "first prompt")
    start, started = running(today, sid)
    assert today.result("session/close", {"sessionId": sid}) == {"closed": True}
    assert today.error("session/read", {"sessionId": sid})["code"] == -32004
    today.result("session/resume", {"sessionId": sid, "workspace": today.workspace()})
    assert never_completed(today, sid, started["turnId"])
    # The engine unsubscribes before it closes: a later turn ran, and no session.closed came before it.
    assert today.events(sid, "session.closed", start) == []


def test_row14_classic_has_no_session_close(start) -> None:
    classic = start("classic")
    assert classic.error("session/close", {"sessionId": classic.create()})["code"] == -32601


# -- row 15: resume with the session's own workspace key --------------------------------------------------

def test_row15_resume_under_another_key_loses_the_model_and_its_own_key_keeps_it(tmp_path, start) -> None:
    first = start("cli016")
    sid = first.create("/tmp/project", key="acp-1234")
    first.turn(sid, "#sim stream count=1")
    first.close()
    peer = start("cli016")  # a new engine process: the session is on disk, inactive
    [listed] = peer.result("session/list", {"workspace": peer.workspace("/tmp/project")})["sessions"]
    assert listed["workspace"] == {"workspacePath": "/tmp/project", "workspaceKey": "acp-1234"}
    wrong = peer.result("session/resume", {"sessionId": sid, "workspace": peer.workspace("/tmp/project")})
    assert "current" not in wrong["settings"]["model"]  # an unbound selection is omitted, never null
    peer.result("session/subscribe", {"sessionId": sid, "deliveryKind": "desktop-continuous", "includeSnapshot": False})
    begin, _ = peer.send_prompt(sid, "hello")
    failed = peer.event(sid, "turn.failed", begin)["payload"]["error"]
    assert (failed["code"], failed["message"]) == ("CONFIGURATION_ERROR", "Select a model before continuing")
    right = peer.result("session/resume", {"sessionId": sid, "workspace": listed["workspace"]})
    assert right["settings"]["model"]["current"]["modelId"] == "glm-5"
    assert right["session"]["workspace"] == listed["workspace"]
    assert peer.turn(sid, "#sim stream count=1")


# -- row 16: the engine's own slash commands ----------------------------------------------------------------

def test_row16_slash_commands_come_from_the_workspace_config_topic(tmp_path, today: SimPeer) -> None:
    commands = tmp_path / "project" / ".zcode" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("# Review the staged changes\nLook at git diff --staged.\n")
    today.create(str(tmp_path / "project"), key="acp-77")
    assert today.result("v4/connection/flow", {"connectionId": "conn-1", "state": "drained"}) == {}
    subscribe_id = today.request("v4/conversation/subscribe", {"topic": "workspace-config/acp-77",
                                                               "connectionId": "conn-1",
                                                               "clientMode": "desktop-continuous"})
    ack = today.answer_to(subscribe_id)
    frame = today.wait(lambda f: f.get("method") == "v4/conversation/frame")
    assert today.index_of(ack) < today.index_of(frame)  # the engine writes the first snapshot after the ack
    assert ack["result"]["ack"]["subscriptionId"] == frame["params"]["subscriptionId"]
    assert frame["params"]["kind"] == "complete" and frame["params"]["frame"]["payload"]["kind"] == "snapshot"
    listed = frame["params"]["frame"]["payload"]["snapshot"]["config"]["slashCommands"]
    names = [c["name"] for c in listed]
    assert names[:2] == ["compact", "goal"] and names[-1] == "review"
    assert listed[-1]["description"] == "Review the staged changes"
    assert today.error("v4/conversation/subscribe", {"topic": "conversation/x", "connectionId": "conn-1"})["code"] \
        == -32602


# -- row 17: the version floor ---------------------------------------------------------------------------------

def test_row17_below_0_14_8_there_is_no_subscribe(start, dialect) -> None:
    peer = start(dialect, env={"ZCODE_SIM_VERSION": "0.14.6"})
    sid = peer.create(subscribe=False)
    error = peer.error("session/subscribe", {"sessionId": sid, "deliveryKind": "desktop-continuous",
                                             "includeSnapshot": False})
    assert (error["code"], error["message"]) == (-32601, "Method not found: session/subscribe")
    assert peer.error("session/goal", {"sessionId": sid, "action": "show"})["code"] == -32601


def test_row17_0_14_8_subscribes_but_extension_methods_need_0_15(start, dialect) -> None:
    old = start(dialect, env={"ZCODE_SIM_VERSION": "0.14.8"})
    sid = old.create()
    assert old.error("session/setMode", {"sessionId": sid, "mode": "plan"})["code"] == -32601
    new = start(dialect, env={"ZCODE_SIM_VERSION": "0.15.0"})
    sid = new.create()
    assert new.result("session/setMode", {"sessionId": sid, "mode": "build"})["settings"]["mode"]["current"] == "build"
    steer = new.call("session/steer", {"sessionId": sid, "content": "x"})
    assert ("error" in steer) == (dialect == "cli016")  # the 0.16 engine has no steer whatever it claims


@pytest.mark.parametrize("env, shown", [({}, {"classic": "0.15.2", "cli016": "0.16.9"}),
                                        ({"ZCODE_SIM_VERSION": "0.14.6"}, {"classic": "0.14.6", "cli016": "0.14.6"})])
def test_row17_version_flag_prints_the_claimed_version(dialect, env, shown) -> None:
    out = subprocess.run([SIM, "--version"], capture_output=True, text=True, timeout=10,
                         env={"PATH": "/usr/bin:/bin", "ZCODE_SIM_DIALECT": dialect, **env})
    assert out.returncode == 0 and out.stdout.strip() == shown[dialect]


def test_every_event_today_carries_an_event_id_and_timestamp(today: SimPeer) -> None:
    sid = today.create()
    events = today.turn(sid, "#sim stream count=2")
    assert all(e["eventId"] and isinstance(e["timestamp"], int) for e in events)
    assert len({e["eventId"] for e in events}) == len(events)
    assert json.dumps(events)  # plain JSON throughout

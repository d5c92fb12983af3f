"""The 0.16 engine, session level: the create/resume snapshot, ``state.updated`` after every
set*, current-model-only settings, revisions, the event envelope (docs/simulator.md, Dialects).

The shapes are the engine's own (``zcode-protocol/index.ts``, ``session-mapper.ts`` and
``server-operations.ts`` of its public source), checked key by key here.
"""

from __future__ import annotations

from typing import Any

from tests.sim.peer import SimPeer

SNAPSHOT_KEYS = {"protocol", "session", "settings", "projection", "runtime", "messages", "todos", "slashCommands"}
ENVELOPE_KEYS = {"eventId", "sessionId", "turnId", "seq", "traceId", "timestamp", "deliveryKind", "type", "payload"}


def state_updates(peer: SimPeer, start: int) -> list[dict[str, Any]]:
    with peer.changed:
        frames = list(peer.frames[start:])
    return [f["params"] for f in frames if f.get("method") == "state.updated"]


def test_create_answers_the_whole_snapshot_with_every_model(today: SimPeer) -> None:
    result = today.result("session/create", {"workspace": today.workspace()})
    assert set(result) == SNAPSHOT_KEYS
    assert result["protocol"] == {"name": "ZCode Protocol", "version": 1}
    assert len(result["settings"]["model"]["available"]) == 3
    assert result["session"]["workspace"] == today.workspace()
    assert {"sessionId", "sessionKind", "title", "mode", "status", "createdAt", "updatedAt"} <= set(result["session"])
    assert result["runtime"]["stateRevision"] == 0 and result["runtime"]["pendingRequestIds"] == []
    assert [c["name"] for c in result["slashCommands"]][:2] == ["compact", "goal"]


def test_resume_answers_the_whole_snapshot_too(today: SimPeer) -> None:
    sid = today.create()
    result = today.result("session/resume", {"sessionId": sid, "workspace": today.workspace()})
    assert set(result) == SNAPSHOT_KEYS
    assert len(result["settings"]["model"]["available"]) == 3


def test_read_and_every_set_list_only_the_current_model(today: SimPeer) -> None:
    sid = today.create()
    read = today.result("session/read", {"sessionId": sid})
    assert set(read) == SNAPSHOT_KEYS
    assert [m["ref"]["modelId"] for m in read["settings"]["model"]["available"]] == ["glm-5"]
    answers = [
        today.result("session/setModel", {"sessionId": sid, "model": {
            "providerId": "zhipu", "modelId": "glm-5-air", "options": {"reasoningLevel": "low"}}}),
        today.result("session/setMode", {"sessionId": sid, "mode": "plan"}),
        today.result("session/setThoughtLevel", {"sessionId": sid, "thoughtLevel": "high"}),
    ]
    for answer in answers:
        assert [m["ref"]["modelId"] for m in answer["settings"]["model"]["available"]] == ["glm-5-air"]


def test_every_set_sends_state_updated_with_its_envelope_and_a_new_revision(today: SimPeer) -> None:
    sid = today.create()
    start = today.mark()
    today.result("session/setModel", {"sessionId": sid, "model": {
        "providerId": "zhipu", "modelId": "glm-5-air", "options": {"reasoningLevel": "low"}}})
    today.result("session/setMode", {"sessionId": sid, "mode": "plan"})
    today.result("session/setThoughtLevel", {"sessionId": sid, "thoughtLevel": "high"})
    updates = state_updates(today, start)
    assert [u["reason"] for u in updates] == ["model_changed", "mode_changed", "thought_level_changed"]
    assert [u["revision"] for u in updates] == [1, 2, 3]
    for update in updates:
        assert set(update) == {"type", "scope", "sessionId", "workspace", "revision", "reason", "patch"}
        assert (update["type"], update["scope"], update["sessionId"]) == ("state.updated", "session", sid)
        assert update["workspace"] == today.workspace()
        assert [m["ref"]["modelId"] for m in update["patch"]["model"]["available"]] == ["glm-5-air"]
    assert updates[-1]["patch"]["mode"] == {"current": "plan"}
    assert updates[-1]["patch"]["thoughtLevel"]["current"] == "high"
    assert today.result("session/read", {"sessionId": sid})["runtime"]["stateRevision"] == 3


def test_a_refused_set_changes_nothing_and_announces_nothing(today: SimPeer) -> None:
    sid = today.create()
    start = today.mark()
    assert today.error("session/setMode", {"sessionId": sid, "mode": "turbo"})["code"] == -32602
    assert today.error("session/setThoughtLevel", {"sessionId": sid, "thoughtLevel": "nope"})["code"] == -32602
    assert state_updates(today, start) == []


def test_events_carry_the_official_envelope(today: SimPeer) -> None:
    sid = today.create()
    events = today.turn(sid, "#sim stream count=2")
    for event in events:
        assert set(event) <= ENVELOPE_KEYS
        assert {"eventId", "sessionId", "seq", "timestamp", "type", "payload"} <= set(event)
        assert event["deliveryKind"] == "desktop-continuous"  # what the subscribe asked for
        assert event["traceId"].startswith("trace_")
        assert isinstance(event["timestamp"], int)


# -- strict params, errors, removed methods -------------------------------------------------------------

def test_unknown_keys_are_refused_as_the_strict_schemas_do(today: SimPeer) -> None:
    error = today.error("session/create", {"workspace": today.workspace(), "cwd": "/tmp"})
    assert error == {"code": -32602, "message": "Invalid params — (root): Unrecognized key(s) in object: 'cwd'"}
    sid = today.create()
    nested = today.error("session/setModel", {"sessionId": sid, "model": {"modelId": "glm-5", "name": "x"}})
    assert nested["message"] == ("Invalid params — model: Unrecognized key(s) in object: 'name'; "
                                 "model.providerId: Required")
    mode = today.error("session/setMode", {"sessionId": sid, "mode": "turbo"})
    assert mode["message"].startswith("Invalid params — mode: Invalid enum value. Expected 'plan' | 'build'")


def test_set_model_needs_the_provider_id(today: SimPeer) -> None:
    sid = today.create()
    error = today.error("session/setModel", {"sessionId": sid, "model": {"modelId": "glm-5-air",
                                                                         "options": {"reasoningLevel": "low"}}})
    assert (error["code"], error["message"]) == (-32602, "Invalid params — model.providerId: Required")


def test_an_unknown_session_is_not_active_and_its_resume_not_found(today: SimPeer) -> None:
    assert today.error("session/read", {"sessionId": "sess_nope"}) == {
        "code": -32004, "message": "Session is not active: sess_nope"}
    assert today.error("session/resume", {"sessionId": "sess_nope", "workspace": today.workspace()}) == {
        "code": -32004, "message": "Session not found: sess_nope"}


def test_a_stale_expected_revision_is_refused(today: SimPeer) -> None:
    sid = today.create()
    error = today.error("session/setMode", {"sessionId": sid, "mode": "build", "expectedRevision": 7})
    assert (error["code"], error["data"]) == (-32009, {"actualRevision": 0, "expectedRevision": 7})


def test_no_initialize_a_jsonrpc_frame_refused_and_removed_methods_gone(today: SimPeer) -> None:
    assert today.error("initialize", {})["code"] == -32601
    today.send({"jsonrpc": "2.0", "id": 99, "method": "session/list", "params": {}})
    assert today.answer_to(99)["error"]["code"] == -32600
    sid = today.create()
    for method in ("session/steer", "session/rewind", "session/rewindCascade", "automation/list"):
        assert today.error(method, {"sessionId": sid})["code"] == -32601, method


# -- workspace level: capabilities, presentation, MCP -------------------------------------------------------

def test_runtime_capabilities_name_the_independent_plan_state(start) -> None:
    assert start("cli016").result("runtime/capabilities", {}) == {"independentPlanState": True}
    assert start("cli016", env={"ZCODE_SIM_VERSION": "0.16.5"}).result("runtime/capabilities", {}) == {}


def test_plan_mode_takes_effect_only_from_0_16_9(start) -> None:
    for version, shown in (("0.16.9", "plan"), ("0.16.5", "yolo")):
        peer = start("cli016", env={"ZCODE_SIM_VERSION": version})
        sid = peer.create()
        answer = peer.result("session/setMode", {"sessionId": sid, "mode": "plan"})  # accepted either way
        assert answer["settings"]["mode"]["current"] == shown, version


def test_read_presentation_lists_the_engines_and_the_users_commands(tmp_path, today: SimPeer) -> None:
    folder = tmp_path / "project" / ".zcode" / "commands"
    folder.mkdir(parents=True)
    (folder / "review.md").write_text("# Review the diff\nLook at it.\n")
    workspace = today.workspace(str(tmp_path / "project"))
    presented = today.result("workspace/readPresentation", {"workspace": workspace})
    assert set(presented) == {"workspace", "mode", "slashCommands"}
    names = {c["name"]: c for c in presented["slashCommands"]}
    assert {"compact", "goal", "init", "plan", "review"} <= set(names)
    assert names["review"] == {"name": "review", "description": "Review the diff", "inputHint": "",
                               "source": "custom"}


def test_mcp_servers_given_at_create_connect_only_through_mcp_list(today: SimPeer) -> None:
    server = {"name": "docs", "command": "docs-mcp", "args": [], "env": []}
    today.create(mcpServers=[server])
    workspace = today.workspace()
    status = today.result("mcp/list", {"workspace": workspace, "mode": "status"})["statuses"]
    assert status["docs"]["status"] == "disconnected"  # registered, never connected by the create
    connected = today.result("mcp/list", {"workspace": workspace, "mode": "connect"})["statuses"]
    assert connected["docs"]["status"] == "connected"
    assert set(connected["docs"]) == {"status", "transport", "toolCount", "updatedAt"}


def test_list_entries_are_session_infos_with_their_whole_workspace(today: SimPeer) -> None:
    workspace = {"workspacePath": "/tmp", "workspaceKey": "k1", "workspaceIdentity": "ssh://box/tmp"}
    sid = today.result("session/create", {"workspace": workspace})["session"]["sessionId"]
    [entry] = today.result("session/list", {})["sessions"]
    assert entry["sessionId"] == sid and entry["workspace"] == workspace
    assert {"sessionKind", "title", "mode", "status", "createdAt", "updatedAt"} <= set(entry)


def test_the_agent_switching_mode_sends_the_same_state_updated(today: SimPeer) -> None:
    sid = today.create()
    start = today.mark()
    today.turn(sid, "#sim plan_mode mode=plan")
    [update] = [u for u in state_updates(today, start) if u["reason"] != "prompt_started"]
    assert update["patch"]["mode"] == {"current": "plan"}
    assert [m["ref"]["modelId"] for m in update["patch"]["model"]["available"]] == ["glm-5"]
    assert update["revision"] >= 1 and update["workspace"] == today.workspace()


def test_subscribe_answers_its_own_shape_and_a_snapshot_when_asked(today: SimPeer) -> None:
    sid = today.create(subscribe=False)
    plain = today.result("session/subscribe", {"sessionId": sid, "deliveryKind": "desktop-continuous",
                                               "includeSnapshot": False})
    assert plain == {"sessionId": sid, "eventSeq": 0, "events": []}
    asked = today.result("session/subscribe", {"sessionId": sid, "deliveryKind": "web-remote-replayable",
                                               "includeSnapshot": True})
    assert set(asked["snapshot"]) == SNAPSHOT_KEYS
    assert asked["snapshot"]["runtime"]["deliveryKind"] == "web-remote-replayable"
    assert today.error("session/subscribe", {"sessionId": sid})["message"].startswith(
        "Invalid params — deliveryKind: Required")

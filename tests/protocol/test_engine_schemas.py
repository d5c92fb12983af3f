"""The engine's JSON Schemas (schemas/) and their checker (tests/engine_schema.py).

The schemas are checked against the world twice over: every frame an installed ZCode
3.14.4 really exchanged (tests/fixtures/engine-captures/) must validate, and the frames
the official source rejects must not. The checker itself is checked on conversations
built to break each rule it enforces.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.engine_schema import (
    ENGINE_TO_HOST,
    HOST_TO_ENGINE,
    SCHEMAS,
    check_conversation,
    conclude,
    mode_from_env,
    read_recording,
    schema_set,
)

CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "engine-captures"
# The 25 types of the official event union (zcodeSessionEventTypeSchema), in its order.
OFFICIAL_EVENT_TYPES = (
    "session.created", "session.resumed", "session.updated", "session.titleUpdated", "session.closed",
    "turn.started", "turn.steerQueued", "turn.steerDrained", "turn.completed", "turn.failed",
    "message.upserted", "message.removed", "part.started", "part.delta", "part.upserted", "part.removed",
    "model.streaming", "tool.updated", "permission.requested", "permission.resolved", "userInput.requested",
    "userInput.resolved", "checkpoint.created", "rewind.triggered", "streamRecovery.updated",
)
# Every method the bridge sends the engine today (actors/, protocol/), and the engine's requests to it.
BRIDGE_SENDS = (
    "session/create", "session/resume", "session/subscribe", "session/send", "session/stop", "session/read",
    "session/messages", "session/close", "session/list", "session/setMode", "session/setModel",
    "session/setThoughtLevel", "session/goal", "session/compact", "session/fork", "session/cancelBackgroundTask",
    "v4/command",
)
# Removed from the engine in 0.16 (no schema, so a frame calling them is a finding); the bridge still sends them.
REMOVED_IN_016 = ("session/steer", "session/rewind", "session/rewindCascade")
ENGINE_ASKS = (
    "session/requestRuntimePreferences", "interaction/requestPermission", "interaction/requestUserInput",
    "interaction/requestProviderRuntimeHeaders", "interaction/requestOfficialMcpAuthHeaders",
    "interaction/browserList", "interaction/browserExecute",
)
WORKSPACE = {"workspacePath": "/w", "workspaceKey": "/w"}


# -- the schemas themselves ------------------------------------------------------------------------------


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [ref for value in node.values() for ref in _refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in _refs(value)]
    return []


@pytest.mark.parametrize("dialect", ["cli016", "classic"])
def test_every_schema_is_valid_draft_2020_12_and_every_ref_resolves(dialect: str) -> None:
    schemas = schema_set(dialect)
    files = sorted(schemas.root.rglob("*.json"))
    assert files
    for path in files:
        document = json.loads(path.read_text(encoding="utf-8"))
        Draft202012Validator.check_schema(document)
        uri = "https://zcode-acp.invalid/schemas/" + path.relative_to(SCHEMAS).as_posix()
        resolver = schemas.registry.resolver(base_uri=uri)
        for ref in _refs(document):
            resolver.lookup(ref)  # raises when a $ref points nowhere
        if path.parent != schemas.root:
            assert "x-source" in document, f"{path} does not name its source"


def test_the_event_union_has_the_25_official_types_each_with_its_own_schema() -> None:
    union = json.loads((SCHEMAS / "engine/events/session-event.json").read_text())
    assert tuple(union["properties"]["type"]["enum"]) == OFFICIAL_EVENT_TYPES
    for event_type in OFFICIAL_EVENT_TYPES:
        assert (SCHEMAS / f"engine/events/{event_type}.json").is_file()


def test_every_method_the_bridge_sends_and_every_engine_request_has_a_schema() -> None:
    schemas = schema_set("cli016")
    assert set(BRIDGE_SENDS) <= set(schemas.requests[HOST_TO_ENGINE])
    assert set(ENGINE_ASKS) <= set(schemas.requests[ENGINE_TO_HOST])
    assert not set(REMOVED_IN_016) & set(schemas.requests[HOST_TO_ENGINE])


def test_every_backend_method_named_in_the_bridges_code_has_a_schema() -> None:
    # A method string in the bridge's code that is not an ACP method is a backend call: it needs a schema
    # (or is one of the removed methods, whose every use the process tests report).
    root = Path(__file__).resolve().parent.parent.parent
    acp_side = {"session/new", "session/prompt", "session/load", "session/cancel", "session/update",
                "session/set_mode", "session/set_model", "session/set_config_option", "session/delete",
                "session/request_permission", "session/steering", "session/event", "session/requestRuntimePreferences",
                "v4/conversation/frame", "session/rename",
                # The v4 path's own extension methods (ACP side, protocol/commands.py): v4 commands underneath.
                "session/queue", "session/queueEdit", "session/queueRemove", "session/queueSendNow", "session/retry",
                "session/editPrompt", "session/fileChanges",
                # The unstable ACP schema's archive methods (the AIR set, actors/air_index.py): no engine call.
                "session/archive", "session/unarchive"}
    found: set[str] = set()
    for folder in ("actors", "protocol", "cli", "config", "net"):
        for path in (root / folder).rglob("*.py"):
            found |= set(re.findall(r'"((?:session|v4|workspace|runtime|mcp)/[A-Za-z/]+)"', path.read_text()))
    assert set(BRIDGE_SENDS) <= found, "BRIDGE_SENDS names a method the bridge no longer sends"
    unknown = found - acp_side - set(schema_set("cli016").requests[HOST_TO_ENGINE]) - set(REMOVED_IN_016)
    assert not unknown, f"backend methods with no schema in schemas/engine/: {sorted(unknown)}"


# -- the real captures ------------------------------------------------------------------------------------


def _capture(name: str) -> list[dict[str, Any]]:
    lines = (CAPTURES / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _wire_frames(entries: list[dict[str, Any]]) -> tuple[list[tuple[str, Any]], list[dict[str, Any]]]:
    """The capture as frames (the fixtures record no ids: one is given per request/answer pair) and the
    entries that are not whole frames (marked ``_fixtureNote`` by the capture's producer)."""
    frames: list[tuple[str, Any]] = []
    partial: list[dict[str, Any]] = []
    partial_requests: set[int] = set()
    for entry in entries:
        if entry.get("meta"):
            continue
        if "_fixtureNote" in entry or "_fixtureNote" in (entry.get("params") or {}):
            partial.append(entry)
            partial_requests.add(entry["seqInFixture"])
            continue
        if entry["kind"] == "response" and entry["seqInFixture"] in partial_requests:
            partial.append(entry)  # the answer to a partly recorded request: checked on its own
            continue
        request_id = f"capture-{entry['seqInFixture']}"
        if entry["kind"] == "request":
            frames.append((entry["dir"], {"id": request_id, "method": entry["method"], "params": entry["params"]}))
        elif entry["kind"] == "response":
            frames.append((entry["dir"], {"id": request_id, "result": entry["result"]}))
        else:
            frames.append((entry["dir"], {"method": entry["method"], "params": entry["params"]}))
    return frames, partial


CAPTURE_FILES = sorted(path.name for path in CAPTURES.glob("*.jsonl"))


def test_the_four_captures_are_in_the_repository() -> None:
    assert CAPTURE_FILES == ["history-management-official.jsonl", "queue-guide-goal-official-config.jsonl",
                             "s03a-official.jsonl", "transport-v4-official.jsonl"]


@pytest.mark.parametrize("name", CAPTURE_FILES)
def test_every_captured_frame_validates(name: str) -> None:
    entries = _capture(name)
    frames, _ = _wire_frames(entries)
    findings = check_conversation(frames, "cli016", name)
    # The one frame the captures send on purpose to be refused: a sendText without text, which the
    # engine rejects (proto.invalidPayload). The schema must refuse it too, and nothing else.
    refused = [entry for entry in entries if entry.get("params", {}).get("type") == "sendText"
               and entry.get("params", {}).get("payload") == {}]
    assert [(f.what, f.path) for f in findings] == [("request v4/command", "$.params.payload")] * len(refused), \
        "\n".join(map(str, findings))


def test_captured_records_that_are_not_whole_frames_validate_in_their_parts() -> None:
    # queue-guide-goal records only type/payload/commandId of four commands and their whole acks;
    # history-management records four error answers as classified facts, not frames.
    schemas = schema_set("cli016")
    command = schemas.uri("v4/command.json")
    checked = 0
    for name in CAPTURE_FILES:
        for entry in _wire_frames(_capture(name))[1]:
            if entry["kind"] == "request":
                payload_schema = f"{command}#/$defs/payloads/{entry['params']['type']}"
                assert not schemas.errors(payload_schema, entry["params"]["payload"])
                checked += 1
            elif entry["method"] == "v4/command":
                assert not schemas.errors(f"{command}#/$defs/ack", entry["result"])
                checked += 1
            else:
                assert entry["error"]["protocolCode"] == -32603  # a classified error: nothing to validate
    assert checked == 8


def test_the_capture_proves_the_ack_rule_a_refused_command_carries_a_reason_code() -> None:
    acks = [entry["result"] for name in CAPTURE_FILES for entry in _capture(name)
            if entry.get("method") == "v4/command" and "result" in entry]
    assert {ack["status"] for ack in acks} == {"accepted", "rejected", "stale", "failed", "noop"}
    assert all("reasonCode" in ack for ack in acks if ack["status"] != "accepted")


# -- the checker, on conversations built to break each rule -------------------------------------------------


def _event(event_type: str, payload: dict[str, Any], **envelope: Any) -> dict[str, Any]:
    params = {"eventId": "e1", "sessionId": "s1", "seq": 1, "timestamp": 1, "type": event_type,
              "payload": payload, **envelope}
    return {"method": "session/event", "params": params}


def _findings(*frames: tuple[str, Any], dialect: str = "cli016") -> list[str]:
    return [f"{f.what} {f.path}: {f.message}" for f in check_conversation(frames, dialect)]


def test_a_well_formed_conversation_has_no_findings() -> None:
    assert _findings(
        (HOST_TO_ENGINE, {"id": 1, "method": "session/send", "params": {
            "sessionId": "s1", "content": "hi", "attachments": [
                {"kind": "image", "mimeType": "image/png", "dataBase64": "iVBO"},
                {"kind": "image", "localPath": "/w/shot.png"}]}}),
        (ENGINE_TO_HOST, {"id": "server-1", "method": "session/requestRuntimePreferences",
                          "params": {"sessionId": "s1", "scope": "user-execution"}}),
        (HOST_TO_ENGINE, {"id": "server-1", "result": {"nativeSearchEnhancementsEnabled": False,
                                                       "askUserQuestionAutoResolutionEnabled": False}}),
        (ENGINE_TO_HOST, {"method": "state.updated", "params": {
            "type": "state.updated", "scope": "session", "sessionId": "s1", "workspace": WORKSPACE, "revision": 2,
            "reason": "prompt_started", "patch": {}}}),
        (ENGINE_TO_HOST, {"id": 1, "result": {"sessionId": "s1", "accepted": True, "stateRevision": 2}}),
        (ENGINE_TO_HOST, _event("turn.started", {"turnNumber": 1, "input": "hi", "foregroundExecutionId": "x"},
                                turnId="t1")),
        (ENGINE_TO_HOST, _event("turn.completed", {"response": "ok", "tokenCount": 3, "toolCallCount": 0,
                                                   "duration": 12.5, "resultType": "success"}, turnId="t1", seq=2)),
    ) == []


@pytest.mark.parametrize(("frames", "expected"), [
    pytest.param([(HOST_TO_ENGINE, {"jsonrpc": "2.0", "id": 1, "method": "session/close",
                                    "params": {"sessionId": "s1"}})],
                 "request session/close $: Additional properties are not allowed ('jsonrpc'", id="jsonrpc key"),
    pytest.param([(HOST_TO_ENGINE, {"id": 1, "method": "session/steer", "params": {"sessionId": "s", "content": "x"}})],
                 "request session/steer $.method: no schema for 'session/steer'", id="removed method"),
    pytest.param([(HOST_TO_ENGINE, {"id": 1, "method": "session/setModel",
                                    "params": {"sessionId": "s", "model": {"modelId": "m"}}})],
                 "request session/setModel $.params.model: 'providerId' is a required property",
                 id="setModel without providerId"),
    pytest.param([(HOST_TO_ENGINE, {"id": 1, "method": "session/resume",
                                    "params": {"sessionId": "s", "clientKey": 1}})],
                 "request session/resume $.params: Additional properties are not allowed ('clientKey'", id="strict params"),
    pytest.param([(HOST_TO_ENGINE, {"id": 1, "method": "session/send", "params": {
                      "sessionId": "s", "content": "", "attachments": [{"type": "image", "mimeType": "image/png",
                                                                        "data": "iVBO"}]}})],
                 "request session/send $.params.attachments[0]: 'kind' is a required property",
                 id="an image the engine drops"),
    pytest.param([(HOST_TO_ENGINE, {"id": 1, "method": "session/send", "params": {
                      "sessionId": "s", "content": "", "attachments": [{"kind": "image", "mimeType": "image/png"}]}})],
                 "request session/send $.params.attachments[0]:", id="an image with neither bytes nor path"),
    pytest.param([(ENGINE_TO_HOST, {"id": 9, "result": {}})],
                 "response to ? $.id: no request 9 sent host->engine", id="answer to nothing"),
    pytest.param([(HOST_TO_ENGINE, {"id": 1, "method": "session/close", "params": {"sessionId": "s"}}),
                  (ENGINE_TO_HOST, {"id": 1, "result": {}}), (ENGINE_TO_HOST, {"id": 1, "result": {}})],
                 "response to ? $.id: a second answer to 1 sent host->engine", id="answered twice"),
    pytest.param([(HOST_TO_ENGINE, {"id": 1, "method": "session/close", "params": {"sessionId": "s"}}),
                  (ENGINE_TO_HOST, {"id": 1, "error": {"code": -32004}})],
                 "error to session/close $.error: 'message' is a required property", id="error without message"),
    pytest.param([(ENGINE_TO_HOST, _event("turn.started", {"turnNumber": 1, "input": "x", "turnId": "t1"}))],
                 "event turn.started $.params.payload: Additional properties are not allowed ('turnId'", id="turnId in payload"),
    pytest.param([(ENGINE_TO_HOST, _event("turn.completed", {"response": "", "tokenCount": 0, "toolCallCount": 0,
                                                             "duration": 0}))],
                 "event turn.completed $.params.payload: 'resultType' is a required property", id="no resultType"),
    pytest.param([(ENGINE_TO_HOST, _event("turn.terminal", {}))],
                 "event turn.terminal $.params.type: 'turn.terminal' is not one of", id="not in the union"),
    pytest.param([(ENGINE_TO_HOST, {"method": "state.updated", "params": {"type": "state.updated", "scope": "session",
                                                                          "patch": {}}})],
                 "notification state.updated $.params: 'revision' is a required property", id="state.updated without revision"),
    pytest.param([(ENGINE_TO_HOST, {"method": "session.titleUpdated", "params": {"sessionId": "s", "title": "t"}})],
                 "notification session.titleUpdated $.method: no schema for the notification", id="unknown notification"),
    pytest.param([(HOST_TO_ENGINE, {"id": 1, "method": "v4/command", "params": {
                      "commandId": "c", "clientId": "x", "sessionId": "s", "type": "stop", "payload": {}, "issuedAt": 1}}),
                  (ENGINE_TO_HOST, {"id": 1, "result": {"commandId": "c", "status": "noop", "revisionAtDecision": 0}})],
                 "response to v4/command $.result: 'reasonCode' is a required property", id="noop ack without reasonCode"),
    pytest.param([(HOST_TO_ENGINE, {"id": 1, "method": "v4/command", "params": {
                      "commandId": "c", "clientId": "x", "type": "sendText", "payload": {"text": "t"}, "issuedAt": 1}})],
                 "request v4/command $.params: 'sessionId' is a required property", id="v4 envelope without sessionId"),
    pytest.param([(ENGINE_TO_HOST, {"id": "server-1", "method": "interaction/requestPermission", "params": {
                      "requestId": "r", "sessionId": "s", "toolCallId": "c", "toolName": "Bash", "reason": "",
                      "riskLevel": "low", "input": {}, "options": [{"optionId": "o", "kind": "allow_once",
                                                                    "name": "Allow", "response": {"decision": "allow"}}]}}),
                  (HOST_TO_ENGINE, {"id": "server-1", "result": {"decision": "allow", "optionId": "o"}})],
                 "response to interaction/requestPermission $.result: Additional properties are not allowed ('optionId'",
                 id="permission answer with a foreign key"),
    pytest.param([(ENGINE_TO_HOST, {"method": "v4/conversation/frame", "params": {
                      "wireVersion": 3, "kind": "fragment", "deliveryKind": "online", "logicalFrameId": "f",
                      "logicalFrameOrdinal": 1, "topic": "conversation/s", "subscriptionId": "u", "fragmentIndex": 0,
                      "fragmentCount": 2, "logicalBytes": 10, "checksum": "deadbeef", "dataBase64": "AAAA"}})],
                 "notification v4/conversation/frame $.params.checksum: 'deadbeef' is not of type 'object'",
                 id="fragment checksum is an object"),
])
def test_the_checker_reports_each_broken_rule(frames: list[tuple[str, Any]], expected: str) -> None:
    findings = _findings(*frames)
    assert any(finding.startswith(expected) for finding in findings), findings


SUBSCRIBE = {"topic": "conversation/s", "connectionId": "c", "clientMode": "desktop-continuous"}
FIRST_FRAME = {"method": "v4/conversation/frame", "params": {
    "wireVersion": 3, "kind": "fragment", "deliveryKind": "initial", "logicalFrameId": "f", "logicalFrameOrdinal": 1,
    "topic": "conversation/s", "subscriptionId": "sub-1", "fragmentIndex": 0, "fragmentCount": 1, "logicalBytes": 3,
    "checksum": {"algorithm": "crc32", "value": "0123abcd"}, "dataBase64": "e30="}}
ACK = {"ack": {"subscriptionId": "sub-1", "mode": "snapshot", "logEpoch": "e"}}


def test_a_v4_frame_comes_after_the_subscribe_answer_that_opened_its_subscription() -> None:
    subscribe = (HOST_TO_ENGINE, {"id": 1, "method": "v4/conversation/subscribe", "params": SUBSCRIBE})
    assert _findings(subscribe, (ENGINE_TO_HOST, {"id": 1, "result": ACK}), (ENGINE_TO_HOST, FIRST_FRAME)) == []
    assert _findings(subscribe, (ENGINE_TO_HOST, FIRST_FRAME), (ENGINE_TO_HOST, {"id": 1, "result": ACK})) == [
        "notification v4/conversation/frame $.params.subscriptionId: a frame of subscription 'sub-1' came before "
        "the subscribe answer that opened it (frame 2)"]


SEND = (HOST_TO_ENGINE, {"id": 4, "method": "session/send", "params": {"sessionId": "s1", "content": "hi"}})
SENT = (ENGINE_TO_HOST, {"id": 4, "result": {"sessionId": "s1", "accepted": True, "stateRevision": 3}})


def _state(session: str, reason: str) -> tuple[str, dict[str, Any]]:
    return (ENGINE_TO_HOST, {"method": "state.updated", "params": {
        "type": "state.updated", "scope": "session", "sessionId": session, "revision": 3, "reason": reason, "patch": {}}})


def test_cli016s_engine_answers_a_send_after_the_state_update_that_starts_its_prompt() -> None:
    assert _findings(SEND, _state("s1", "prompt_started"), SENT) == []
    late = "response to session/send $.result: session/send to 's1' answered before the state.updated"
    assert _findings(SEND, SENT, _state("s1", "prompt_started"))[0].startswith(late)
    assert _findings(SEND, _state("s2", "prompt_started"), SENT)[0].startswith(late)
    assert _findings(SEND, _state("s1", "settings_changed"), SENT)[0].startswith(late)
    busy = (ENGINE_TO_HOST, {"id": 4, "error": {"code": -32010, "message": "A prompt is already running for this session"}})
    assert _findings(SEND, busy) == []
    assert _findings(SEND, SENT, dialect="classic") == []  # the seed's engine answered at once


def test_cli016s_engine_sends_no_session_closed_after_a_close() -> None:
    close = (HOST_TO_ENGINE, {"id": 5, "method": "session/close", "params": {"sessionId": "s1"}})
    closed = (ENGINE_TO_HOST, _event("session.closed", {}, sessionId="s1"))
    assert _findings(closed) == []
    assert _findings(close, closed) == [
        "event session.closed $.params.type: session.closed after the bridge closed 's1': session/close unsubscribes first"]
    resume = (HOST_TO_ENGINE, {"id": 6, "method": "session/resume", "params": {"sessionId": "s1"}})
    assert _findings(close, resume, closed) == []


def test_the_classic_set_checks_the_seeds_dialect() -> None:
    assert _findings(
        (HOST_TO_ENGINE, {"id": 1, "method": "session/steer", "params": {"sessionId": "s", "content": "x"}}),
        (ENGINE_TO_HOST, {"id": 1, "result": {"applied": True}}),
        (ENGINE_TO_HOST, {"method": "session/event", "params": {"sessionId": "s", "seq": 1, "type": "turn.terminal",
                                                                "payload": {}}}),
        dialect="classic") == []
    assert _findings((HOST_TO_ENGINE, {"jsonrpc": "2.0", "id": 1, "method": "session/close",
                                       "params": {"sessionId": "s"}}), dialect="classic")


def test_a_recording_is_read_as_one_conversation_per_simulator_process(tmp_path: Path) -> None:
    path = tmp_path / "frames.jsonl"
    records = [
        {"pid": 1, "n": 0, "dir": HOST_TO_ENGINE, "raw": '{"id":1,"method":"session/close","params":{"sessionId":"s"}}'},
        {"pid": 2, "n": 0, "dir": HOST_TO_ENGINE, "raw": "not json"},
        {"pid": 1, "n": 1, "dir": ENGINE_TO_HOST, "frame": {"id": 1, "result": {}}},
    ]
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    conversations = read_recording(path)
    assert sorted(conversations) == [1, 2]
    assert check_conversation(conversations[1], "cli016") == []
    assert [f.what for f in check_conversation(conversations[2], "cli016")] == ["not a JSON object"]


# -- the end of a process test's check (tests/process/conftest.py) -------------------------------------------


def _recording(tmp_path: Path, *frames: tuple[str, Any]) -> Path:
    path = tmp_path / "frames.jsonl"
    path.write_text("".join(json.dumps({"pid": 7, "n": n, "dir": direction, "frame": frame}) + "\n"
                            for n, (direction, frame) in enumerate(frames)))
    return path


BAD_ANSWER = (HOST_TO_ENGINE, {"id": "server-1", "result": {"headersApplied": False}})
BAD_ASK = [(ENGINE_TO_HOST, {"id": "server-1", "method": "interaction/requestOfficialMcpAuthHeaders", "params": {
    "requestId": "r", "workspace": WORKSPACE, "pluginId": "p", "mcpKey": "k", "targetOrigin": "https://x"}}), BAD_ANSWER]


def test_strict_fails_a_test_on_a_frame_the_bridge_sent(tmp_path: Path) -> None:
    failure = conclude(_recording(tmp_path, *BAD_ASK), "cli016", "strict", "t", report=tmp_path / "r.jsonl")
    assert failure is not None and failure.startswith("1 bridge↔engine frame(s) break schemas/ (cli016):")
    assert "(host->engine, response to interaction/requestOfficialMcpAuthHeaders)" in failure
    assert "'ok' is a required property" in failure and not (tmp_path / "r.jsonl").exists()


def test_strict_fails_a_test_on_a_frame_the_engine_sent(tmp_path: Path) -> None:
    frames = _recording(tmp_path, (ENGINE_TO_HOST, _event("turn.failed", {"error": {"message": "boom"}})))
    failure = conclude(frames, "cli016", "strict", "t", report=tmp_path / "r.jsonl")
    assert failure is not None and "'turnPhase' is a required property" in failure


def test_report_appends_the_findings_and_fails_nothing(tmp_path: Path) -> None:
    report = tmp_path / "build" / "report.jsonl"
    for test in ("first", "second"):
        assert conclude(_recording(tmp_path, *BAD_ASK), "cli016", "report", test, report=report) is None
    rows = [json.loads(line) for line in report.read_text().splitlines()]
    assert [row["test"] for row in rows] == ["first", "second"]
    assert rows[0]["direction"] == HOST_TO_ENGINE and rows[0]["path"] == "$.result"


def test_a_clean_recording_off_mode_or_no_recording_conclude_quietly(tmp_path: Path) -> None:
    clean = _recording(tmp_path, (HOST_TO_ENGINE, {"id": 1, "method": "session/close", "params": {"sessionId": "s"}}),
                       (ENGINE_TO_HOST, {"id": 1, "result": {"closed": True}}))
    assert conclude(clean, "cli016", "strict", "t") is None
    assert conclude(_recording(tmp_path, *BAD_ASK), "cli016", "off", "t") is None
    assert conclude(tmp_path / "never-written.jsonl", "cli016", "strict", "t") is None


@pytest.mark.parametrize(("value", "mode"), [("", "strict"), ("REPORT", "report"), (" off ", "off")])
def test_the_switch_reads_the_environment(monkeypatch: pytest.MonkeyPatch, value: str, mode: str) -> None:
    monkeypatch.setenv("ZCODE_TEST_ENGINE_SCHEMA", value)
    assert mode_from_env() == mode


def test_an_unknown_switch_value_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZCODE_TEST_ENGINE_SCHEMA", "lenient")
    with pytest.raises(ValueError, match="one of strict, report, off"):
        mode_from_env()


# -- the two validators agree --------------------------------------------------------------------------------


def _mutations(frame: Any) -> list[Any]:
    """The frame, and copies broken the ways a bridge or a simulator breaks one: a key gone, a value of
    the wrong type, a key the strict schemas do not know, at every level of its objects."""
    found = [frame]
    if isinstance(frame, dict):
        for key, value in frame.items():
            found.append({k: v for k, v in frame.items() if k != key})
            found.append({**frame, key: [] if not isinstance(value, list) else "x"})
            found.extend({**frame, key: child} for child in _mutations(value)[1:])
        found.append({**frame, "unknownKey": 1})
    elif isinstance(frame, list) and frame:
        found.extend([child, *frame[1:]] for child in _mutations(frame[0])[1:])
    return found


@pytest.mark.parametrize("name", CAPTURE_FILES)
def test_the_fast_validator_and_the_reference_one_agree_on_every_verdict(name: str) -> None:
    # The checker takes its verdict from jsonschema-rs and asks the reference implementation only why:
    # on every captured frame and on thousands of broken copies, the two must say the same.
    schemas = schema_set("cli016")
    frames, _ = _wire_frames(_capture(name))
    compared = 0
    for direction, frame in frames:
        method = frame.get("method")
        uri = schemas.requests[direction].get(method) if "id" in frame else schemas.notifications[direction].get(method)
        if uri is None or not isinstance(frame.get("params"), dict):
            continue
        params_uri = f"{uri}#/$defs/params" if "id" in frame else uri
        for instance in _mutations(frame["params"]):
            assert bool(schemas.errors(params_uri, instance)) == bool(schemas.reference_errors(params_uri, instance)), \
                (params_uri, instance)
            compared += 1
    assert compared > 50

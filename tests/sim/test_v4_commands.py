"""sim/v4/commands.py and attachments.py: ``v4/command`` acks as the engine answers them.

Acks are compared with the captured ones of a real ZCode 3.14.4 (same keys, same status
and reason code for the same situation) and read back with the bridge's own parser
(``protocol/v4/commands.parse_ack``); envelopes are built with the bridge's builders, so
the two sides are checked against each other as well as against the captures.
"""

from __future__ import annotations

import hashlib
import itertools
from typing import Any

import pytest

from tests.protocol.v4_captures import capture
from tests.sim.v4_fakes import WORKSPACE, Engine, call, create_session, make_plane, subscribe
from tests.sim.v4_shapes import check_snapshot
from zcode_acp.protocol.v4 import attachments as bridge_attachments
from zcode_acp.protocol.v4 import commands as bridge
from zcode_acp.sim.v4.errors import V4Error


def _captured_acks() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    pairs = []
    for name in ("transport-v4-official", "history-management-official", "queue-guide-goal-official-config"):
        records = capture(name)
        for request, answer in itertools.pairwise(records):
            if request.get("method") == "v4/command" and request["kind"] == "request" and "result" in answer:
                pairs.append((request["params"], answer["result"]))
    return pairs


CAPTURED = _captured_acks()


def _captured(kind: str, status: str) -> dict[str, Any]:
    return next(ack for params, ack in CAPTURED if params["type"] == kind and ack["status"] == status)


class Bridge:
    """Commands as the bridge sends them (its builders), answered by the plane."""

    def __init__(self, faults: str = "") -> None:
        self.plane, self.port, self.wire, self.clock = make_plane(faults)
        self.ids = 0
        self.session_id = create_session(self.plane, self.wire)
        self.engine = Engine(self.plane, self.session_id, self.wire)

    def send(self, command: bridge.Command, *, base: bridge.Base | None = None, command_id: str | None = None,
             raw_base: dict[str, Any] | None = None) -> dict[str, Any]:
        self.ids += 1
        params = bridge.envelope(command, command_id=command_id or f"cmd-{self.ids}", client_id="bridge",
                                 issued_at=1, base=base) if base is not None or raw_base is None else {
            "commandId": command_id or f"cmd-{self.ids}", "clientId": "bridge", "sessionId": command.session_id,
            "type": command.type, "payload": command.payload, "issuedAt": 1, **raw_base}
        ack = call(self.plane, "v4/command", params, self.wire)
        parsed = bridge.parse_ack(ack)
        assert isinstance(parsed, bridge.CommandAck), parsed
        return dict(ack)

    @property
    def projection(self) -> Any:
        return self.plane.sessions.get(self.session_id)

    def base(self) -> bridge.Base:
        return bridge.Base(revision=self.projection.revision, log_epoch=self.projection.log.log_epoch)


def test_create_session_is_acked_as_the_engine_acks_it() -> None:
    plane, port, wire, clock = make_plane()
    ack = call(plane, "v4/command", {"commandId": "c1", "clientId": "bridge", "sessionId": None,
                                     "type": "createSession", "payload": {"workspaceId": WORKSPACE}, "issuedAt": 0})
    captured = _captured("createSession", "accepted")
    assert set(ack) == set(captured) and set(ack["result"]) == set(captured["result"])
    assert ack["result"]["type"] == "createSession" and port.named("create_session") == [("create_session", WORKSPACE)]
    check_snapshot(plane.sessions.get(ack["result"]["sessionId"]).snapshot())


def test_a_payload_that_fails_the_schema_is_rejected_with_the_engines_message_byte_for_byte() -> None:
    plane, port, wire, clock = make_plane()
    params, captured = next((p, a) for p, a in CAPTURED if a.get("reasonCode") == "proto.invalidPayload")
    assert call(plane, "v4/command", params) == captured


def test_an_unknown_session_is_rejected_and_a_repeated_command_id_is_a_duplicate_with_the_first_result() -> None:
    side = Bridge()
    ack = side.send(bridge.compact("no-such-session"))
    assert (ack["status"], ack["reasonCode"]) == ("rejected", "proto.sessionNotFound")
    first = side.send(bridge.send_text(side.session_id, "hello"), command_id="same")
    again = side.send(bridge.send_text(side.session_id, "hello"), command_id="same")
    assert first["status"] == "accepted" and again["status"] == "duplicate" and again["result"] == first["result"]
    assert len(side.port.named("start_turn")) == 1
    assert bridge.judge(bridge.parse_ack(again)) is bridge.Verdict.SUCCEEDED  # type: ignore[arg-type]


def test_a_base_revision_behind_or_ahead_is_stale_as_captured_and_the_refreshed_retry_is_accepted() -> None:
    side = Bridge()
    captured = _captured("setFollowupMode", "stale")
    ack = side.send(bridge.set_followup_mode(side.session_id, "guide"),
                    base=bridge.Base(revision=999_999, log_epoch=side.projection.log.log_epoch))
    assert set(ack) == set(captured) and ack["reasonCode"] == captured["reasonCode"] == "proto.staleRevision"
    assert bridge.judge(bridge.parse_ack(ack)) is bridge.Verdict.RETRY_AFTER_REFRESH  # type: ignore[arg-type]
    ack = side.send(bridge.set_followup_mode(side.session_id, "guide"), base=side.base())
    assert ack["status"] == "accepted" and side.projection.state["config"]["followupMode"] == "guide"
    assert side.projection.revision == ack["revisionAtDecision"] + 1


def test_row_targets_that_do_not_exist_are_stale_targets_as_captured() -> None:
    side = Bridge()
    target = bridge.RowTarget(row_id=999_999, entity_id="never-created-row")
    for command in (bridge.fork_assistant(side.session_id, target), bridge.retry_turn(side.session_id, target),
                    bridge.apply_file_rewind(side.session_id, target),
                    bridge.edit_user_query(side.session_id, target, "unreachable input")):
        ack = side.send(command, base=side.base())
        captured = _captured(command.type, "stale")
        assert (ack["status"], ack["reasonCode"]) == (captured["status"], captured["reasonCode"])
        assert set(ack) == set(captured)


def test_a_model_switch_to_the_current_config_is_a_noop_as_captured_and_a_new_one_is_accepted() -> None:
    side = Bridge()
    config = side.projection.state["config"]
    ack = side.send(bridge.switch_model_config(side.session_id, config["provider"], config["model"], config["thought"]),
                    base=side.base())
    captured = _captured("switchModelConfig", "noop")
    assert set(ack) == set(captured) and ack["reasonCode"] == "config.unchanged"
    ack = side.send(bridge.switch_model_config(side.session_id, "zhipu", "glm-5-air", "low"), base=side.base())
    assert ack["status"] == "accepted" and side.projection.state["config"]["model"] == "glm-5-air"
    ack = side.send(bridge.switch_model_config(side.session_id, "nobody", "nothing", "low"), base=side.base())
    assert ack["status"] == "rejected"
    ack = side.send(bridge.switch_collaboration_mode(side.session_id, "plan"), base=side.base())
    assert ack["status"] == "accepted" and side.projection.state["config"]["mode"] == "plan"


def test_send_text_starts_now_when_idle_then_queues_or_guides_as_the_routing_says() -> None:
    side = Bridge()
    ack = side.send(bridge.send_text(side.session_id, "first"))
    assert ack["result"]["delivery"] == "startNow" and side.port.named("start_turn")[-1][2] == "first"
    side.engine.start("first")
    assert side.projection.state["inputRouting"] == {"mode": "enqueue"}
    queued = side.send(bridge.send_text(side.session_id, "second"))
    assert queued["result"]["delivery"] == "queue"
    [item] = side.projection.state["queue"]["items"]
    assert item["text"] == "second" and item["sourceCommandId"] == queued["commandId"]
    check_snapshot(side.projection.snapshot())
    guided = side.send(bridge.send_text(side.session_id, "steer", requested_delivery="guide"))
    assert guided["result"] == {"type": "inputAccepted", "delivery": "queue", "inputId": guided["commandId"]}
    [(_, _, text, input_id)] = side.port.named("guide")
    assert text == "steer"
    side.engine.event("turn.steerDrained", {"drainedInputs": [{"pendingInputId": input_id, "delivery": "guide"}]})
    assert side.projection.rows.rows[-1]["guided"] is True
    side.engine.complete()
    assert side.port.named("start_turn")[-1][2] == "second", "the queue drains when the turn ends"
    assert side.projection.state["queue"]["items"] == []
    side.engine.start("second")
    assert side.projection.rows.rows[-1]["sourceCommandId"] == queued["commandId"]


def test_a_prompt_sent_before_the_previous_one_has_started_waits_in_the_queue() -> None:
    side = Bridge()
    assert side.send(bridge.send_text(side.session_id, "first"))["result"]["delivery"] == "startNow"
    second = side.send(bridge.send_text(side.session_id, "second"))  # turn.started of "first" not in yet
    assert second["result"]["delivery"] == "queue" and len(side.port.named("start_turn")) == 1
    side.engine.start("first")
    side.engine.complete()
    assert [c[2] for c in side.port.named("start_turn")] == ["first", "second"]


def test_an_idle_stop_does_nothing_and_stale_ids_are_guarded_and_a_real_stop_pauses_the_queue() -> None:
    side = Bridge()
    ack = side.send(bridge.stop(side.session_id))  # the engine's stop(): nothing runs, nothing named: accepted
    assert ack["status"] == "accepted" and "result" not in ack and side.port.named("stop") == []
    ack = side.send(bridge.stop(side.session_id, expected_foreground_execution_id="exec_gone"))
    assert (ack["status"], ack["reasonCode"]) == ("noop", "guard.stopTargetChanged")
    side.send(bridge.send_text(side.session_id, "go"))
    side.engine.start("go")
    ack = side.send(bridge.stop(side.session_id, expected_foreground_execution_id="exec_old"))
    assert (ack["status"], ack["reasonCode"]) == ("noop", "guard.stopTargetChanged")
    side.send(bridge.send_text(side.session_id, "later"))
    ack = side.send(bridge.stop(side.session_id, expected_foreground_execution_id=f"exec_{side.engine.turn_id}"))
    assert ack["status"] == "accepted" and side.port.named("stop") == [("stop", side.session_id)]
    assert side.projection.state["control"]["stopState"] == "stopping"
    side.engine.complete("cancelled")
    assert side.projection.state["queue"]["autoDrain"] is False and side.projection.state["queue"]["pauseReason"] == "stopped"
    assert len(side.port.named("start_turn")) == 1, "a stopped queue does not drain"


def test_the_first_answer_to_an_interaction_wins_and_the_engine_is_told_once() -> None:
    side = Bridge()
    side.send(bridge.send_text(side.session_id, "go"))
    side.engine.start("go")
    side.engine.event("model.streaming", {"kind": "tool_call", "toolCallId": "t1", "toolName": "Write"})
    side.engine.event("permission.requested", {"requestId": "server-1", "toolCallId": "t1", "toolName": "Write"})
    [item] = side.projection.state["pendingInteractions"]
    answer = {"optionId": "allow_once"}
    first = side.send(bridge.resolve_interaction(side.session_id, item["interactionId"], option_id="allow_once"))
    second = side.send(bridge.resolve_interaction(side.session_id, item["interactionId"], option_id="deny"))
    assert first["status"] == "accepted" and first["result"] == {"type": "resolveInteraction",
                                                                 "resolvedBy": {"clientId": "bridge",
                                                                                "optionId": "allow_once"}}
    assert (second["status"], second["reasonCode"]) == ("noop", "interaction.alreadyResolved")
    never = side.send(bridge.resolve_interaction(side.session_id, "int_never", option_id="deny"))
    assert (never["status"], never["reasonCode"]) == ("stale", "proto.staleTarget")
    assert side.port.named("resolve_interaction") == [("resolve_interaction", side.session_id, "server-1",
                                                       "permission", answer)]
    assert side.projection.state["pendingInteractions"] == []


def test_an_interaction_past_its_countdown_is_resolved_by_the_engine() -> None:
    side = Bridge()
    side.send(bridge.send_text(side.session_id, "go"))
    side.engine.start("go")
    side.engine.event("permission.requested", {"requestId": "server-1", "autoResolveMs": 5_000})
    deadline = side.projection.state["pendingInteractions"][0]["autoResolution"]["deadlineAt"]
    side.plane.tick(deadline - 1)
    assert side.port.named("resolve_interaction") == []
    side.plane.tick(deadline)
    assert [c[2] for c in side.port.named("resolve_interaction")] == ["server-1"]
    assert side.projection.state["pendingInteractions"] == []


def test_a_question_past_its_countdown_goes_on_accepted_with_no_answers() -> None:
    """As the engine's question auto-resolution does (the cli016 dialect's own timer answers the same)."""
    side = Bridge()
    side.send(bridge.send_text(side.session_id, "go"))
    side.engine.start("go")
    side.engine.event("userInput.requested", {"requestId": "server-2", "questions": [], "autoResolveMs": 1_000})
    deadline = side.projection.state["pendingInteractions"][0]["autoResolution"]["deadlineAt"]
    side.plane.tick(deadline)
    assert side.port.named("resolve_interaction") == [
        ("resolve_interaction", side.session_id, "server-2", "userInput", {"action": "accept",
                                                                           "content": {"answers": {}}})]


def test_retry_and_edit_cut_the_branch_and_rerun_and_fork_opens_a_child_with_the_history() -> None:
    side = Bridge()
    side.send(bridge.send_text(side.session_id, "first prompt"))
    side.engine.start("first prompt")
    side.engine.text("an answer")
    side.engine.complete()
    rows = side.projection.rows.rows
    user = next(r for r in rows if r["kind"] == "userInput")
    answer_row = next(r for r in rows if r["kind"] == "assistantText")
    fork = side.send(bridge.fork_assistant(side.session_id, bridge.RowTarget(answer_row["rowId"],
                                                                             answer_row["entityId"])), base=side.base())
    assert fork["status"] == "accepted" and fork["result"]["type"] == "forkAssistant"
    child = side.plane.sessions.get(fork["result"]["sessionId"])
    assert [r["kind"] for r in child.rows.rows] == ["turnHeader", "userInput", "assistantText", "timelineMarker"]
    assert child.rows.rows[-1]["marker"]["type"] == "forkNotice"
    check_snapshot(child.snapshot())
    edit = side.send(bridge.edit_user_query(side.session_id, bridge.RowTarget(user["rowId"], user["entityId"]),
                                            "second prompt"), base=side.base())
    assert edit["status"] == "accepted"
    assert side.port.named("truncate") == [("truncate", side.session_id, user["turnId"])]
    assert side.port.named("start_turn")[-1][2] == "second prompt"
    assert all(r["kind"] != "assistantText" for r in side.projection.rows.rows)
    side.engine.start("second prompt")
    assert side.projection.rows.rows[-2]["origin"] == "editRerun"


def test_queue_operations_edit_reorder_send_now_and_delete_items() -> None:
    side = Bridge()
    side.send(bridge.send_text(side.session_id, "go"))
    side.engine.start("go")
    for text in ("a", "b", "c"):
        side.send(bridge.send_text(side.session_id, text))

    def ids() -> list[str]:
        return [i["queueItemId"] for i in side.projection.state["queue"]["items"]]

    a, b, c = ids()
    assert side.send(bridge.edit_queue_item(side.session_id, a, "A"), base=side.base())["status"] == "accepted"
    assert side.send(bridge.reorder_queue_item(side.session_id, c, a), base=side.base())["status"] == "accepted"
    assert ids() == [c, a, b]
    assert side.send(bridge.delete_queue_item(side.session_id, b), base=side.base())["status"] == "accepted"
    now = side.send(bridge.send_queued_now(side.session_id, c), base=side.base())
    assert now["status"] == "accepted" and side.port.named("guide")[-1][2] == "c"
    assert [i["text"] for i in side.projection.state["queue"]["items"]] == ["A"]
    assert [i["order"]["queuePosition"] for i in side.projection.state["queue"]["items"]] == [0]
    gone = side.send(bridge.delete_queue_item(side.session_id, b), base=side.base())
    assert (gone["status"], gone["reasonCode"]) == ("stale", "proto.staleTarget")
    check_snapshot(side.projection.snapshot())


def test_rename_delete_and_cancel_background_work() -> None:
    side = Bridge()
    assert side.send(bridge.rename_session(side.session_id, "Named"))["status"] == "accepted"
    assert side.projection.state["meta"] == {"title": "Named", "titleSource": "custom"}
    side.engine.event("session.updated", {"taskId": "exec_1", "toolName": "Bash", "status": "running",
                                          "description": "build"})
    side.port.running_works.add("exec_1")
    assert side.send(bridge.cancel_background_work(side.session_id, "exec_1"))["status"] == "accepted"
    assert side.send(bridge.cancel_background_work(side.session_id, "exec_9"))["status"] == "stale"
    assert side.send(bridge.delete_session(side.session_id))["status"] == "accepted"
    assert side.plane.sessions.get(side.session_id) is None
    assert side.send(bridge.rename_session(side.session_id, "late"))["reasonCode"] == "proto.sessionNotFound"


def test_compact_is_refused_as_the_availability_says_and_runs_once_there_is_a_history() -> None:
    side = Bridge()
    ack = side.send(bridge.compact(side.session_id))
    assert (ack["status"], ack["reasonCode"]) == ("rejected", "idleCannotCompact")  # the captured availability
    side.send(bridge.send_text(side.session_id, "go"))
    side.engine.start("go")
    side.engine.complete()
    assert side.send(bridge.compact(side.session_id))["status"] == "accepted"
    assert side.port.named("compact") == [("compact", side.session_id)]


def test_an_unsimulated_command_fails_as_not_implemented() -> None:
    side = Bridge()
    ack = call(side.plane, "v4/command", {"commandId": "x", "clientId": "bridge", "sessionId": side.session_id,
                                          "type": "startSavedWorkflow", "payload": {}, "issuedAt": 0})
    assert (ack["status"], ack["reasonCode"]) == ("failed", "fault.command.notImplemented")


def test_commands_query_answers_known_acks_and_unknown_as_captured() -> None:
    side = Bridge()
    ack = side.send(bridge.rename_session(side.session_id, "T"), command_id="known")
    answer = call(side.plane, "v4/commands/query", bridge.query_params([(side.session_id, "known"), (None, "never")]))
    captured = next(r["result"] for r in capture("transport-v4-official")
                    if r.get("method") == "v4/commands/query" and "result" in r)
    assert set(answer) == set(captured)
    assert answer["results"][0] == {"key": {"sessionId": side.session_id, "commandId": "known"}, "result": ack}
    assert answer["results"][1]["result"] == "unknown"
    items = bridge.parse_query_result(answer)
    assert not isinstance(items, bridge.AckInvalid)
    with pytest.raises(V4Error):
        call(side.plane, "v4/commands/query", {"commands": []})


def test_a_commands_frames_are_sent_after_its_ack() -> None:
    side = Bridge()
    subscribe(side.plane, side.wire, f"conversation/{side.session_id}")
    side.wire.log.clear()
    side.send(bridge.rename_session(side.session_id, "After the ack"))
    assert side.wire.log == ["reply", "frame"]


def test_an_attachment_uploaded_in_chunks_is_sent_by_ref_and_lands_on_the_prompt() -> None:
    side = Bridge()
    data = bytes(range(256)) * 5000  # 1.28 MB: three chunks
    plan = bridge_attachments.upload_plan(data, connection_id="bridge", upload_id="up-1", session_id=side.session_id,
                                          file_name="shot.png", mime="image/png")
    assert isinstance(plan, bridge_attachments.UploadPlan)
    begun = call(side.plane, "v4/attachment/begin", plan.begin)
    assert isinstance(bridge_attachments.parse_begin_result(begun), bridge_attachments.Staging)
    for chunk in plan.chunks:
        call(side.plane, "v4/attachment/chunk", chunk)
    committed = call(side.plane, "v4/attachment/commit", plan.commit)
    again = bridge_attachments.parse_begin_result(call(side.plane, "v4/attachment/begin", plan.begin))
    assert isinstance(again, bridge_attachments.Committed) and again.ref == committed["ref"]
    ack = side.send(bridge.send_text(side.session_id, "look", attachments=[plan.attachment_ref(committed["ref"])]))
    assert ack["status"] == "accepted"
    sent = side.port.named("start_turn")[-1][3]
    assert sent == [{"ref": committed["ref"], "fileName": "shot.png", "mime": "image/png", "bytes": len(data)}]
    side.engine.start("look")
    assert side.projection.rows.rows[-1]["attachments"] == sent
    unknown = side.send(bridge.send_text(side.session_id, "x", attachments=[{"ref": "attachment://nope"}]))
    assert unknown["status"] == "rejected"


def test_an_attachment_with_a_wrong_checksum_or_over_the_limit_is_refused() -> None:
    side = Bridge()
    begin = {"connectionId": "bridge", "uploadId": "up-2", "sessionId": side.session_id, "fileName": "a.txt",
             "mime": "text/plain", "totalBytes": 3, "totalChunks": 1,
             "checksum": "sha256:" + hashlib.sha256(b"xyz").hexdigest()}
    call(side.plane, "v4/attachment/begin", begin)
    call(side.plane, "v4/attachment/chunk", {**{k: begin[k] for k in ("connectionId", "uploadId", "sessionId")},
                                             "chunkIndex": 0, "dataBase64": "YWJj"})  # "abc"
    with pytest.raises(V4Error, match="checksum"):
        call(side.plane, "v4/attachment/commit", {"connectionId": "bridge", "uploadId": "up-2",
                                                  "sessionId": side.session_id})
    with pytest.raises(V4Error, match="too large"):
        call(side.plane, "v4/attachment/begin", {**begin, "uploadId": "up-3", "totalBytes": 20 * 1024 * 1024 + 1})

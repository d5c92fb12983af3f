"""The v4 rules the simulator lacked (issue 31), each as the engine's source decides it.

Sources (jimpablo/ZCode, the CLI's bootstrap ``zcode-protocol-v4/``): ``input-admission.ts`` and
``session-flow.ts`` (a held queue, a guided input's ack), ``command-inbox.ts`` (CAS), ``goal-compact.ts``
(compaction while busy), ``fork-edit-retry.ts`` and ``resolveRowActionTarget`` (row actions and their
guards), ``command.ts`` (the commands 3.14.4 does not know). Every test here failed on the simulator
before this change.
"""

from __future__ import annotations

import itertools
from typing import Any

from tests.sim.test_v4_commands import Bridge
from tests.sim.v4_fakes import call
from zcode_acp.protocol.v4 import commands as bridge


def raw(side: Bridge, kind: str, payload: dict[str, Any], base: dict[str, Any] | None = None) -> dict[str, Any]:
    """A command as an engine client may send it (payload keys the bridge's builders do not write)."""
    side.ids += 1
    params = {"commandId": f"raw-{side.ids}", "clientId": "bridge", "sessionId": side.session_id, "type": kind,
              "payload": payload, "issuedAt": 1, **(base or {})}
    return dict(call(side.plane, "v4/command", params, side.wire))


def failed_turn_with_a_queue() -> tuple[Bridge, str]:
    side = Bridge()
    side.send(bridge.send_text(side.session_id, "first"))
    side.engine.start("first")
    queued = side.send(bridge.send_text(side.session_id, "second"))
    side.engine.event("turn.failed", {"error": {"type": "provider_error", "message": "boom"}, "turnPhase": "model"})
    return side, queued["commandId"]


def test_a_failed_turn_holds_the_queue_and_routes_to_choice() -> None:
    side, _ = failed_turn_with_a_queue()
    state = side.projection.state
    assert state["queue"]["autoDrain"] is False and state["queue"]["pauseReason"] == "error"
    assert [item["text"] for item in state["queue"]["items"]] == ["second"]
    assert state["inputRouting"] == {"mode": "choice"}
    assert [c[2] for c in side.port.named("start_turn")] == ["first"], "nothing drains from a held queue"


def test_a_send_without_a_disposition_fails_as_the_engine_fails_it() -> None:
    side, _ = failed_turn_with_a_queue()
    ack = side.send(bridge.send_text(side.session_id, "third"))
    assert ack["status"] == "failed" and ack["reasonCode"] == "heldQueueDispositionRequired"
    assert ack["message"] == "held queue requires heldQueueDisposition (clearQueueAndSend | keepQueueAndSend)"
    assert "revisionAtDecision" in ack


def test_a_disposition_against_other_items_is_stale_and_a_right_one_sends() -> None:
    side, queued = failed_turn_with_a_queue()
    stale = raw(side, "sendText", {"text": "third", "heldQueueDisposition": "keepQueueAndSend",
                                   "expectedHeldQueueItemIds": ["queue_other"]})
    assert (stale["status"], stale["reasonCode"]) == ("failed", "guard.heldQueueConfirmationStale")
    kept = raw(side, "sendText", {"text": "third", "heldQueueDisposition": "keepQueueAndSend",
                                  "expectedHeldQueueItemIds": [f"queue_{queued}"]})
    assert kept["status"] == "accepted" and kept["result"]["delivery"] == "startNow"
    assert side.port.named("start_turn")[-1][2] == "third"
    assert [item["text"] for item in side.projection.state["queue"]["items"]] == ["second"]
    cleared = Bridge()
    cleared.send(bridge.send_text(cleared.session_id, "first"))
    cleared.engine.start("first")
    cleared.send(bridge.send_text(cleared.session_id, "second"))
    cleared.engine.event("turn.failed", {"error": {"type": "x", "message": "y"}, "turnPhase": "model"})
    ack = raw(cleared, "sendText", {"text": "third", "heldQueueDisposition": "clearQueueAndSend"})
    assert ack["status"] == "accepted" and cleared.projection.state["queue"] == {"items": [], "autoDrain": True}


def test_set_auto_drain_with_cas_resumes_the_held_queue() -> None:
    side, _ = failed_turn_with_a_queue()
    assert side.projection.state["inputRouting"] == {"mode": "choice"}
    stale = side.send(bridge.set_auto_drain(side.session_id, True),
                      base=bridge.Base(revision=side.projection.revision - 1, log_epoch=side.projection.log.log_epoch))
    assert (stale["status"], stale["reasonCode"]) == ("stale", "proto.staleRevision")
    ack = side.send(bridge.set_auto_drain(side.session_id, True), base=side.base())
    assert ack["status"] == "accepted"
    assert side.port.named("start_turn")[-1][2] == "second"
    assert side.projection.state["queue"] == {"items": [], "autoDrain": True}


def test_a_failed_or_stopped_compaction_holds_the_queue_the_same_way() -> None:
    for ending in ("turn.failed", "turn.completed"):
        side = Bridge()
        side.send(bridge.send_text(side.session_id, "first"))
        side.engine.start("first")
        side.engine.complete()
        compact = side.send(bridge.compact(side.session_id))
        assert compact["status"] == "accepted"
        side.engine.start("/compact", source="compaction")
        side.send(bridge.send_text(side.session_id, "after"))
        payload = {"error": {"type": "compaction_failed", "message": "no"}, "turnPhase": "model"} \
            if ending == "turn.failed" else {"resultType": "cancelled"}
        side.engine.event(ending, payload)
        state = side.projection.state
        assert state["queue"]["autoDrain"] is False and state["inputRouting"] == {"mode": "choice"}, ending
        marker = [r for r in side.projection.rows.rows if r["kind"] == "timelineMarker"][-1]
        assert marker["marker"]["status"] == ("failed" if ending == "turn.failed" else "cancelled")


def test_a_guided_input_is_acked_queue_and_waits_in_the_queue_admitted_guide() -> None:
    side = Bridge()
    side.send(bridge.send_text(side.session_id, "first"))
    side.engine.start("first")
    ack = side.send(bridge.send_text(side.session_id, "steer", requested_delivery="guide"))
    assert ack["result"] == {"type": "inputAccepted", "delivery": "queue", "inputId": ack["commandId"]}
    [item] = side.projection.state["queue"]["items"]
    assert item["delivery"]["admitted"] == "guide" and item["sourceCommandId"] == ack["commandId"]
    [(_, _, _, pending)] = side.port.named("guide")
    side.engine.event("turn.steerDrained", {"drainedInputs": [{"pendingInputId": pending, "delivery": "guide"}]})
    assert side.projection.state["queue"]["items"] == []
    assert side.projection.rows.rows[-1]["guided"] is True


def test_stale_checks_the_epoch_before_the_revision_and_only_where_a_base_is_due() -> None:
    side = Bridge()
    side.send(bridge.send_text(side.session_id, "one"))
    side.engine.start("one")
    side.engine.text("an answer")
    side.engine.complete()
    reply = next(r for r in side.projection.rows.rows if r["kind"] == "assistantText")
    target = {"target": {"rowId": reply["rowId"], "entityId": reply["entityId"]}}
    both = raw(side, "retryTurn", target, {"baseRevision": side.projection.revision + 5, "baseLogEpoch": "old-epoch"})
    assert (both["status"], both["reasonCode"]) == ("stale", "proto.staleLogEpoch")
    assert both["revisionAtDecision"] == side.projection.revision
    revision = raw(side, "retryTurn", target, {"baseRevision": side.projection.revision + 5,
                                               "baseLogEpoch": side.projection.log.log_epoch})
    assert (revision["status"], revision["reasonCode"]) == ("stale", "proto.staleRevision")
    missing = raw(side, "retryTurn", target)
    assert (missing["status"], missing["reasonCode"]) == ("rejected", "proto.missingBaseRevision")
    # sendText is not in COMMANDS_REQUIRING_BASE_REVISION: its base is not judged.
    assert raw(side, "sendText", {"text": "two"}, {"baseRevision": 999})["status"] == "accepted"


def two_turns() -> Bridge:
    side = Bridge()
    for text in ("one", "two"):
        side.send(bridge.send_text(side.session_id, text))
        side.engine.start(text)
        side.engine.text(f"reply to {text}")
        side.engine.text("second segment")  # still the same row: one segment per reply here
        side.engine.complete()
    return side


def rows(side: Bridge, kind: str) -> list[dict[str, Any]]:
    return [row for row in side.projection.rows.rows if row["kind"] == kind]


def test_rows_carry_the_actions_the_engine_grants() -> None:
    side = two_turns()
    users, replies = rows(side, "userInput"), rows(side, "assistantText")
    assert "actions" not in users[0] and users[1]["actions"] == {"canEdit": True, "editDisposition": "rewind"}
    assert replies[0]["actions"] == {"canFork": True}
    assert replies[1]["actions"] == {"canRetry": True, "canFork": True}
    assert all("actions" not in row for row in rows(side, "turnHeader"))


def test_edit_retry_and_fork_outside_the_actions_fail_with_the_guard() -> None:
    side = two_turns()
    users, replies = rows(side, "userInput"), rows(side, "assistantText")
    old_user = bridge.RowTarget(users[0]["rowId"], users[0]["entityId"])
    edit = side.send(bridge.edit_user_query(side.session_id, old_user, "again"), base=side.base())
    assert (edit["status"], edit["reasonCode"]) == ("failed", "guard.latestQueryEditOnly")
    old_reply = bridge.RowTarget(replies[0]["rowId"], replies[0]["entityId"])
    retry = side.send(bridge.retry_turn(side.session_id, old_reply), base=side.base())
    assert (retry["status"], retry["reasonCode"]) == ("failed", "guard.latestAssistantRetryOnly")
    header = rows(side, "turnHeader")[1]
    fork = side.send(bridge.fork_assistant(side.session_id, bridge.RowTarget(header["rowId"], header["entityId"])),
                     base=side.base())
    assert (fork["status"], fork["reasonCode"]) == ("failed", "guard.forkTargetNotStable")
    assert not side.port.named("truncate") and not side.port.named("fork")
    latest = bridge.RowTarget(replies[1]["rowId"], replies[1]["entityId"])
    assert side.send(bridge.retry_turn(side.session_id, latest), base=side.base())["status"] == "accepted"


def test_a_running_turn_has_no_stable_segment_to_fork() -> None:
    side = Bridge()
    side.send(bridge.send_text(side.session_id, "one"))
    side.engine.start("one")
    side.engine.text("streaming")
    reply = rows(side, "assistantText")[0]
    assert "actions" not in reply
    fork = side.send(bridge.fork_assistant(side.session_id, bridge.RowTarget(reply["rowId"], reply["entityId"])),
                     base=side.base())
    assert (fork["status"], fork["reasonCode"]) == ("failed", "guard.forkTargetNotStable")


def test_a_compaction_during_a_turn_is_queued_and_a_second_one_locked() -> None:
    side = Bridge()
    side.send(bridge.send_text(side.session_id, "one"))
    side.engine.start("one")
    ack = side.send(bridge.compact(side.session_id))
    assert ack["status"] == "accepted" and "result" not in ack and not side.port.named("compact")
    [item] = side.projection.state["queue"]["items"]
    assert item["kind"] == "compact" and item["sourceCommandId"] == ack["commandId"]
    second = side.send(bridge.compact(side.session_id))
    assert (second["status"], second["reasonCode"]) == ("failed", "compactOperationLock")
    side.engine.complete()
    assert side.port.named("compact") == [("compact", side.session_id)], "its turn in the queue came"
    side.engine.start("/compact", source="compaction")
    assert side.projection.state["availability"]["compact"] == {"allowed": False, "reasonCode": "compactOperationLock"}
    third = side.send(bridge.compact(side.session_id))
    assert (third["status"], third["reasonCode"]) == ("failed", "compactOperationLock")


def test_3_14_4_refuses_what_only_the_newer_source_has() -> None:
    side = Bridge()
    # (the bridge's builder refuses guarded: raw, as another client may send it)
    guarded = raw(side, "switchCollaborationMode", {"mode": "guarded"}, {"baseRevision": side.projection.revision})
    assert (guarded["status"], guarded["reasonCode"]) == ("rejected", "proto.invalidPayload")
    metrics = raw(side, "setHighspeedMetrics", {"target": {"rowId": 1, "entityId": "e"}},
                  {"baseRevision": side.projection.revision, "baseLogEpoch": side.projection.log.log_epoch})
    assert (metrics["status"], metrics["reasonCode"]) == ("rejected", "proto.invalidPayload")
    newer = Bridge()
    newer.plane.commands.newer_source = True
    ack = raw(newer, "switchCollaborationMode", {"mode": "guarded"}, {"baseRevision": newer.projection.revision})
    assert ack["reasonCode"] != "proto.invalidPayload"


def test_the_workspace_config_topic_carries_the_mode_option_and_slash_commands_only() -> None:
    side = Bridge()
    workspace = side.plane.sessions.workspace_of[side.session_id]
    _, config = side.plane.sessions.workspace(workspace)
    options = config.snapshot()["config"]["configOptions"]
    assert [option["id"] for option in options] == ["mode"]  # v4-workspace-config.ts: no model, no thought_level
    assert options[0]["category"] == "mode" and options[0]["currentValue"] == "build"


def test_unsubscribe_and_a_closed_connection_stop_publishing_and_release_the_session() -> None:
    from tests.sim.v4_fakes import subscribe

    side = Bridge()
    topic = f"conversation/{side.session_id}"
    client, answer = subscribe(side.plane, side.wire, topic)
    assert side.plane.resident(side.session_id)
    subscription = answer["ack"]["subscriptionId"]
    call(side.plane, "v4/conversation/unsubscribe",
         {"connectionId": "bridge", "subscriptionId": subscription, "topic": topic}, side.wire)
    assert side.plane.unsubscribed == [("bridge", topic)] and not side.plane.resident(side.session_id)
    subscribe(side.plane, side.wire, topic)
    sent = len(side.wire.sent)
    assert call(side.plane, "v4/connection/flow", {"connectionId": "bridge", "state": "closed"}, side.wire) == {}
    assert side.plane.flows == [("bridge", "closed")] and not side.plane.resident(side.session_id)
    side.send(bridge.rename_session(side.session_id, "renamed"))
    assert not [m for m in side.wire.sent[sent:] if m.get("method") == "v4/conversation/frame"
                and m["params"]["topic"] == topic], "nothing is published to a closed connection"


def test_coalescing_sends_a_turn_end_and_the_next_queued_turns_start_as_one_frame() -> None:
    from tests.sim.v4_fakes import Clock, Engine, FakePort, Wire, create_session, subscribe
    from zcode_acp.sim.v4.plane import DataPlane

    clock, wire, port = Clock(), Wire(), FakePort()
    plane = DataPlane(port, wire.send, clock=clock, coalesce_ms=30)
    session_id = create_session(plane, wire)
    client, _ = subscribe(plane, wire, f"conversation/{session_id}")
    engine = Engine(plane, session_id, wire)
    params = {"clientId": "bridge", "sessionId": session_id, "type": "sendText", "issuedAt": 1}
    call(plane, "v4/command", {**params, "commandId": "c1", "payload": {"text": "one"}}, wire)
    engine.start("one")
    call(plane, "v4/command", {**params, "commandId": "c2", "payload": {"text": "two"}}, wire)
    engine.text("first answer")
    plane.tick(clock.now + 31)
    wire.pump()
    before = len(wire.sent)
    engine.complete()  # the queue drains: the next turn is asked for at once
    engine.start("two")
    assert len(wire.sent) == before, "nothing leaves before the flush window closes"
    plane.tick(clock.now + 31)
    wire.pump()
    [frame] = wire.sent[before:]
    ops = frame["params"]["frame"]["payload"]["deltas"]
    headers = [op["row"] for op in ops if op["op"] in ("row.upserted", "row.appended") and op["row"]["kind"] == "turnHeader"]
    assert [h["state"] for h in headers] == ["completedSuccess", "running"]
    assert not any(a["op"] == b["op"] == "state.updated" for a, b in itertools.pairwise(ops)), "adjacent patches merge"
    assert client.picture()["control"]["phase"] == "running"
    assert client.state.rows == plane.sessions.get(session_id).rows.rows, "merged, the frame ends where one by one would"


def test_coalesce_merges_as_the_engine_merges() -> None:
    from zcode_acp.sim.v4.coalesce import coalesce

    row = {"rowId": 1, "kind": "assistantText", "text": "ab", "state": "complete"}
    ops = [{"op": "row.delta", "rowId": 1, "path": "text", "append": "a"},
           {"op": "row.delta", "rowId": 1, "path": "text", "append": "b"},
           {"op": "state.updated", "patch": {"control": 1, "queue": 1}},
           {"op": "state.updated", "patch": {"control": 2}},
           {"op": "row.removed", "fromRowId": 9},
           {"op": "row.delta", "rowId": 2, "path": "text", "append": "c"},
           {"op": "row.upserted", "row": {**row, "rowId": 2}}]
    assert coalesce(ops) == [{"op": "row.delta", "rowId": 1, "path": "text", "append": "ab"},
                             {"op": "state.updated", "patch": {"control": 2, "queue": 1}},
                             {"op": "row.removed", "fromRowId": 9},
                             {"op": "row.upserted", "row": {**row, "rowId": 2}}]

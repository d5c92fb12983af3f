"""protocol/v4/topic.py with conversation_apply.py: the captured stream, then every sequence rule and delta op."""

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.protocol.v4_captures import capture, captured_frames, fragments
from zcode_acp.protocol.v4 import conversation_apply as ca
from zcode_acp.protocol.v4.reassembly import CHECKSUM_MISMATCH
from zcode_acp.protocol.v4.topic import (
    Applied,
    Ignored,
    ResyncNeeded,
    TopicSubscription,
    subscribe_params,
    unsubscribe_params,
)
from zcode_acp.protocol.v4.wire import parse_wire

S03A = captured_frames("s03a-official")
SNAPSHOT, DELTAS = S03A[0], S03A[1]
TOPIC = SNAPSHOT["topic"]
SUB = SNAPSHOT["subscriptionId"]
EPOCH = SNAPSHOT["frame"]["payload"]["snapshot"]["logEpoch"]


def requests(name, method):
    return [r for r in capture(name) if r.get("method") == method and r["kind"] == "request"]


def answers(name, method):
    return [r for r in capture(name) if r.get("method") == method and r["kind"] == "response"]


def subscription():
    sub = TopicSubscription(TOPIC, ca.ConversationState())
    assert sub.subscribed({"subscriptionId": SUB, "mode": "snapshot", "logEpoch": EPOCH}) == []
    return sub


def feed(sub, *wires, now=0.0):
    outcomes = []
    for params in wires:
        outcomes += sub.accept(parse_wire(params), now)
    return outcomes


_ordinal = [100]


def frame(from_seq, to_seq, deltas=None, snapshot=None, sub_id=SUB, delivery="online"):
    """A complete wire with the captured envelope, new content, the next ordinal."""
    _ordinal[0] += 1
    payload = {"kind": "snapshot", "snapshot": snapshot} if snapshot is not None else {"kind": "deltas", "deltas": deltas}
    return {
        "wireVersion": 3,
        "kind": "complete",
        "deliveryKind": delivery,
        "logicalFrameId": f"{sub_id}-lf-{_ordinal[0]}",
        "logicalFrameOrdinal": _ordinal[0],
        "topic": TOPIC,
        "subscriptionId": sub_id,
        "frame": {
            "topic": TOPIC, "subscriptionId": sub_id, "sentAt": 1, "fromSeq": from_seq, "toSeq": to_seq, "payload": payload,
        },
    }


def snapshot_with(rows, seq=5, **state):
    snap = copy.deepcopy(SNAPSHOT["frame"]["payload"]["snapshot"])
    snap.update(state, seq=seq)
    snap["rows"] = {"window": rows, "totalCount": len(rows), "firstRowId": rows[0]["rowId"] if rows else None}
    return snap


def text_row(row_id, text="", kind="assistantText", state="streaming"):
    return {"rowId": row_id, "turnId": "t1", "createdAt": 1, "createdAtSeq": row_id, "kind": kind, "text": text, "state": state}


def tool_row(row_id, **extra):
    return {"rowId": row_id, "turnId": "t1", "createdAt": 1, "createdAtSeq": row_id, "kind": "toolCall",
            "toolCallId": f"call-{row_id}", "toolName": "Bash", "status": "running", "inputText": "", **extra}


def at(rows, seq=5, **state):
    sub = subscription()
    (outcome,) = feed(sub, frame(0, seq, snapshot=snapshot_with(rows, seq, **state)))
    assert isinstance(outcome, Applied)
    return sub


# -- the captured stream -------------------------------------------------------------------


def test_the_captured_stream_applies_snapshot_deltas_and_recovery_and_ignores_the_other_subscriptions():
    sub = subscription()
    outcomes = feed(sub, *S03A)
    applied = [o for o in outcomes if isinstance(o, Applied)]
    expected = [("initial", 0, True), ("online", 1, False), ("recovery", 1, True)]
    assert [(o.delivery_kind, o.seq, o.snapshot) for o in applied] == expected
    ignored = [o for o in outcomes if isinstance(o, Ignored)]
    assert len(ignored) == 3 and all("not the current one" in o.reason for o in ignored)
    assert sub.seq == 1 and sub.log_epoch == EPOCH
    assert sub.applier.state["control"]["phase"] == "draft"
    assert sub.applier.rows == []


def test_the_subscribe_resync_and_unsubscribe_params_are_the_captured_ones():
    for subscribe in requests("s03a-official", "v4/conversation/subscribe"):
        p = subscribe["params"]
        assert subscribe_params(p["topic"], p["connectionId"], client_mode=p["clientMode"], workspace=p["workspace"]) == p
    (resync,) = requests("s03a-official", "v4/conversation/resync")
    sub = TopicSubscription(TOPIC, ca.ConversationState())
    sub.subscribed(answers("s03a-official", "v4/conversation/subscribe")[0]["result"]["ack"])
    feed(sub, *S03A[:2])
    assert sub.resync_params("s03a-capture", force_snapshot=True) == resync["params"]
    assert sub.resync_params("s03a-capture", force_snapshot=False)["base"] == {"logEpoch": EPOCH, "seq": 1}
    for unsubscribe in requests("s03a-official", "v4/conversation/unsubscribe"):
        p = unsubscribe["params"]
        assert unsubscribe_params(p["topic"], p["connectionId"], p["subscriptionId"]) == p


def test_frames_before_the_ack_are_held_and_replayed_for_the_subscription_it_names():
    sub = TopicSubscription(TOPIC, ca.ConversationState())
    assert all(isinstance(o, Ignored) for o in feed(sub, *S03A))
    assert not sub.ready
    outcomes = sub.subscribed({"subscriptionId": SUB, "mode": "snapshot", "logEpoch": EPOCH})
    assert [o.seq for o in outcomes if isinstance(o, Applied)] == [0, 1, 1]
    assert sub.seq == 1


def test_a_resubscribe_holds_frames_until_its_ack_and_drops_the_old_subscriptions():
    sub = subscription()
    feed(sub, *S03A[:3])
    sub.resubscribing()
    assert all(isinstance(o, Ignored) for o in feed(sub, *S03A[3:]))
    outcomes = sub.subscribed({"subscriptionId": "fixture-continuous-1", "mode": "snapshot", "logEpoch": EPOCH})
    assert [o.seq for o in outcomes if isinstance(o, Applied)] == [1, 2]


def test_frames_held_before_an_ack_are_bounded():
    sub = TopicSubscription(TOPIC, ca.ConversationState())
    outcomes = feed(sub, *([SNAPSHOT] * 300))
    assert sum("dropped" in o.reason for o in outcomes) == 300 - 256


def test_a_frame_for_another_topic_is_ignored():
    other = {**SNAPSHOT, "topic": "conversation/someone-else"}
    assert isinstance(feed(subscription(), other)[0], Ignored)


def test_a_new_subscription_ack_makes_the_old_ones_frames_stale():
    sub = subscription()
    sub.subscribed({"subscriptionId": "fixture-continuous-1", "mode": "snapshot", "logEpoch": EPOCH})
    outcomes = feed(sub, *S03A)
    assert [o.seq for o in outcomes if isinstance(o, Applied)] == [1, 2]  # fixture-continuous-1's two snapshots


# -- the sequence rules ---------------------------------------------------------------------


def test_deltas_before_any_snapshot_ask_for_a_snapshot():
    (outcome,) = feed(subscription(), DELTAS)
    assert outcome == ResyncNeeded(outcome.reason, None, True)


def test_a_gap_asks_a_resync_from_the_state_held_and_applies_nothing():
    sub = at([text_row(1, "a")], seq=5)
    (outcome,) = feed(sub, frame(6, 7, [{"op": "row.delta", "rowId": 1, "path": "text", "append": "b"}]))
    assert isinstance(outcome, ResyncNeeded)
    assert outcome.base == {"logEpoch": EPOCH, "seq": 5} and not outcome.force_snapshot
    assert sub.applier.row(1)["text"] == "a" and sub.seq == 5
    # One resync at a time.
    assert isinstance(feed(sub, frame(8, 9, []))[0], Ignored)
    # A recovery snapshot ends it; then gaps are reported again.
    assert isinstance(feed(sub, frame(0, 9, snapshot=snapshot_with([text_row(1, "abc")], 9), delivery="recovery"))[0], Applied)
    assert isinstance(feed(sub, frame(10, 11, []))[0], ResyncNeeded)


def test_deltas_already_applied_are_dropped_silently():
    sub = at([text_row(1, "a")], seq=5)
    assert isinstance(feed(sub, frame(5, 6, [{"op": "row.delta", "rowId": 1, "path": "text", "append": "b"}]))[0], Applied)
    (outcome,) = feed(sub, frame(5, 6, [{"op": "row.delta", "rowId": 1, "path": "text", "append": "b"}]))
    assert isinstance(outcome, Ignored)
    assert sub.applier.row(1)["text"] == "ab" and sub.seq == 6


def test_a_lost_logical_frame_asks_a_resync():
    sub = at([], seq=5)
    (outcome,) = feed(sub, *fragments(frame(5, 6, []), [20], checksum="00000000"))
    assert isinstance(outcome, ResyncNeeded) and CHECKSUM_MISMATCH in outcome.reason
    assert outcome.base == {"logEpoch": EPOCH, "seq": 5}


def test_an_assembly_that_times_out_asks_a_resync():
    sub = at([], seq=5)
    assert feed(sub, fragments(frame(5, 6, []), [20])[0], now=0) == []
    assert sub.next_expiry_ms == 30_000
    (outcome,) = sub.expire(30_000)
    assert isinstance(outcome, ResyncNeeded)


def test_another_log_epoch_in_an_ack_drops_the_base():
    sub = at([], seq=5)
    sub.subscribed({"subscriptionId": SUB, "mode": "snapshot", "logEpoch": "another-epoch"})
    assert not sub.ready
    (outcome,) = feed(sub, frame(5, 6, []))
    assert isinstance(outcome, ResyncNeeded) and outcome.force_snapshot


def test_a_snapshot_without_rows_is_refused_and_asks_a_snapshot():
    sub = subscription()
    snap = copy.deepcopy(SNAPSHOT["frame"]["payload"]["snapshot"])
    del snap["rows"]
    (outcome,) = feed(sub, frame(0, 3, snapshot=snap))
    assert isinstance(outcome, ResyncNeeded) and outcome.force_snapshot and not sub.ready


# -- the delta ops --------------------------------------------------------------------------


def apply(sub, *deltas):
    seq = sub.seq
    (outcome,) = feed(sub, frame(seq, seq + 1, list(deltas)))
    assert isinstance(outcome, Applied), outcome
    return outcome.changes


def test_a_snapshot_is_one_reset_change_with_its_rows():
    sub = subscription()
    (outcome,) = feed(sub, frame(0, 5, snapshot=snapshot_with([text_row(1, "hi")])))
    (reset,) = outcome.changes
    assert isinstance(reset, ca.Reset) and reset.rows[0]["text"] == "hi" and "rows" not in reset.state


def test_row_appended_then_text_streams_in_as_appends():
    sub = at([])
    (appended,) = apply(sub, {"op": "row.appended", "row": text_row(7)})
    assert appended == ca.RowAppended(text_row(7))
    assert sub.applier.first_row_id == 7 and sub.applier.total_count == 1
    changes = apply(sub, {"op": "row.delta", "rowId": 7, "path": "text", "append": "Hel"},
                    {"op": "row.delta", "rowId": 7, "path": "text", "append": "lo"})
    assert [(c.text, c.row["text"]) for c in changes] == [("Hel", "Hel"), ("lo", "Hello")]


def test_row_delta_reaches_tool_input_tool_output_and_subagent_summary():
    subagent = {**text_row(3), "kind": "subagent", "summaryText": "s", "subagentType": "explore", "status": "running"}
    sub = at([tool_row(1), tool_row(2, output={"text": "out"}), subagent])
    changes = apply(sub, {"op": "row.delta", "rowId": 1, "path": "inputText", "append": '{"cmd"'},
                    {"op": "row.delta", "rowId": 2, "path": "output.text", "append": "put"},
                    {"op": "row.delta", "rowId": 3, "path": "summaryText", "append": "ummary"})
    assert [c.row for c in changes] == [sub.applier.row(1), sub.applier.row(2), sub.applier.row(3)]
    assert sub.applier.row(1)["inputText"] == '{"cmd"'
    assert sub.applier.row(2)["output"] == {"text": "output"}
    assert sub.applier.row(3)["summaryText"] == "summary"


def test_streaming_leaves_the_received_frames_and_the_rows_handed_out_as_they_were():
    # The applier grows a streaming row in place (streaming stays linear); what it was
    # given and what it handed out in an earlier change must not grow with it.
    snapshot_rows = [text_row(1, "a"), tool_row(2, output={"text": "o"})]
    sub = at(snapshot_rows)
    def streamed(seq, i):
        return frame(seq, seq + 1, [{"op": "row.delta", "rowId": row_id, "path": path, "append": str(i)}
                                    for row_id, path in ((1, "text"), (2, "output.text"), (3, "text"))])
    received = [frame(5, 6, [{"op": "row.appended", "row": text_row(3, "x")}]), streamed(6, 0), streamed(7, 1),
                frame(8, 9, [{"op": "row.upserted", "row": text_row(3, "x0", state="done")}]),
                frame(9, 10, [{"op": "row.delta", "rowId": 1, "path": "text", "append": "!"}]), streamed(10, 2)]
    pristine = copy.deepcopy(received)
    outcomes = feed(sub, *received)
    (appended,), (replaced,) = outcomes[0].changes, outcomes[3].changes
    assert all(isinstance(o, Applied) for o in outcomes)
    assert received == pristine and snapshot_rows == [text_row(1, "a"), tool_row(2, output={"text": "o"})]
    assert appended.row == text_row(3, "x")
    assert replaced.previous == text_row(3, "x01") and replaced.row == text_row(3, "x0", state="done")
    assert sub.applier.row(1)["text"] == "a01!2"
    assert sub.applier.row(2)["output"] == {"text": "o012"}
    assert sub.applier.row(3)["text"] == "x0" + "2"


def test_row_delta_on_a_path_the_row_lacks_or_a_row_not_loaded_changes_nothing():
    sub = at([tool_row(1), text_row(2, "x")])
    assert apply(sub, {"op": "row.delta", "rowId": 1, "path": "output.text", "append": "no output yet"},
                 {"op": "row.delta", "rowId": 2, "path": "summaryText", "append": "wrong kind"},
                 {"op": "row.delta", "rowId": 99, "path": "text", "append": "evicted"}) == []
    assert sub.applier.row(1) == tool_row(1) and sub.applier.row(2)["text"] == "x"


def test_row_upserted_replaces_a_loaded_row_whole_and_ignores_others():
    sub = at([tool_row(1, input={"a": 1})])
    done = tool_row(1, status="success")
    (replaced,) = apply(sub, {"op": "row.upserted", "row": done}, {"op": "row.upserted", "row": tool_row(50)})
    assert replaced == ca.RowReplaced(done, tool_row(1, input={"a": 1}))
    assert "input" not in sub.applier.row(1)
    assert sub.applier.row(50) is None


def test_row_removed_cuts_the_branch_from_that_row_on():
    sub = at([text_row(1), text_row(2), text_row(3)])
    (removed,) = apply(sub, {"op": "row.removed", "fromRowId": 2})
    assert [r["rowId"] for r in removed.removed] == [2, 3]
    assert [r["rowId"] for r in sub.applier.rows] == [1] and sub.applier.total_count == 1
    apply(sub, {"op": "row.appended", "row": text_row(4)})
    assert sub.applier.row(4) is not None and sub.applier.row(2) is None


def test_removing_from_the_first_row_resets_count_and_first_row():
    sub = at([text_row(5), text_row(6)])
    apply(sub, {"op": "row.removed", "fromRowId": 5})
    assert (sub.applier.rows, sub.applier.total_count, sub.applier.first_row_id) == ([], 0, None)
    apply(sub, {"op": "row.appended", "row": text_row(9)})
    assert sub.applier.first_row_id == 9


def test_state_updated_replaces_each_key_whole_never_merging():
    sub = at([], meta={"title": "", "titleSource": "default"})
    changes = apply(sub, {"op": "state.updated", "patch": {"meta": {"title": "Fix the bug"}, "revision": 4}})
    assert changes == [
        ca.StateReplaced("meta", {"title": "Fix the bug"}, {"title": "", "titleSource": "default"}),
        ca.StateReplaced("revision", 4, 0),
    ]
    assert sub.applier.state["meta"] == {"title": "Fix the bug"}  # titleSource gone: replaced, not merged
    assert sub.applier.state["control"]["phase"] == "draft"  # untouched keys stay


def test_live_only_and_unmodelled_ops_change_no_state():
    sub = at([text_row(1)])
    before = (copy.deepcopy(sub.applier.state), list(sub.applier.rows))
    changes = apply(sub, {"op": "pluginUi.resourceUpdated", "pluginId": "p", "serverName": "s", "uri": "u", "subscribers": []},
                    {"op": "workflowRun.removed", "runId": "r", "revision": 1},
                    {"op": "row.teleported", "rowId": 1})
    assert [type(c) for c in changes] == [ca.LiveNotice, ca.NotModelled, ca.NotModelled]
    assert (sub.applier.state, sub.applier.rows) == before
    assert sub.seq == 6


@pytest.mark.parametrize(
    "bad",
    [
        {"op": "row.appended", "row": {"kind": "assistantText"}},
        {"op": "row.appended", "row": {"rowId": True, "kind": "x"}},
        {"op": "row.delta", "rowId": 1, "path": "title", "append": "x"},
        {"op": "row.delta", "rowId": 1, "path": "text", "append": 5},
        {"op": "row.removed"},
        {"op": "state.updated", "patch": ["meta"]},
        {"op": "state.updated", "patch": {"rows": {"window": []}}},
    ],
)
def test_one_bad_delta_fails_the_whole_frame_and_asks_a_snapshot(bad):
    sub = at([text_row(1, "a")])
    good = {"op": "row.delta", "rowId": 1, "path": "text", "append": "b"}
    (outcome,) = feed(sub, frame(5, 6, [good, bad]))
    assert isinstance(outcome, ResyncNeeded) and outcome.force_snapshot
    assert sub.applier.row(1)["text"] == "a" and sub.seq == 5


# -- a property: however frames arrive, text is never applied out of order -------------------


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=80)
@given(data=st.data())
def test_frames_in_any_order_with_duplicates_never_apply_out_of_order_and_resync_converges(data):
    pieces = data.draw(st.lists(st.text(alphabet="abcé✓", min_size=1, max_size=3), min_size=1, max_size=10))
    full = "".join(pieces)
    sub = at([text_row(1)], seq=0)
    # Ordinals grow with seq, as the engine numbers them; a frame that arrives after a
    # higher ordinal is a late leftover to the assembler, and the gap it leaves a resync.
    frames = [frame(i, i + 1, [{"op": "row.delta", "rowId": 1, "path": "text", "append": p}]) for i, p in enumerate(pieces)]
    arrivals = data.draw(st.permutations(frames + data.draw(st.lists(st.sampled_from(frames), max_size=5))))
    resyncs = 0
    for wire in arrivals:
        for outcome in feed(sub, json.loads(json.dumps(wire))):
            assert full.startswith(sub.applier.row(1)["text"])
            if isinstance(outcome, ResyncNeeded):
                resyncs += 1
    if sub.seq != len(pieces):
        # The engine answers the resync with a recovery snapshot of where it is.
        sub.subscribed({"subscriptionId": SUB, "mode": "snapshot", "logEpoch": EPOCH})
        recovery = frame(0, len(pieces), snapshot=snapshot_with([text_row(1, full)], len(pieces)), delivery="recovery")
        assert isinstance(feed(sub, recovery)[0], Applied)
        assert resyncs >= 1
    assert sub.applier.row(1)["text"] == full and sub.seq == len(pieces)

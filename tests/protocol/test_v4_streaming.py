"""The v4 stream's shortcut and the resting conversation: what they cost, and that they change nothing.

``TopicSubscription.accept_params`` takes a whole wire of text deltas straight to the applier
(protocol/v4/streaming.py); ``V4Feed.rest`` packs an idle conversation's rows and state. Both
must do exactly what the general path does, so each is checked against a twin that takes the
general path (``accept(parse_wire(...))``, a feed never rested) on the same frames. What they
save is checked by what the interpreter runs (Python calls per frame) and what the feed keeps
(live rows), never by a clock: the figures are in ``bench`` (``python -m bench --only v4``).
"""

import copy
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.protocol.v4_captures import captured_frames
from zcode_acp.actors.session.v4.feed import V4Feed
from zcode_acp.protocol.v4 import conversation_apply as ca
from zcode_acp.protocol.v4.topic import Applied, TopicSubscription
from zcode_acp.protocol.v4.wire import parse_wire

S03A = captured_frames("s03a-official")
SNAPSHOT = S03A[0]
TOPIC = SNAPSHOT["topic"]
SUB = SNAPSHOT["subscriptionId"]
EPOCH = SNAPSHOT["frame"]["payload"]["snapshot"]["logEpoch"]
SESSION = TOPIC.partition("/")[2]


def wire(ordinal, from_seq, to_seq, deltas=None, snapshot=None, delivery="online"):
    payload = {"kind": "snapshot", "snapshot": snapshot} if snapshot is not None else {"kind": "deltas", "deltas": deltas}
    return {
        "wireVersion": 3, "kind": "complete", "deliveryKind": delivery, "logicalFrameId": f"{SUB}-lf-{ordinal}",
        "logicalFrameOrdinal": ordinal, "topic": TOPIC, "subscriptionId": SUB,
        "frame": {"topic": TOPIC, "subscriptionId": SUB, "sentAt": 1, "fromSeq": from_seq, "toSeq": to_seq,
                  "payload": payload},
    }


def text_row(row_id, text="", kind="assistantText", state="streaming"):
    return {"rowId": row_id, "turnId": "t1", "createdAt": 1, "createdAtSeq": row_id, "kind": kind, "text": text,
            "state": state}


def snapshot(rows, seq=5, **state):
    snap = copy.deepcopy(SNAPSHOT["frame"]["payload"]["snapshot"])
    snap.update(state, seq=seq)
    snap["rows"] = {"window": rows, "totalCount": len(rows), "firstRowId": rows[0]["rowId"] if rows else None}
    return snap


def at_snapshot(rows, seq=5):
    sub = TopicSubscription(TOPIC, ca.ConversationState())
    sub.subscribed({"subscriptionId": SUB, "mode": "snapshot", "logEpoch": EPOCH})
    (outcome,) = sub.accept(parse_wire(wire(1, 0, seq, snapshot=snapshot(rows, seq))), 0.0)
    assert isinstance(outcome, Applied)
    return sub


def text_delta(row_id, append, path="text"):
    return {"op": "row.delta", "rowId": row_id, "path": path, "append": append}


def seen(sub):
    """What a subscription's outcomes and state say, comparable between twins."""
    state = sub.applier
    return sub.seq, sub.log_epoch, copy.deepcopy(state.rows), copy.deepcopy(state.state), state.total_count


# -- the shortcut decides as the general path does -------------------------------------------

# Frames near the stream's common one: right, or wrong in one place the general path checks.
_MUTATIONS = [
    None,
    ("wire", "wireVersion", True), ("wire", "wireVersion", 3.0), ("wire", "kind", "fragment"),
    ("wire", "subscriptionId", "sub-other"), ("wire", "logicalFrameOrdinal", 0), ("wire", "logicalFrameOrdinal", 2.0),
    ("wire", "logicalFrameOrdinal", 1), ("wire", "logicalFrameId", ""), ("wire", "deliveryKind", "late"),
    ("wire", "deliveryKind", ["online"]), ("wire", "extra", 1), ("wire", "frame", "text"),
    ("frame", "fromSeq", -1), ("frame", "fromSeq", True), ("frame", "toSeq", 2**70), ("frame", "sentAt", 1.5),
    ("frame", "sentAt", float("nan")), ("frame", "subscriptionId", "sub-other"), ("frame", "extra", None),
    ("delta", "rowId", True), ("delta", "rowId", 99), ("delta", "path", "inputText"), ("delta", "path", ["text"]),
    ("delta", "append", 7), ("delta", "append", "\ud800"), ("delta", "append", "é中😀\x00"), ("delta", "op", "row.upserted"),
    ("delta", "extra", 1), ("drop", "fromSeq", None), ("drop", "append", None),
]


def _mutated(params, mutation):
    if mutation is None:
        return params
    where, key, value = mutation
    target = {"wire": params, "frame": params["frame"]}.get(where) or params["frame"]["payload"]["deltas"][0]
    if where == "drop":
        target = params["frame"] if key in params["frame"] else params["frame"]["payload"]["deltas"][0]
        target.pop(key)
        target["other"] = 1  # as many keys as before, one of them another
    else:
        target[key] = value
    return params


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(st.tuples(st.sampled_from(_MUTATIONS), st.integers(-1, 1), st.text(max_size=3),
                                st.integers(1, 3)), min_size=1, max_size=12))
def test_a_frame_taken_by_the_shortcut_does_what_the_general_path_does(steps):
    rows = [text_row(3, "a"), text_row(4, "r", kind="reasoning"), {"rowId": 5, "kind": "toolCall", "inputText": ""}]
    fast, general = at_snapshot(copy.deepcopy(rows)), at_snapshot(copy.deepcopy(rows))
    seq, ordinal = 5, 1
    for mutation, seq_shift, text, row_count in steps:
        ordinal += 1
        deltas = [text_delta(3 + (i % 3), text) for i in range(row_count)]
        params = _mutated(wire(ordinal, seq + seq_shift, seq + seq_shift + 1, deltas), mutation)
        twin = copy.deepcopy(params)
        assert fast.accept_params(params, 0.0) == general.accept(parse_wire(twin), 0.0)
        assert seen(fast) == seen(general)
        seq = general.seq


def test_a_streaming_text_delta_runs_a_handful_of_python_calls():
    """Each frame of a streaming turn used to cost ~30 Python calls (a record per layer, each
    check its own function); the shortcut takes it to the applier and the translator in a few,
    and a batch of them is looped over where the checks live (``accept_many``)."""
    feed = V4Feed(SESSION, "conn")
    feed.subscribed({"ack": {"subscriptionId": SUB, "mode": "snapshot", "logEpoch": EPOCH}}, 0.0)
    feed.frames([wire(1, 0, 5, snapshot=snapshot([text_row(3)]))], 0.0)
    frames = [wire(2 + i, 5 + i, 6 + i, [text_delta(3, f"w{i} ")]) for i in range(100)]
    feed.frames(frames[:1], 0.0)  # the row becomes the applier's own copy at its first append
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        calls += event == "call"

    sys.setprofile(count)
    try:
        step = feed.frames(frames[1:], 0.0)
    finally:
        sys.setprofile(None)
    assert [u["content"]["text"] for u in step.updates] == [f"w{i} " for i in range(1, 100)]
    # 37.1 before the shortcut, 7 with it; 3 since the batch is looped over in the subscription
    # (the check, the assembler's settle, the applier) and translated in one call
    assert calls / 99 <= 3.5, f"{calls / 99:.1f} Python calls per frame"


# -- an idle conversation rests packed --------------------------------------------------------


def _turn(first_ordinal, seq, row_id, words):
    """A turn's frames: its row appended, its words streamed, its control ended."""
    frames = [wire(first_ordinal, seq, seq + 1, [{"op": "row.appended", "row": text_row(row_id)},
                                                 {"op": "state.updated", "patch": {"control": {"phase": "running"}}}])]
    for index, word in enumerate(words):
        frames.append(wire(first_ordinal + 1 + index, seq + 1 + index, seq + 2 + index, [text_delta(row_id, word)]))
    end = seq + 1 + len(words)
    frames.append(wire(first_ordinal + 1 + len(words), end, end + 1,
                       [{"op": "row.upserted", "row": text_row(row_id, "".join(words), state="complete")},
                        {"op": "state.updated", "patch": {"control": {"phase": "completed"}}}]))
    return frames


def test_an_idle_feed_rests_packed_and_goes_on_as_one_that_never_rested():
    rested, awake = (V4Feed(SESSION, "conn") for _ in range(2))
    for feed in (rested, awake):
        feed.subscribed({"ack": {"subscriptionId": SUB, "mode": "snapshot", "logEpoch": EPOCH}}, 0.0)
        feed.frames([wire(1, 0, 5, snapshot=snapshot([text_row(1, "before", state="complete")]))], 0.0)
    ordinal, seq, row_id = 2, 5, 10
    for turn in range(4):
        frames = _turn(ordinal, seq, row_id, [f"t{turn}w{i} " for i in range(5)])
        ordinal, seq, row_id = ordinal + len(frames), seq + len(frames), row_id + 1
        # each frame on its own, so the rested feed packs between frames wherever it may
        for params in frames:
            one, other = rested.frames([copy.deepcopy(params)], 0.0), awake.frames([params], 0.0)
            assert (one.updates, one.signals, one.resync, one.ignored) == \
                (other.updates, other.signals, other.resync, other.ignored)
            rested.rest()
        assert rested.state.packed and rested.state._rows == []  # the turn ended: it rests
        assert rested.rest() and rested.state.packed  # resting again leaves it packed
        assert rested.base() == awake.base()
    assert rested.state.rows == awake.state.rows and rested.state.state == awake.state.state
    assert rested.state.row(12) == awake.state.row(12)


def test_a_running_turn_is_not_packed():
    feed = V4Feed(SESSION, "conn")
    feed.subscribed({"ack": {"subscriptionId": SUB, "mode": "snapshot", "logEpoch": EPOCH}}, 0.0)
    feed.frames([wire(1, 0, 5, snapshot=snapshot([text_row(3)], control={"phase": "running"}))], 0.0)
    assert not feed.rest()
    assert feed.state._packed is None and feed.state._rows


def test_a_row_delta_whose_path_is_not_a_string_is_refused_not_raised():
    """The applier asked its set of paths about a list, which raised out of the Session's frame handling."""
    sub = at_snapshot([text_row(3, "a")])
    (outcome,) = sub.accept(parse_wire(wire(2, 5, 6, [text_delta(3, "b", path=["text"])])), 0.0)
    assert not isinstance(outcome, Applied) and "deltas refused" in outcome.reason
    assert sub.applier.row(3)["text"] == "a" and sub.seq == 5


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(st.tuples(st.sampled_from(_MUTATIONS), st.integers(-1, 1), st.text(max_size=3),
                                st.integers(1, 3)), min_size=1, max_size=12))
def test_a_batch_accepted_at_once_does_what_its_frames_do_one_by_one(steps):
    """``accept_many`` (one loop over the batch, one stream shape) against the general path frame by frame."""
    rows = [text_row(3, "a"), text_row(4, "r", kind="reasoning"), {"rowId": 5, "kind": "toolCall", "inputText": ""}]
    batched, general = at_snapshot(copy.deepcopy(rows)), at_snapshot(copy.deepcopy(rows))
    seq, ordinal, batch, expected = 5, 1, [], []
    for mutation, seq_shift, text, row_count in steps:
        ordinal += 1
        deltas = [text_delta(3 + (i % 3), text) for i in range(row_count)]
        params = _mutated(wire(ordinal, seq + seq_shift, seq + seq_shift + 1, deltas), mutation)
        batch.append(copy.deepcopy(params))
        expected += general.accept(parse_wire(params), 0.0)
        seq = general.seq if general.seq is not None else seq
    assert batched.accept_many(batch, 0.0) == expected
    assert seen(batched) == seen(general)

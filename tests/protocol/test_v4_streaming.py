"""The v4 stream's shortcut and the resting conversation: what they cost, and that they change nothing.

``TopicSubscription.accept_many`` takes a run of text-delta frames straight to the applier
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
    # what a run's columns could take for the first frame's: an equal float, another delivery, a dict
    ("delta", "rowId", 3.0), ("frame", "toSeq", 6.0), ("wire", "deliveryKind", "recovery"),
    ("wire", "logicalFrameId", 7), ("frame", "payload", {"kind": "deltas", "deltas": {}}), ("delta", "path", "summaryText"),
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


def feed_at_snapshot(rows, seq=5, *, general=False):
    """A feed holding a snapshot of ``rows``; ``general``: one whose subscription takes every frame
    the general way, one by one (``accept(parse_wire(...))``), the twin the shortcut is held to."""
    feed = V4Feed(SESSION, "conn")
    if general:
        sub = feed.subscription
        sub.accept_many = lambda batch, now_ms: [o for params in batch for o in sub.accept(parse_wire(params), now_ms)]
    feed.subscribed({"ack": {"subscriptionId": SUB, "mode": "snapshot", "logEpoch": EPOCH}}, 0.0)
    feed.frames([wire(1, 0, seq, snapshot=snapshot(rows, seq))], 0.0)
    return feed


def told(step):
    return step.updates, step.signals, step.resync, step.ignored


_ROWS = [text_row(3, "a"), text_row(4, "r", kind="reasoning"),
         {"rowId": 5, "turnId": "t1", "createdAt": 1, "createdAtSeq": 5, "kind": "toolCall", "toolCallId": "call-5",
          "toolName": "Bash", "status": "running", "inputText": "", "output": {"text": "$ "}}]
_PATHS = {3: "text", 4: "text", 5: "output.text"}  # each row's streaming text

# One frame of a stream: a mutation (None, the commonest, leaves it right), a shift of its
# fromSeq, its text, the row its deltas go to (or 0: one to each row) and how many it carries.
_FRAMES = st.tuples(st.one_of(st.none(), st.none(), st.none(), st.sampled_from(_MUTATIONS)), st.sampled_from([0, 0, 0, -1, 1]),
                    st.text(max_size=3), st.sampled_from([3, 3, 3, 4, 5, 0]), st.integers(0, 3))


def _frames(steps, seq=5, ordinal=1):
    """The frames ``steps`` describe, each following the one before as the general path took it."""
    twin, frames = feed_at_snapshot(copy.deepcopy(_ROWS), seq, general=True), []
    for mutation, seq_shift, text, row, count in steps:
        ordinal += 1
        if mutation is not None:
            count = max(count, 1)  # a mutation may be of the delta
        deltas = [text_delta(row or 3 + i % 3, text, _PATHS[row or 3 + i % 3]) for i in range(count)]
        params = _mutated(wire(ordinal, seq + seq_shift, seq + seq_shift + 1, deltas), mutation)
        frames.append(copy.deepcopy(params))
        twin.frames([params], 0.0)
        seq = twin.subscription.seq
    return frames


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(_FRAMES, min_size=1, max_size=12))
def test_a_frame_taken_by_the_shortcut_does_what_the_general_path_does(steps):
    fast, general = feed_at_snapshot(copy.deepcopy(_ROWS)), feed_at_snapshot(copy.deepcopy(_ROWS), general=True)
    for params in _frames(steps):
        assert told(fast.frames([params], 0.0)) == told(general.frames([copy.deepcopy(params)], 0.0))
        assert seen(fast.subscription) == seen(general.subscription)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(_FRAMES, min_size=1, max_size=70), cut=st.integers(0, 70))
def test_a_batch_accepted_at_once_does_what_its_frames_do_one_by_one(steps, cut):
    """``accept_many`` (runs of the batch taken whole, a batch cut around what is not one) against the
    general path frame by frame, on the same batches (a batch is translated once it is applied: a tool's
    output is shown as the batch leaves its row), and against the general path one frame a batch."""
    frames = _frames(steps)
    parts = [part for part in (frames[:cut], frames[cut:]) if part]
    batched, general = feed_at_snapshot(copy.deepcopy(_ROWS)), feed_at_snapshot(copy.deepcopy(_ROWS), general=True)
    told_batched = [told(batched.frames(copy.deepcopy(part), 0.0)) for part in parts]
    told_general = [told(general.frames(copy.deepcopy(part), 0.0)) for part in parts]
    assert told_batched == told_general
    assert seen(batched.subscription) == seen(general.subscription)
    one_a_batch = feed_at_snapshot(copy.deepcopy(_ROWS), general=True)
    told_general = [told(one_a_batch.frames([params], 0.0)) for params in frames]

    def every(told_steps, part):
        return [x for t in told_steps for x in t[part]]

    # The text the client is sent, the signals, what was dropped: as the frames one a batch say them.
    assert [u for t in told_batched for u in t[0] if u["sessionUpdate"] != "tool_call_update"] == \
        [u for t in told_general for u in t[0] if u["sessionUpdate"] != "tool_call_update"]
    for part in (1, 3):
        assert every(told_batched, part) == every(told_general, part)
    # A resync is asked once (the next waits on it), at the end of its batch: its base is where
    # the state stands then, which differs with the batches' cuts; what is asked does not.
    resyncs = [[(r["topic"], r["subscriptionId"], r["forceSnapshot"]) for *_, r, _ in steps if r]
               for steps in (told_batched, told_general)]
    assert resyncs[0] == resyncs[1]
    assert seen(batched.subscription) == seen(one_a_batch.subscription)


def test_a_long_run_cut_by_another_frame_is_still_taken_as_runs():
    """A turn's text interrupted by another op (a row appended): the batch is cut around it, and
    the rest is still taken as runs, one ``Applied`` each, not one a frame."""
    sub = at_snapshot(copy.deepcopy(_ROWS))
    frames = [wire(2 + i, 5 + i, 6 + i, [text_delta(3, f"w{i} ")]) for i in range(100)]
    frames[37] = wire(39, 42, 43, [{"op": "row.appended", "row": text_row(6)}])
    outcomes = sub.accept_many(frames, 0.0)
    assert all(isinstance(o, Applied) for o in outcomes) and sub.seq == 105
    assert len(outcomes) == 3, outcomes
    assert sub.applier.row(3)["text"] == "a" + "".join(f"w{i} " for i in range(100) if i != 37)
    assert sub.applier.row(6) is not None


def test_a_streaming_text_delta_runs_no_python_call_of_its_own():
    """Each frame of a streaming turn used to cost ~30 Python calls (a record per layer, each
    check its own function), then 3 (one pass a frame); a run of them is checked a column at a
    time, so a batch costs a few calls, whatever its length."""
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
    # 37.1 a frame before the shortcut, 7 with it, 3 with the batch looped over in the subscription
    assert calls / 99 <= 0.3, f"{calls / 99:.2f} Python calls per frame"


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

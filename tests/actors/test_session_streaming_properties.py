"""The Session's streaming shortcuts against models and the full path, for any arrival (hypothesis).

Whatever order the backend's events arrive in, split into whatever batches,
with duplicates: every ``seq`` is applied exactly once, in ``seq`` order, and
an event without a number is applied where it arrives. The streaming case's
shortcut (an event in order with nothing waiting) must not change that.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from zcode_acp.actors.session.sequencer import Sequencer


@st.composite
def arrivals(draw: st.DrawFn) -> tuple[int, list[list[dict]]]:
    count = draw(st.integers(0, 40))
    order = draw(st.permutations(range(1, count + 1)))
    events = [{"seq": seq} for seq in order]
    for _ in range(draw(st.integers(0, 8))):  # duplicates, anywhere
        if count:
            events.insert(draw(st.integers(0, len(events))), {"seq": draw(st.integers(1, count))})
    for _ in range(draw(st.integers(0, 4))):  # events without a number (or not a number)
        events.insert(draw(st.integers(0, len(events))), {"seq": draw(st.sampled_from([None, True, "7"]))})
    cuts = sorted(draw(st.lists(st.integers(0, len(events)), max_size=6)))
    batches = [events[a:b] for a, b in zip([0, *cuts], [*cuts, len(events)], strict=True)]
    return count, batches


@given(arrivals())
def test_every_seq_is_applied_once_in_order_whatever_the_arrival(case):
    count, batches = case
    sequencer = Sequencer()
    applied: list[dict] = []
    for batch in batches:
        applied.extend(sequencer.accept(batch).events)
    numbered = [event["seq"] for event in applied if type(event["seq"]) is int]
    assert numbered == list(range(1, count + 1))  # nothing lost: the arrival had every seq
    assert sequencer.last_seq == count and not sequencer.reorder
    unnumbered = [e for batch in batches for e in batch if type(e["seq"]) is not int]
    assert [e for e in applied if type(e["seq"]) is not int] == unnumbered


@given(arrivals(), st.data())
def test_a_hole_asks_for_a_gap_fetch_once_and_its_answer_fills_it(case, data):
    count, batches = case
    events = [e for batch in batches for e in batch if type(e["seq"]) is int]
    if not count:
        return
    missing = data.draw(st.integers(1, count))
    sequencer = Sequencer()
    applied: list[int] = []
    gap_asks = []
    for event in events:
        if event["seq"] == missing:
            continue  # this one never arrives on the stream
        ready = sequencer.accept([event])
        applied.extend(e["seq"] for e in ready.events)
        if ready.gap_after is not None:
            gap_asks.append(ready.gap_after)
    assert applied == list(range(1, missing))  # everything before the hole, nothing after it
    if missing < count:  # something after the hole arrived: one fetch asked, from before the hole
        assert len(gap_asks) == 1 and gap_asks[0] < missing
    ready = sequencer.gap_filled([{"seq": missing}])
    applied.extend(e["seq"] for e in ready.events)
    assert applied == list(range(1, count + 1))


call_ids = st.one_of(st.none(), st.integers(), st.sampled_from(["c1", "c2"]))
payloads = st.one_of(
    st.none(), st.text(max_size=3),
    st.fixed_dictionaries({"kind": st.sampled_from(["text_delta", "reasoning_delta"]), "delta": st.text(max_size=3)}),
    st.fixed_dictionaries({"kind": st.just("tool_input"), "toolCallId": call_ids,  # a tool call being written
                           "toolName": st.sampled_from(["Bash", "Read"]),
                           "input": st.one_of(st.none(), st.fixed_dictionaries({"run_in_background": st.booleans()}))}),
    st.fixed_dictionaries({"kind": st.just("result"), "toolCallId": call_ids,  # its launch result
                           "result": st.one_of(st.none(), st.text(max_size=2), st.just({"isError": True}))}),
)
streaming_events = st.fixed_dictionaries({
    "seq": st.integers(1, 9), "type": st.just("model.streaming"),
    "turnId": st.sampled_from(["t1", "t2", None]), "payload": payloads,
})


@given(st.lists(streaming_events, max_size=12), st.booleans(), st.booleans())
def test_the_streaming_shortcut_routes_as_the_full_path_does(events, has_turn, terminal):
    """EventRouter's shortcut (no background turn running) against the full path, forced by an
    unrelated background turn: the same places, the same launch bookkeeping."""
    from zcode_acp.actors.session.routing import EventRouter, Routed

    fast, full = EventRouter(), EventRouter()
    full.background_turns["a background turn none of these events belongs to"] = None
    routed_fast, routed_full = Routed(), Routed()
    for event in events:
        fast.route(event, routed_fast, has_turn, terminal)
        full.route(event, routed_full, has_turn, terminal)
    assert routed_fast == routed_full
    assert (fast.background_calls, fast.launch_cards) == (full.background_calls, full.launch_cards)

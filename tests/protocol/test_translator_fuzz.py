"""Whatever the backend sends, the translator neither crashes nor emits an invalid update."""

from hypothesis import given, settings
from hypothesis import strategies as st

from zcode_acp.protocol.translator import TurnTranslator
from tests.schema import assert_valid_update

ids = st.sampled_from(["c1", "c2", "c3", "bg"])
names = st.sampled_from(["Bash", "Read", "Edit", "Write", "MultiEdit", "Agent", "Grep", "TodoWrite", None, 7])
texty = st.one_of(st.text(max_size=30), st.none(), st.integers(), st.lists(st.text(max_size=5), max_size=2))
inputs = st.one_of(
    st.none(),
    st.fixed_dictionaries({}, optional={
        "command": texty, "file_path": texty, "old_string": texty, "new_string": texty, "content": texty,
        "run_in_background": st.booleans(), "edits": st.lists(st.dictionaries(st.sampled_from(
            ["old_string", "new_string"]), texty, max_size=2), max_size=2), "offset": st.integers(-5, 5)}),
)
results = st.one_of(texty, st.fixed_dictionaries({}, optional={
    "content": texty, "success": st.booleans(), "error": texty, "perf": st.fixed_dictionaries({}, optional={
        "exitCode": st.one_of(st.integers(0, 3), st.text(max_size=2))})}))
tool_events = st.fixed_dictionaries({
    "type": st.just("tool.updated"),
    "payload": st.fixed_dictionaries(
        {"kind": st.sampled_from(["scheduled", "started", "progress", "result", "result", "error", "batch", "weird"]),
         # mostly a known id, so cards see many events (and repeated results)
         "toolCallId": st.one_of(ids, ids, ids, st.none())},
        optional={"toolName": names, "input": inputs,
                  "stdoutTail": texty, "stderrTail": texty, "result": results, "error": texty,
                  "toolCallIds": st.lists(st.one_of(ids, st.integers()), max_size=3),
                  "errorCount": st.one_of(st.integers(0, 2), st.none())}),
})
stream_events = st.fixed_dictionaries({
    "type": st.just("model.streaming"),
    "payload": st.fixed_dictionaries({"kind": st.sampled_from(["text_delta", "reasoning_delta", "tool_call", "x"])},
                                     optional={"delta": texty, "toolCallId": st.one_of(ids, st.none()),
                                               "toolName": names, "input": inputs}),
})
other_events = st.fixed_dictionaries({
    "type": st.sampled_from(["session.updated", "turn.steerQueued", "unknown"]),
    "payload": st.one_of(st.none(), st.dictionaries(st.sampled_from(["usage", "contextWindow", "taskId"]),
                                                    st.one_of(st.integers(0, 10**6), st.dictionaries(
                                                        st.just("inputTokens"), st.integers(0, 10**6))))),
})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(tool_events, tool_events, stream_events, other_events), max_size=25), st.booleans())
def test_random_event_streams(events, terminal):
    translator = TurnTranslator(message_id="m", terminal_output=terminal)
    closed = set()
    for event in events:
        for update in translator.feed(event):
            assert_valid_update(update)
            if update.get("status") in ("completed", "failed"):
                assert update["toolCallId"] not in closed, "a card was closed twice"
                closed.add(update["toolCallId"])

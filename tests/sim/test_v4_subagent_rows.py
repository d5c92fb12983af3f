"""sim/v4, per rows.ts: a sub-agent's own calls stay out of its parent's rows; markers name their command.

The engine's ``rows.ts`` says of the ``subagent`` row: a client drills down by subscribing to
``conversation/<childSessionId>``; the child's rows are not embedded in the parent's.
"""

from tests.sim.test_v4_projection import Played


def test_a_sub_agents_own_calls_make_no_rows_in_the_parent() -> None:
    played = Played()
    played.start()
    played.event("tool.updated", {"kind": "scheduled", "toolCallId": "a1", "toolName": "Agent",
                                  "input": {"description": "look around"}})
    for kind in ("scheduled", "result"):
        played.event("tool.updated", {"kind": kind, "toolCallId": "a1_c0", "parentToolCallId": "a1",
                                      "source": "subagent", "toolName": "Read", "input": {"file_path": "README.md"},
                                      "result": {"content": "contents"}})
    played.event("tool.updated", {"kind": "result", "toolCallId": "a1", "result": "done looking"})
    assert [r["toolCallId"] for r in played.rows("toolCall")] == ["a1"]
    [agent] = played.rows("subagent")
    assert agent["parentToolCallId"] == "a1" and agent["status"] == "success"


def test_a_markers_command_is_named_on_it_and_a_compactions_summary_is_no_reply_row() -> None:
    from tests.sim.test_v4_commands import Bridge, bridge

    side = Bridge()
    ack = side.send(bridge.switch_model_config(side.session_id, "zhipu", "glm-5-air", "low"), base=side.base(),
                    command_id="cmd-model")
    assert ack["status"] == "accepted"
    rows = side.projection.rows.rows
    [marker] = [r for r in rows if r["kind"] == "timelineMarker" and r["marker"]["type"] == "modelChange"]
    assert marker["sourceCommandId"] == "cmd-model"
    side.send(bridge.send_text(side.session_id, "go"))
    side.engine.start("go")
    side.engine.complete()
    assert side.send(bridge.compact(side.session_id), command_id="cmd-compact")["status"] == "accepted"
    replies = len([r for r in side.projection.rows.rows if r["kind"] == "assistantText"])
    side.plane.feed(side.session_id, {"type": "turn.started", "payload": {"inputSource": "compaction", "input": "/compact"},
                                      "turnId": "turn-c"})
    side.plane.feed(side.session_id, {"type": "model.streaming", "payload": {"kind": "text_delta", "delta": "Compacted"},
                                      "turnId": "turn-c"})
    rows = side.projection.rows.rows
    [compact] = [r for r in rows if r["kind"] == "timelineMarker" and r["marker"]["type"] == "compact"]
    assert compact["sourceCommandId"] == "cmd-compact"
    assert len([r for r in rows if r["kind"] == "assistantText"]) == replies

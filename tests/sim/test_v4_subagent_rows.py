"""sim/v4: a sub-agent's own tool calls stay out of its parent's conversation.

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

"""sim/v4/rebuild.py: a resumed session's rows rebuilt from the stored history.

The rows must be the ones a live turn leaves (checked against the engine's row shapes,
tests/sim/v4_shapes.py), settled, in the history's order, with the tool calls' own ids.
"""

from __future__ import annotations

from tests.sim.v4_shapes import check_snapshot
from zcode_acp.sim.v4.projection import ConversationProjection
from zcode_acp.sim.v4.rebuild import rebuild, turns
from zcode_acp.sim.v4.snapshot import session_config

HISTORY = [
    {"info": {"id": "msg_u1", "role": "user"}, "parts": [{"type": "text", "text": "Show me around"}]},
    {"info": {"id": "msg_a1", "role": "assistant"}, "parts": [
        {"type": "reasoning", "text": "Look first."},
        {"type": "text", "text": "Let me look."},
        {"type": "tool", "id": "call_read", "tool": "Read",
         "state": {"status": "completed", "input": {"file_path": "README.md"}, "output": "# readme"}},
        {"type": "tool", "id": "call_bad", "tool": "Bash",
         "state": {"status": "error", "input": {"command": "false"}, "output": "exit 1"}},
        {"type": "text", "text": "Done."}]},
    {"info": {"id": "msg_u2", "role": "user"}, "parts": [{"type": "text", "text": "Again"}]},
    {"info": {"id": "msg_a2", "role": "assistant"}, "parts": [{"type": "text", "text": "Sure."}]},
]


def projection() -> ConversationProjection:
    ticks = iter(range(1_000_000, 2_000_000, 10))
    return ConversationProjection("sess_1", session_config("zhipu", "glm-5", "high", ["low", "high"]),
                                  clock=lambda: float(next(ticks)), context_window=200_000)


def test_the_history_is_cut_at_each_user_message():
    assert [(user and user["info"]["id"], [a["info"]["id"] for a in answers]) for user, answers in turns(HISTORY)] == [
        ("msg_u1", ["msg_a1"]), ("msg_u2", ["msg_a2"])]
    orphan = turns(HISTORY[1:2])  # a history that starts with an answer keeps it
    assert orphan[0][0] is None and len(orphan[0][1]) == 1


def test_the_rows_are_the_settled_rows_of_the_stored_turns():
    played = projection()
    rebuild(played, HISTORY, todos=[{"content": "Read it", "status": "completed"}], used_tokens=4200)
    snapshot = played.snapshot()
    check_snapshot(snapshot)
    rows = snapshot["rows"]["window"]
    assert [r["kind"] for r in rows] == ["turnHeader", "userInput", "reasoning", "assistantText", "toolCall",
                                         "toolCall", "assistantText", "turnHeader", "userInput", "assistantText"]
    assert rows[1]["text"] == "Show me around" and rows[8]["text"] == "Again"
    tools = [r for r in rows if r["kind"] == "toolCall"]
    assert [(t["toolCallId"], t["status"], t["output"]["text"]) for t in tools] == [
        ("call_read", "success", "# readme"), ("call_bad", "error", "exit 1")]
    assert tools[0]["input"] == {"file_path": "README.md"}
    assert all(r["state"] == "completedSuccess" for r in rows if r["kind"] == "turnHeader")
    assert all(r["state"] == "complete" for r in rows if r["kind"] in ("assistantText", "reasoning"))
    assert snapshot["control"]["phase"] == "completedSuccess"  # as a live turn that ended leaves it
    assert snapshot["plan"]["items"][0]["content"] == "Read it"
    assert snapshot["usage"]["contextWindow"]["usedTokens"] == 4200

"""History read with every field spelling (engine-today row 8)."""

from zcode_acp.protocol.history import replay_updates

SEED = [
    {"info": {"id": "m1", "role": "user"}, "parts": [{"id": "p1", "type": "text", "text": "hi"}]},
    {"info": {"id": "m2", "role": "assistant"}, "parts": [
        {"type": "reasoning", "text": "think"},
        {"type": "tool", "id": "call_1", "tool": "Read", "state": {"status": "completed", "input": {"file_path": "a.py"},
                                                                    "output": "x = 1"}},
        {"type": "text", "text": "done"}]},
]
TODAY = [
    {"info": {"messageId": "m1", "semantics": {"kind": "user_input"}},
     "parts": [{"partId": "m1_p0", "type": "text", "text": "hi"}]},
    {"info": {"messageId": "m2", "role": "assistant", "semantics": {"kind": "assistant_response"}}, "parts": [
        {"partId": "m2_p0", "type": "reasoning", "text": "think"},
        {"partId": "m2_p1", "type": "tool", "callId": "call_1", "tool": "Read",
         "state": {"status": "completed", "input": {"file_path": "a.py"}, "output": "x = 1"}},
        {"partId": "m2_p2", "type": "text", "text": "done"}]},
]


def test_both_spellings_replay_the_same_updates():
    seed, today = replay_updates(SEED), replay_updates(TODAY)
    assert seed == today
    assert [u["sessionUpdate"] for u in today] == ["user_message_chunk", "agent_thought_chunk", "tool_call",
                                                   "agent_message_chunk"]
    assert today[0]["messageId"] == "m1" and today[2]["toolCallId"] == "call_1"


def test_the_part_id_names_a_tool_card_only_when_nothing_else_does():
    part = {"partId": "m9_p0", "type": "tool", "tool": "Bash", "state": {"status": "error", "input": {"command": "x"}}}
    [card] = replay_updates([{"info": {"messageId": "m9", "role": "assistant"}, "parts": [part]}])
    assert card["toolCallId"] == "m9_p0" and card["status"] == "failed"

"""The webhook's turn notice on the v4 path: outcome, final answer and title from the feed's output."""

from zcode_acp.actors.session.v4.notices import final_answer, outcome_of, titles, turn_notice
from zcode_acp.protocol.v4.conversation import TurnEnded


def row(row_id, kind, turn, **fields):
    return {"rowId": row_id, "kind": kind, "turnId": turn, **fields}


def test_the_answer_is_the_last_assistant_text_of_the_newest_turn():
    rows = [row(1, "userInput", "t1", inputText="hi"), row(2, "assistantText", "t1", text="old answer"),
            row(3, "userInput", "t2", inputText="again"), row(4, "assistantText", "t2", text="first part"),
            row(5, "toolCall", "t2", toolCallId="c1"), row(6, "assistantText", "t2", text="final words")]
    assert final_answer(rows) == "final words"


def test_a_turn_without_text_has_no_answer_and_never_borrows_the_previous_turns():
    rows = [row(1, "assistantText", "t1", text="old answer"), row(2, "userInput", "t2", inputText="x"),
            row(3, "toolCall", "t2", toolCallId="c1")]
    assert final_answer(rows) == ""
    assert final_answer([]) == ""


def test_the_outcome_is_the_stop_reason_or_the_engines_words():
    assert outcome_of(TurnEnded("end_turn", None)) == "end_turn"
    assert outcome_of(TurnEnded(None, {"code": "model.failed", "message": "The model refused."})) == "The model refused."
    assert outcome_of(TurnEnded(None, {"code": "model.failed"})) == "model.failed"
    notice = turn_notice(TurnEnded("cancelled", None), [row(1, "assistantText", "t1", text="partial")])
    assert (notice.outcome, notice.answer) == ("cancelled", "partial")


def test_titles_are_read_from_session_info_updates_only():
    updates = [{"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}},
               {"sessionUpdate": "session_info_update", "title": "Say hello"},
               {"sessionUpdate": "session_info_update", "updatedAt": "2026-12-01T00:00:00Z"}]
    assert titles(updates) == ["Say hello"]

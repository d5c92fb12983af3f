"""protocol/v4/conversation.py on a turn's way: a tool's output while it streams, the engine's
own retries (``control.apiRetry``), and a turn that fails without a ``lastError``.

Frames go the whole way (wire → topic → state → translator, tests/protocol/test_v4_conversation.py's
``Session``), every update checked against the official ACP schema.
"""

from tests.protocol.test_v4_conversation import Session, control, row, text, tool
from zcode_acp.protocol.v4 import conversation as cv


def session(terminal: bool = False) -> Session:
    s = Session()
    s.translator = cv.ConversationTranslator(terminal_output=terminal, retry_prefix="t")
    s.snapshot([], delivery="recovery")  # the new translator attaches to the same state
    s.patch(control=control("running", canStop=True, stopState="stoppable"))
    return s


def streamed_output(s: Session) -> None:
    s.deltas({"op": "row.appended", "row": tool(3, "running", input={"command": "ls"}, output={"text": ""})},
             {"op": "row.delta", "rowId": 3, "path": "output.text", "append": "a\n"})
    s.deltas({"op": "row.delta", "rowId": 3, "path": "output.text", "append": "b\n"})
    s.deltas({"op": "row.upserted", "row": tool(3, "success", input={"command": "ls"}, output={"text": "a\nb\nc\n"})})


def test_a_terminal_card_gets_each_new_byte_of_the_output_once_then_its_exit():
    s = session(terminal=True)
    streamed_output(s)
    card = [u for u in s.updates if u.get("toolCallId") == "call-3"]
    assert card[0]["sessionUpdate"] == "tool_call"
    assert card[0]["content"] == [{"type": "terminal", "terminalId": "call-3"}]
    assert card[0]["_meta"]["terminal_info"] == {"terminal_id": "call-3"}
    data = [u["_meta"]["terminal_output"]["data"] for u in card if "terminal_output" in (u.get("_meta") or {})]
    assert data == ["a\n", "b\n", "c\n"]  # what streamed, then only what the settled row adds
    exits = [u for u in card if "terminal_exit" in (u.get("_meta") or {})]
    assert len(exits) == 1 and exits[0]["status"] == "completed" and exits[0]["_meta"]["terminal_exit"]["exit_code"] == 0
    assert card[-1] is exits[0]


def test_a_card_without_a_terminal_shows_the_output_so_far_while_it_runs():
    s = session(terminal=False)
    streamed_output(s)
    contents = [u["content"][0]["content"]["text"] for u in s.updates
                if u.get("toolCallId") == "call-3" and u["sessionUpdate"] == "tool_call_update" and "content" in u]
    assert contents == ["a\n", "a\nb\n", "a\nb\nc\n"]  # content replaces: each one carries all so far
    assert [u.get("status") for u in s.updates if u.get("toolCallId") == "call-3" and "status" in u] == [
        "in_progress", "completed"]


def retry(attempt: int, total: int, code: str) -> dict:
    return {"attempt": attempt, "maxAttempts": total, "nextRetryAt": 0, "reasonCode": code}


def test_the_engines_retries_are_one_card_per_episode_closed_when_it_gets_through():
    s = session()
    running = control("running", canStop=True, stopState="stoppable")
    s.patch(control={**running, "apiRetry": retry(1, 10, "fault.provider.rateLimited")})
    s.patch(control={**running, "apiRetry": retry(2, 10, "fault.provider.rateLimited")})
    s.patch(control={**running, "apiRetry": None})
    s.patch(control={**running, "apiRetry": retry(1, 4, "fault.network.sseDisconnected")})
    ended = s.patch(control=control("error", lastError=None))
    cards = [u for u in s.updates if u["toolCallId"].startswith("zcode-retry-")]
    assert [(u["sessionUpdate"], u["toolCallId"], u.get("title"), u.get("status")) for u in cards] == [
        ("tool_call", "zcode-retry-t-1", "Retrying the model request (1/10): fault.provider.rateLimited", "in_progress"),
        ("tool_call_update", "zcode-retry-t-1", "Retrying the model request (2/10): fault.provider.rateLimited", None),
        ("tool_call_update", "zcode-retry-t-1", "The model request went through after retrying", "completed"),
        ("tool_call", "zcode-retry-t-2", "Recovering the interrupted model stream (1/4)", "in_progress"),
        ("tool_call_update", "zcode-retry-t-2", None, "failed"),  # the turn failed with it open
    ]
    assert ended.signals == [cv.TurnEnded(None, None, "")]


def test_a_failed_turn_without_a_last_error_ends_with_its_last_words():
    s = session()
    s.deltas({"op": "row.appended", "row": row(1, "turnHeader", origin="userInput", state="running", startedAt=1)},
             {"op": "row.appended", "row": text(2, "Working on it")},
             {"op": "row.delta", "rowId": 2, "path": "text", "append": " — the disk is full "})
    ended = s.patch(control=control("error", lastError=None))
    assert ended.signals == [cv.TurnEnded(None, None, "Working on it — the disk is full")]


def test_a_new_turn_does_not_inherit_the_last_words_of_the_one_before():
    s = session()
    s.deltas({"op": "row.appended", "row": text(1, "Old words", state="complete")})
    s.patch(control=control("completedSuccess", sessionEnded=True))
    s.patch(control=control("running", canStop=True, stopState="stoppable"))
    s.deltas({"op": "row.appended", "row": row(2, "turnHeader", origin="userInput", state="running", startedAt=2)})
    ended = s.patch(control=control("error", lastError=None))
    assert ended.signals == [cv.TurnEnded(None, None, "")]

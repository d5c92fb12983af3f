"""Background task cards: launch-card reuse, bg_* fallback, closed exactly once."""

from zcode_acp.protocol.background import TaskCards
from tests.schema import assert_valid_update


def running(task="exec_1", call="call_1", **extra):
    return {"taskId": task, "toolCallId": call, "toolName": "Bash", "status": "running", **extra}


def test_a_tracked_launch_card_is_reused_output_once_then_exit():
    cards = TaskCards(terminal_output=True)
    updates = cards.update(running(outputTail="a\n"), launch_terminal=True)
    updates += cards.update(running(outputTail="a\n"), launch_terminal=True)  # same snapshot again
    updates += cards.update(running(outputTail="a\nb\n"), launch_terminal=True)
    updates += cards.update(running(status="completed", outputTail="a\nb\nc\n"), launch_terminal=True)
    updates += cards.update(running(status="completed"), launch_terminal=True)  # after close: nothing
    assert [u.get("toolCallId") for u in updates] == ["call_1"] * 5
    assert updates[0] == {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": "in_progress",
                          "_meta": {"backgroundTask": {"taskId": "exec_1"}}}
    data = [u["_meta"]["terminal_output"]["data"] for u in updates if "terminal_output" in u.get("_meta", {})]
    assert data == ["a\n", "b\n", "c\n"]
    assert updates[-1]["status"] == "completed" and updates[-1]["_meta"]["terminal_exit"]["exit_code"] == 0
    for update in updates:
        assert_valid_update(update)


def test_an_unknown_launch_card_falls_back_to_a_bg_card():
    cards = TaskCards()
    [card] = cards.update({"taskId": "agent_9", "toolCallId": "not-tracked", "status": "running",
                           "description": "Survey", "outputPath": "/tmp/o.txt"}, launch_terminal=None)
    assert card["sessionUpdate"] == "tool_call" and card["toolCallId"] == "bg_agent_9"
    assert card["title"] == "[background] Survey" and card["kind"] == "other" and card["status"] == "in_progress"
    assert card["_meta"]["backgroundTask"] == {"taskId": "agent_9", "outputPath": "/tmp/o.txt"}
    [done] = cards.update({"taskId": "agent_9", "status": "failed"}, launch_terminal=None)
    assert done["status"] == "failed" and "terminal_exit" not in done["_meta"]
    assert_valid_update(card)
    assert_valid_update(done)


def test_cancel_marks_the_card_cancelled_and_a_later_status_changes_nothing():
    cards = TaskCards(terminal_output=True)
    cards.update(running(), launch_terminal=True)
    [cancelled] = cards.cancel("exec_1")
    assert cancelled["status"] == "failed"
    assert cancelled["_meta"]["backgroundTask"]["cancelled"] is True
    assert cancelled["_meta"]["terminal_exit"]["exit_code"] == 1
    assert cards.update(running(status="cancelled"), launch_terminal=True) == []
    assert cards.cancel("exec_1") == []


def test_close_all_fails_what_is_still_running():
    cards = TaskCards()
    cards.update(running(task="a", call="x"), launch_terminal=False)
    cards.update(running(task="b", call="y", status="completed"), launch_terminal=False)
    assert [u["toolCallId"] for u in cards.close_all()] == ["x"]

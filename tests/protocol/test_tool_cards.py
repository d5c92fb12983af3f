"""protocol/tool_cards.py: the card state machine both engine paths feed."""

from tests.schema import assert_valid_update
from zcode_acp.protocol.tool_cards import Card


def test_a_card_has_exactly_one_terminal_status_then_is_silent():
    card = Card("c1", "Read", {"file_path": "/w/a"})
    frames = [card.opened(), *card.advance("in_progress"), *card.settle(False, "text")]
    assert [f.get("status") for f in frames] == ["pending", "in_progress", "completed"]
    assert card.settle(True, "again") == [] and card.close() == [] and card.advance("in_progress") == []
    assert card.show("more") == [] and card.stream_terminal("more") == []
    for frame in frames:
        assert_valid_update(frame)


def test_a_terminal_card_streams_each_byte_once_and_ends_with_its_exit():
    card = Card("b1", "Bash", {"command": "ls"}, terminal=True)
    card.opened()
    data = card.show("a\n") + card.show("a\n") + card.show("a\nb\n")
    end = card.settle(False, "a\nb\nc\n", exit_code=0)
    shown = [f["_meta"]["terminal_output"]["data"] for f in data + end if "terminal_output" in f["_meta"]]
    assert shown == ["a\n", "b\n", "c\n"]
    assert end[-1]["_meta"]["terminal_exit"]["exit_code"] == 0 and end[-1]["status"] == "completed"


def test_closing_fails_an_open_card_once_and_leaves_a_handed_over_one():
    open_card, launched = Card("c1", "Bash", {}), Card("c2", "Bash", {"run_in_background": True}, background=True)
    launched.hand_over("started\n", None)
    assert open_card.close() == [{"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "failed"}]
    assert open_card.close() == [] and launched.close() == [] and launched.status == "in_progress"

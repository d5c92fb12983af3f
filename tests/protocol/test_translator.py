"""The event → update table, as golden JSON (tests/protocol/golden/*.json).

Each file holds the events of one turn and the exact updates they must
produce; every produced update is also validated against the ACP schema.
"""

import json
from pathlib import Path

import pytest

from zcode_acp.protocol.translator import TurnTranslator
from tests.schema import assert_valid_update

GOLDEN = sorted((Path(__file__).parent / "golden").glob("*.json"))


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden(path):
    case = json.loads(path.read_text())
    translator = TurnTranslator(message_id="m", terminal_output=case["terminalOutput"])
    updates = [update for event in case["events"] for update in translator.feed(event)]
    assert updates == case["updates"]
    for update in updates:
        assert_valid_update(update)


def test_golden_files_exist():
    assert len(GOLDEN) >= 10


def test_a_background_launch_card_stays_open():
    translator = TurnTranslator(message_id="m", terminal_output=True)
    translator.feed({"type": "tool.updated", "payload": {
        "kind": "scheduled", "toolCallId": "bg", "toolName": "Bash",
        "input": {"command": "sleep 100", "run_in_background": True}}})
    assert not translator.open_cards()[0].launched
    translator.feed({"type": "tool.updated", "payload": {"kind": "result", "toolCallId": "bg", "result": "started\n"}})
    [card] = translator.open_cards()  # left open: its background task closes it
    assert card.tool_call_id == "bg" and card.terminal and card.shown == "started\n"
    assert card.launched


def test_notice_uses_its_own_message_id():
    translator = TurnTranslator(message_id="m")
    [text] = translator.feed({"type": "model.streaming", "payload": {"kind": "text_delta", "delta": "a"}})
    notice = translator.notice("merged")
    [after] = translator.feed({"type": "model.streaming", "payload": {"kind": "text_delta", "delta": "b"}})
    assert len({text["messageId"], notice["messageId"], after["messageId"]}) == 3


def test_a_tool_failure_the_engine_gave_no_words_for_is_said_in_the_users_language():
    translator = TurnTranslator(message_id="m", lang="zh-CN")
    translator.feed({"type": "tool.updated", "payload": {"kind": "scheduled", "toolCallId": "t1", "toolName": "Read",
                                                         "input": {"file_path": "a.txt"}}})
    [update] = translator.feed({"type": "tool.updated", "payload": {"kind": "error", "toolCallId": "t1"}})
    assert update["status"] == "failed" and update["rawOutput"] == {"error": "工具执行失败"}

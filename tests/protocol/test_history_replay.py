"""The replay of a history whose messages hold dialog tools (a permission's, a question's, a plan's)
between their texts, against golden JSON (issue 29: after a reload the page lost those cards and
the text around them ran together)."""

from __future__ import annotations

import json
from pathlib import Path

from zcode_acp.protocol.history import replay_updates

GOLDEN = Path(__file__).parent / "golden-replay"  # (golden/ holds the translator's event tables)


def test_every_card_is_replayed_and_the_text_after_a_card_is_a_message_of_its_own() -> None:
    history = json.loads((GOLDEN / "replay-dialog-tools.history.json").read_text())
    expected = json.loads((GOLDEN / "replay-dialog-tools.updates.json").read_text())
    updates = replay_updates(history)
    assert updates == expected
    # What the golden file holds, said plainly: the cards in order, and no text id on both sides of a card.
    assert [u["toolCallId"] for u in updates if u["sessionUpdate"] == "tool_call"] == \
        ["call_1", "call_2", "call_3", "call_4"]
    for index, update in enumerate(updates):
        if update["sessionUpdate"] == "tool_call":
            before = {u["messageId"] for u in updates[:index] if "messageId" in u}
            after = {u["messageId"] for u in updates[index:] if "messageId" in u}
            assert not before & after, update["toolCallId"]

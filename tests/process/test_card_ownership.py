"""One owner per card: whatever ends a dialog, its card is closed exactly once."""

import asyncio
from collections import Counter

import pytest

from tests.process.harness import RecordingClient, bridge, run

FORMS = {"elicitation": {"form": {}}, "_meta": {"terminal_output": True}}
NO_FORMS = {"_meta": {"terminal_output": True}}
TERMINAL = {"completed", "failed"}


def terminal_statuses(client, sid):
    """toolCallId → how many updates put the card in a final state."""
    counts = Counter()
    for update in client.updates.get(sid, []):
        if update["sessionUpdate"] in ("tool_call", "tool_call_update") and update.get("status") in TERMINAL:
            counts[update["toolCallId"]] += 1
    return counts


@pytest.mark.parametrize("scenario", ["permission", "plan", "questions"])
@pytest.mark.parametrize("capabilities", [NO_FORMS, FORMS], ids=["no-forms", "forms"])
@run
async def test_cancel_during_a_dialog_closes_its_card_once(tmp_path, scenario, capabilities):
    client = RecordingClient()
    never = asyncio.get_running_loop().create_future()
    client.on_permission = lambda sid, params: never
    client.on_form = lambda sid, params: never
    async with bridge(tmp_path, capabilities, client=client) as b:
        sid = await b.new_session()
        prompt = asyncio.ensure_future(b.prompt(sid, f"#sim {scenario}"))
        await client.wait_for(lambda: client.dialogs)
        await b.conn.cancel(session_id=sid)
        assert (await prompt).stop_reason == "cancelled"
        # A barrier: the next turn runs to its end, so anything late has arrived.
        assert (await b.prompt(sid, "#sim stream count=2")).stop_reason == "end_turn"
        counts = terminal_statuses(client, sid)
        cards = {u["toolCallId"] for u in client.of_kind(sid, "tool_call")}
        assert cards and all(counts[card] == 1 for card in cards), counts

"""One tool story, two engine paths, the same ACP frames (tests/protocol/golden/tool_cards/*.json).

Each case tells one tool call twice: as the legacy engine's ``tool.updated`` events (the shapes
sim/cli016_events.py sends) fed to ``TurnTranslator``, and as the v4 ``toolCall`` rows the
simulator projects from those events (sim/v4/turn_parts.py) fed the whole way through
wire → topic → state → ``ConversationTranslator``. Both must give the case's frames, each checked
against the ACP schema. ``rawOutput`` is left out of the comparison: it is the engine's own
result, whose shape differs by engine (docs/decisions.md, "One tool-card state machine").
"""

import copy
import json
from pathlib import Path

import pytest

from tests.protocol.test_v4_conversation import Session, control
from tests.schema import assert_valid_update
from zcode_acp.protocol.translator import TurnTranslator

CASES = sorted((Path(__file__).parent / "golden" / "tool_cards").glob("*.json"))


def card_frames(updates: list[dict]) -> list[dict]:
    """The cards' frames, without the engine-shaped ``rawOutput``."""
    return [{k: v for k, v in update.items() if k != "rawOutput"} for update in updates
            if update.get("sessionUpdate") in ("tool_call", "tool_call_update")]


def legacy_frames(case: dict) -> list[dict]:
    translator = TurnTranslator(message_id="m", terminal_output=case["terminalOutput"])
    updates = [update for event in copy.deepcopy(case["events"]) for update in translator.feed(event)]
    if case.get("turnEnds"):
        updates += translator.close_open_cards()  # what the Turn does when it ends with cards open
    for update in updates:
        assert_valid_update(update)
    return card_frames(updates)


def v4_frames(case: dict) -> list[dict]:
    s = Session(terminal=case["terminalOutput"])  # Session checks each update against the schema
    s.patch(control=control("running", canStop=True, stopState="stoppable"))
    for deltas in copy.deepcopy(case["rows"]):
        s.deltas(*deltas)
    if case.get("turnEnds"):
        s.patch(control=control("completedSuccess", sessionEnded=True))
    return card_frames(s.updates)


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_the_legacy_events_give_the_cases_frames(path):
    case = json.loads(path.read_text())
    assert legacy_frames(case) == case["updates"]


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_the_v4_rows_give_the_same_frames(path):
    case = json.loads(path.read_text())
    assert v4_frames(case) == case["updates"]


def test_every_story_of_the_brief_has_a_case():
    assert {p.stem for p in CASES} >= {"read_succeeds", "bash_streams_then_exits_0_on_a_terminal", "edit_fails",
                                       "still_running_when_the_turn_ends", "permission_denied"}


def test_each_case_ends_each_card_with_exactly_one_terminal_status():
    for path in CASES:
        case = json.loads(path.read_text())
        ends = [u for u in case["updates"] if u.get("status") in ("completed", "failed")]
        assert len(ends) == 1 and ends[0] is case["updates"][-1], path.stem

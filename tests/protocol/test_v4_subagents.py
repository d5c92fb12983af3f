"""The v4 conversation's ``subagent`` rows as child sessions (protocol/v4/conversation_children.py),
for a client that declares ``subagents``: the legacy path's builders and ids (protocol/subagents.py).
Every update is schema-checked as the engine's frames are fed (test_v4_conversation.Session)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tests.protocol.test_v4_conversation as conversation_tests
from tests.acp_schema import assert_valid_acp_frame
from tests.protocol.test_v4_conversation import Session, row
from zcode_acp.protocol.subagents import CHILD, child_session_id
from zcode_acp.protocol.updates import encode

PARENT = "sess-parent"
CHILD_ID = child_session_id(PARENT, "call-4")
AGENT_INPUT = {"description": "look around", "prompt": "Read the files.", "subagent_type": "explore"}


@pytest.fixture(autouse=True)
def child_updates_checked_as_frames(monkeypatch):
    """The RFD's updates are newer than the Python SDK's models: each is checked as the frame it goes
    out as (in its own session's envelope) against the TypeScript SDK 2.4.0's unstable schema."""
    checked = conversation_tests.assert_valid_update

    def check(update):
        if update["sessionUpdate"] not in ("subagent_update", "session_message"):
            checked(update)
            return
        [line] = encode(PARENT, [update]).splitlines()
        assert_valid_acp_frame(json.loads(line))

    monkeypatch.setattr(conversation_tests, "assert_valid_update", check)


def agent_call(status, **fields):
    return row(4, "toolCall", toolCallId="call-4", toolName="Agent", status=status, inputText="", input=AGENT_INPUT,
               **fields)


def sub_row(status, **fields):
    return row(5, "subagent", **{"parentToolCallId": "call-4", "subagentType": "explore", "status": status,
                                 "summaryText": "", **fields})


def declaring(rows=(), **kwargs):
    s = Session(**kwargs) if not rows else Session(list(rows), **kwargs)
    s.translator.children.parent = PARENT
    return s


def links(updates):
    return [(u.get(CHILD, "parent"), u["sessionUpdate"], u.get("state")) for u in updates
            if u["sessionUpdate"] in ("subagent_update", "session_message")]


def test_a_sub_agent_row_announces_its_child_with_the_calls_prompt_and_ends_it_once():
    s = declaring()
    s.deltas({"op": "row.appended", "row": agent_call("running")}, {"op": "row.appended", "row": sub_row("running")})
    announce = next(u for u in s.updates if u["sessionUpdate"] == "subagent_update")
    assert announce == {"sessionUpdate": "subagent_update", "sessionId": CHILD_ID, "title": "look around",
                        "description": "explore", "state": {"state": "running"}}
    s.deltas({"op": "row.upserted", "row": agent_call("success", output={"text": "done"})},
             {"op": "row.upserted", "row": sub_row("success", summaryText="done")})
    assert links(s.updates) == [("parent", "subagent_update", {"state": "running"}),
                                ("parent", "session_message", None), (CHILD_ID, "session_message", None),
                                ("parent", "subagent_update", {"state": "idle", "stopReason": "end_turn"})]
    lines = encode(PARENT, s.updates)
    assert CHILD.encode() not in lines  # the routing mark never reaches the wire
    assert f'"sessionId":"{CHILD_ID}","update":{{"sessionUpdate":"session_message"'.encode() in lines


def test_a_cancelled_or_failed_sub_agent_ends_its_child_failed():
    for status in ("cancelled", "failed"):
        s = declaring()
        s.deltas({"op": "row.appended", "row": agent_call("running")}, {"op": "row.appended", "row": sub_row("running")})
        s.deltas({"op": "row.upserted", "row": sub_row(status)})
        assert links(s.updates)[-1] == ("parent", "subagent_update",
                                        {"state": "idle", "_meta": {"zcode": {"outcome": "failed"}}})


def test_the_engine_going_away_ends_a_running_child_failed():
    s = declaring()
    s.deltas({"op": "row.appended", "row": agent_call("running")}, {"op": "row.appended", "row": sub_row("running")})
    closed = s.translator.close_open_cards()
    assert closed[-1] == {"sessionUpdate": "subagent_update", "sessionId": CHILD_ID,
                          "state": {"state": "idle", "_meta": {"zcode": {"outcome": "failed"}}}}
    assert s.translator.close_open_cards() == []


def test_a_background_sub_agent_stays_a_background_card():
    s = declaring()
    background = {**AGENT_INPUT, "run_in_background": True}
    s.deltas({"op": "row.appended", "row": {**agent_call("running"), "input": background}},
             {"op": "row.appended", "row": sub_row("running")},
             {"op": "row.appended", "row": row(6, "subagent", subagentType="x", status="running", summaryText="",
                                               backgrounded=True)})
    assert links(s.updates) == []


def test_a_replayed_history_announces_and_ends_each_child_after_its_card():
    s = declaring(replay=True)
    s.snapshot([agent_call("success", output={"text": "done"}), sub_row("success")])
    kinds = [u["sessionUpdate"] for u in s.updates if u["sessionUpdate"] != "current_mode_update"]
    assert kinds == ["tool_call", "subagent_update", "session_message", "session_message", "subagent_update"]


def test_a_child_known_from_a_resumed_snapshot_is_not_announced_again_but_still_ends():
    s = declaring()
    s.deltas({"op": "row.appended", "row": agent_call("running")}, {"op": "row.appended", "row": sub_row("running")})
    before = len(links(s.updates))
    s.translator.rebaseline()
    s.snapshot([agent_call("running"), sub_row("running")])
    assert len(links(s.updates)) == before
    s.deltas({"op": "row.upserted", "row": sub_row("success")})
    assert links(s.updates)[-1] == ("parent", "subagent_update", {"state": "idle", "stopReason": "end_turn"})


def test_without_the_capability_nothing_but_the_cards():
    s = Session()
    s.deltas({"op": "row.appended", "row": agent_call("running")}, {"op": "row.appended", "row": sub_row("running")},
             {"op": "row.upserted", "row": sub_row("success")})
    assert links(s.updates) == []


# -- a fuzz: any order of the calls' and the rows' statuses announces each child once, before anything
# of it, and ends it at most once, after its announcement ------------------------------------------

_call_status = st.sampled_from(["inputStreaming", "running", "success", "error", "cancelled"])
_row_status = st.sampled_from(["running", "success", "failed", "cancelled"])


@st.composite
def _op(draw):
    k = draw(st.integers(1, 3))
    if draw(st.booleans()):
        call = row(k, "toolCall", toolCallId=f"call-{k}", toolName="Agent", status=draw(_call_status), inputText="",
                   input=AGENT_INPUT)
        return {"op": "row.upserted" if draw(st.booleans()) else "row.appended", "row": call}
    sub = row(10 + k, "subagent", parentToolCallId=f"call-{k}", subagentType="explore", status=draw(_row_status),
              summaryText="")
    return {"op": "row.upserted" if draw(st.booleans()) else "row.appended", "row": sub}


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=150)
@given(frames=st.lists(st.lists(_op(), min_size=1, max_size=3), max_size=8), lost=st.booleans())
def test_any_order_of_call_and_row_statuses_gives_each_child_one_announcement_and_at_most_one_end(frames, lost):
    s = declaring()
    for deltas in frames:
        s.deltas(*deltas)  # every update schema-checked
    updates = s.updates + (s.translator.close_open_cards() if lost else [])
    for k in (1, 2, 3):
        child = child_session_id(PARENT, f"call-{k}")
        mine = [u for u in updates if u.get("sessionId") == child or u.get(CHILD) == child]
        states = [u["state"]["state"] for u in mine if u["sessionUpdate"] == "subagent_update"]
        assert states in ([], ["running"], ["running", "idle"]), states
        if mine:
            assert mine[0]["sessionUpdate"] == "subagent_update"  # announced before any of its traffic
        if lost and states:
            assert states[-1] == "idle"  # the engine gone: nothing is left running

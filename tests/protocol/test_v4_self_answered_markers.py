"""A marker of an act the bridge answered in its own words gets no second line.

The engine names the command behind a user's marker (``sourceCommandId``, rows.ts). When that
command is this bridge's, the bridge already said "Model set to …" / "Conversation compacted."
(actors/session/controls.py); the same act by another client is still told.
"""

from tests.protocol.test_v4_conversation import Session, row
from zcode_acp.protocol.v4 import conversation as cv

OURS = "cmd-ours"
MODEL = {"type": "modelChange", "fromProvider": "zhipu", "fromModel": "glm-5", "toProvider": "zhipu",
         "toModel": "glm-5-air", "toThought": ""}


def session():
    s = Session()
    s.translator = cv.ConversationTranslator(own_command=lambda command_id: command_id == OURS)
    s.snapshot([])
    return s


def notices(s):
    return [u["content"]["text"] for u in s.updates if u.get("messageId", "").startswith("notice-")]


def test_a_model_switch_this_bridge_asked_for_is_not_told_twice():
    s = session()
    s.deltas({"op": "row.appended", "row": row(1, "timelineMarker", sourceCommandId=OURS, marker=MODEL)})
    assert notices(s) == []


def test_a_model_switch_by_another_client_is_told():
    s = session()
    s.deltas({"op": "row.appended", "row": row(1, "timelineMarker", sourceCommandId="cmd-desktop", marker=MODEL)})
    s.deltas({"op": "row.appended", "row": row(2, "timelineMarker", marker=MODEL)})
    assert notices(s) == ["Model: glm-5-air.", "Model: glm-5-air."]


def test_a_compaction_this_bridge_asked_for_shows_no_marker_lines():
    s = session()
    marker = {"type": "compact", "origin": "manual", "status": "running"}
    s.deltas({"op": "row.appended", "row": row(1, "timelineMarker", sourceCommandId=OURS, marker=marker)})
    s.deltas({"op": "row.upserted", "row": row(1, "timelineMarker", sourceCommandId=OURS,
                                                marker={**marker, "status": "success"})})
    assert notices(s) == []

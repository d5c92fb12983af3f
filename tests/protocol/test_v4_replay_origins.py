"""A replayed v4 history shows the user only what the user typed.

A background work's result reaches the model as a ``userInput`` row of its own turn
(``origin: backgroundResult``, with ``originMeta.backgroundSource``); the legacy path keeps that
notification model-only, so a ``session/load`` on v4 must not show it as a user message either.
"""

from tests.protocol.test_v4_conversation import Session, row, text


def users(s):
    return [u["content"]["text"] for u in s.updates if u["sessionUpdate"] == "user_message_chunk"]


def test_a_replayed_background_result_is_not_a_user_message():
    s = Session([row(1, "userInput", text="#sim bg_bash", origin="realUser"), text(2, "started", state="complete"),
                 row(3, "userInput", text="<task-notification>done</task-notification>", origin="backgroundResult",
                     originMeta={"backgroundSource": "bash"}),
                 text(4, "Background task completed.", state="complete"),
                 row(5, "userInput", text="next", origin="realUser")], replay=True)
    assert users(s) == ["#sim bg_bash", "next"]
    assert "Background task completed." in "".join(u["content"]["text"] for u in s.updates
                                                    if u["sessionUpdate"] == "agent_message_chunk")


def test_an_echoed_background_result_is_not_a_user_message_either():
    s = Session(echo=True)
    s.deltas({"op": "row.appended", "row": row(1, "userInput", text="<task-notification/>", origin="backgroundResult")})
    s.deltas({"op": "row.appended", "row": row(2, "userInput", text="typed", origin="realUser")})
    assert users(s) == ["typed"]

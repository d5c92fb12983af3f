"""backgroundWorks → background task cards on the v4 path, with the legacy path's state machine.

Frames are shaped as the engine's schemas say (``snapshot.ts`` backgroundWorks, ``rows.ts``
toolCall rows with ``backgrounded``/``workId``); every update is checked against ACP's schema.
"""

from tests.protocol.test_v4_conversation import Session, control, cv, tool


def work(status, kind="bash", work_id="w1", title="npm test", anchor=3):
    return {"workId": work_id, "kind": kind, "title": title, "status": status, "startedAt": 1, "anchorRowId": anchor}


def of(updates, card_id):
    return [u for u in updates if u.get("toolCallId") == card_id]


def launched(s, row_id=3, work_id="w1"):
    """A turn whose Bash call detaches to the background, then ends."""
    s.patch(control=control("running", canStop=True, stopState="stoppable"))
    s.deltas({"op": "row.appended", "row": tool(row_id, "running", input={"command": "npm test"})})
    s.deltas({"op": "row.upserted", "row": tool(row_id, "success", input={"command": "npm test"},
                                                 backgrounded=True, workId=work_id)},
             {"op": "state.updated", "patch": {"backgroundWorks": [work("running", work_id=work_id, anchor=row_id)]}})
    s.patch(control=control("idle"))


def test_a_background_bash_carries_on_in_its_launch_card_and_closes_it_once():
    s = Session()
    launched(s)
    card = "call-3"
    assert [u.get("status") for u in of(s.updates, card)] == ["in_progress", "in_progress"]  # the call, then its work
    assert of(s.updates, card)[-1]["_meta"] == {"backgroundTask": {"taskId": "w1"}}
    s.patch(backgroundWorks=[work("resultPending")])
    s.patch(backgroundWorks=[])
    closes = [u for u in of(s.updates, card) if u.get("status") in ("completed", "failed")]
    assert closes == [{"sessionUpdate": "tool_call_update", "toolCallId": card, "status": "completed",
                       "_meta": {"backgroundTask": {"taskId": "w1"}}}]
    assert [u["sessionUpdate"] for u in s.updates].count("tool_call") == 1  # no second card for the work


def test_the_turns_end_leaves_the_launch_card_open_for_its_work():
    s = Session()
    launched(s)
    assert not [u for u in of(s.updates, "call-3") if u.get("status") == "failed"]


def test_a_failed_or_cancelled_work_fails_its_card_once_cancelled_marked():
    s = Session()
    launched(s)
    s.patch(backgroundWorks=[work("cancelled")])
    s.patch(backgroundWorks=[])
    [close] = [u for u in of(s.updates, "call-3") if u.get("status") in ("completed", "failed")]
    assert close["status"] == "failed" and close["_meta"]["backgroundTask"]["cancelled"] is True


def test_a_sub_agent_work_gets_a_card_of_its_own():
    s = Session()
    s.patch(backgroundWorks=[work("running", kind="subagent", work_id="agent_1", title="Survey the repo", anchor=None)])
    s.patch(backgroundWorks=[work("failed", kind="subagent", work_id="agent_1", title="Survey the repo", anchor=None)])
    start, close = of(s.updates, "bg_agent_1")
    assert start["sessionUpdate"] == "tool_call" and start["title"] == "[background] Survey the repo"
    assert start["status"] == "in_progress" and start["_meta"]["backgroundTask"]["taskId"] == "agent_1"
    assert close["status"] == "failed"


def test_a_work_already_running_when_a_client_attaches_is_not_announced_but_still_closes():
    s = Session(backgroundWorks=[work("running", kind="subagent", work_id="agent_2", anchor=None)])
    assert s.updates == []
    s.patch(backgroundWorks=[work("resultPending", kind="subagent", work_id="agent_2", anchor=None)])
    assert [u.get("status") for u in of(s.updates, "bg_agent_2")] == ["completed"]


def test_teardown_fails_the_open_work_cards_once():
    s = Session()
    launched(s)
    closing = s.translator.close_open_cards()
    assert [(u["toolCallId"], u["status"]) for u in closing] == [("call-3", "failed")]
    assert s.translator.close_open_cards() == []


def agent_call(row_id, status, **fields):
    return {**tool(row_id, status, input={"description": "survey"}, **fields), "toolName": "Agent"}


def test_a_background_sub_agents_launch_call_completes_its_own_card():
    s = Session()
    s.deltas({"op": "row.appended", "row": agent_call(4, "running")})
    s.deltas({"op": "row.upserted", "row": agent_call(4, "success", backgrounded=True, workId="agent_1")},
             {"op": "state.updated", "patch": {"backgroundWorks": [
                 work("running", kind="subagent", work_id="agent_1", anchor=4)]}})
    assert [u.get("status") for u in of(s.updates, "call-4")] == ["in_progress", "completed"]  # the launch, done
    assert [u["sessionUpdate"] for u in of(s.updates, "bg_agent_1")] == ["tool_call"]  # the work, its own card


def test_a_synchronous_sub_agent_is_shown_by_its_agent_call_with_its_usage():
    s = Session()
    result = ("Found it.\nagentId: agent_73c7c63d\n"
              "<usage>subagent_tokens: 40904 tool_uses: 1 duration_ms: 10559</usage>")
    s.deltas({"op": "row.appended", "row": agent_call(4, "running")},
             {"op": "row.appended", "row": {"rowId": 5, "turnId": "turn-1", "createdAt": 1, "createdAtSeq": 5,
                                             "kind": "subagent", "parentToolCallId": "call-4", "status": "running",
                                             "subagentType": "general-purpose", "summaryText": ""}})
    s.deltas({"op": "row.upserted", "row": agent_call(4, "success", output={"text": result})})
    assert {u["toolCallId"] for u in s.updates} == {"call-4"}  # one card for the sub-agent: its call's
    [done] = [u for u in s.updates if u.get("status") == "completed"]
    assert done["_meta"]["subagent"] == {"agentId": "agent_73c7c63d", "tokens": 40904, "toolUses": 1,
                                         "durationMs": 10559}


def test_a_bash_work_running_when_a_client_attaches_closes_in_the_launch_card_it_knows():
    launch = tool(3, "success", input={"command": "npm test"}, backgrounded=True, workId="w1")
    s = Session([launch], backgroundWorks=[work("running")])
    assert s.updates == []
    s.patch(backgroundWorks=[work("failed")])
    assert [(u["toolCallId"], u["status"]) for u in s.updates] == [("call-3", "failed")]


def test_on_a_terminal_client_the_work_ends_its_launch_card_as_a_terminal_exit():
    s = Session()
    s.translator = cv.ConversationTranslator(terminal_output=True)  # a client that renders terminals
    launched(s)
    s.patch(backgroundWorks=[work("resultPending")])
    [close] = [u for u in of(s.updates, "call-3") if u.get("status") in ("completed", "failed")]
    assert close["status"] == "completed"
    assert close["_meta"]["terminal_exit"]["exit_code"] == 0
    assert close["_meta"]["backgroundTask"] == {"taskId": "w1"}


def test_on_a_terminal_client_a_cancelled_work_exits_its_launch_card_failed_and_marked():
    s = Session()
    s.translator = cv.ConversationTranslator(terminal_output=True)
    launched(s)
    s.patch(backgroundWorks=[work("cancelled")])
    [close] = [u for u in of(s.updates, "call-3") if u.get("status") in ("completed", "failed")]
    assert close["status"] == "failed" and close["_meta"]["backgroundTask"]["cancelled"] is True
    assert close["_meta"]["terminal_exit"]["exit_code"] == 1

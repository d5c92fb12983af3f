"""protocol/v4/conversation.py: conversation changes → ACP updates, each checked against the official ACP schema.

Frames go the whole way: wire notification → reassembly → topic → conversation state →
translator, starting from the captured snapshot of a real engine.
"""

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.protocol.v4_captures import captured_frames
from tests.schema import assert_valid_update
from zcode_acp.protocol.v4 import conversation as cv
from zcode_acp.protocol.v4.conversation_apply import ConversationState
from zcode_acp.protocol.v4.topic import Applied, TopicSubscription
from zcode_acp.protocol.v4.wire import parse_wire

CAPTURED = captured_frames("s03a-official")[0]
TOPIC, SUB = CAPTURED["topic"], CAPTURED["subscriptionId"]
BASE_SNAPSHOT = CAPTURED["frame"]["payload"]["snapshot"]
EPOCH = BASE_SNAPSHOT["logEpoch"]


class Session:
    """A subscription and a translator, fed frames the way the engine would number them."""

    def __init__(self, rows=(), *, replay=False, echo=False, terminal=False, **state):
        self.sub = TopicSubscription(TOPIC, ConversationState())
        self.sub.subscribed({"subscriptionId": SUB, "mode": "snapshot", "logEpoch": EPOCH})
        self.translator = cv.ConversationTranslator(replay_history=replay, echo_user_input=echo,
                                                    terminal_output=terminal)
        self.ordinal = 0
        self.updates, self.signals = [], []
        self.snapshot(list(rows), **state)

    def _send(self, frame, delivery):
        self.ordinal += 1
        wire = {"wireVersion": 3, "kind": "complete", "deliveryKind": delivery, "logicalFrameId": f"lf-{self.ordinal}",
                "logicalFrameOrdinal": self.ordinal, "topic": TOPIC, "subscriptionId": SUB,
                "frame": {"topic": TOPIC, "subscriptionId": SUB, "sentAt": 0, **frame}}
        out = cv.Translation()
        for outcome in self.sub.accept(parse_wire(copy.deepcopy(wire)), 0):
            assert isinstance(outcome, Applied), outcome
            step = self.translator.translate(outcome.changes)
            out.updates += step.updates
            out.signals += step.signals
        for update in out.updates:
            assert_valid_update(update)
        self.updates += out.updates
        self.signals += out.signals
        return out

    def snapshot(self, rows, delivery="initial", **state):
        seq = (self.sub.seq or 0) + 1
        snap = copy.deepcopy(BASE_SNAPSHOT)
        snap.update(state, seq=seq)
        snap["rows"] = {"window": copy.deepcopy(rows), "totalCount": len(rows), "firstRowId": rows[0]["rowId"] if rows else None}
        return self._send({"fromSeq": 0, "toSeq": seq, "payload": {"kind": "snapshot", "snapshot": snap}}, delivery)

    def deltas(self, *deltas):
        seq = self.sub.seq
        return self._send({"fromSeq": seq, "toSeq": seq + 1, "payload": {"kind": "deltas", "deltas": list(deltas)}}, "online")

    def patch(self, **patch):
        return self.deltas({"op": "state.updated", "patch": patch})


def control(phase, **extra):
    base = copy.deepcopy(BASE_SNAPSHOT["control"])
    base.update(phase=phase, **extra)
    return base


def row(row_id, kind, **fields):
    return {"rowId": row_id, "turnId": "turn-1", "createdAt": 1, "createdAtSeq": row_id, "kind": kind, **fields}


def text(row_id, value="", kind="assistantText", state="streaming"):
    return row(row_id, kind, text=value, state=state)


def tool(row_id, status, **fields):
    return row(row_id, "toolCall", toolCallId=f"call-{row_id}", toolName="Bash", status=status, inputText="", **fields)


def chunks(updates, kind="agent_message_chunk"):
    return "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == kind)


def test_a_streamed_turn_sends_each_piece_once_and_ends_the_turn():
    s = Session()
    assert s.updates == [] and s.signals == []
    s.patch(control=control("running", canStop=True, stopState="stoppable"))
    s.deltas({"op": "row.appended", "row": text(1, "", "reasoning")},
             {"op": "row.delta", "rowId": 1, "path": "text", "append": "Let me "},
             {"op": "row.delta", "rowId": 1, "path": "text", "append": "look."})
    s.deltas({"op": "row.upserted", "row": text(1, "Let me look.", "reasoning", "complete")},
             {"op": "row.appended", "row": text(2, "I")},
             {"op": "row.delta", "rowId": 2, "path": "text", "append": " will run it."})
    s.deltas({"op": "row.appended", "row": tool(3, "inputStreaming")},
             {"op": "row.delta", "rowId": 3, "path": "inputText", "append": '{"command":"ls"}'})
    s.deltas({"op": "row.upserted", "row": tool(3, "running", input={"command": "ls"})})
    s.deltas({"op": "row.upserted", "row": tool(3, "success", input={"command": "ls"}, output={"text": "a.txt\n"})})
    s.deltas({"op": "row.upserted", "row": text(2, "I will run it.", state="complete")})
    ended = s.patch(control=control("completedSuccess", sessionEnded=True))

    assert chunks(s.updates, "agent_thought_chunk") == "Let me look."
    assert chunks(s.updates) == "I will run it."
    cards = [u for u in s.updates if u.get("toolCallId") == "call-3"]
    assert [(u["sessionUpdate"], u.get("status")) for u in cards] == [
        ("tool_call", "pending"), ("tool_call_update", "in_progress"), ("tool_call_update", "completed")]
    assert cards[0]["kind"] == "execute"
    assert cards[1]["title"] == "Bash: ls" and cards[1]["rawInput"] == {"command": "ls"}
    assert cards[2]["content"] == [{"type": "content", "content": {"type": "text", "text": "a.txt\n"}}]
    assert ended.signals == [cv.TurnEnded("end_turn", None)] and ended.updates == []


def test_a_recovery_snapshot_mid_stream_sends_only_what_was_missed():
    s = Session()
    s.deltas({"op": "row.appended", "row": text(1, "Hel")},
             {"op": "row.appended", "row": tool(2, "running", input={"command": "make"})})
    before = len(s.updates)
    out = s.snapshot([text(1, "Hello, world"), tool(2, "success", input={"command": "make"}, output={"text": "ok"}),
                      text(3, "Done.")], delivery="recovery")
    assert len(s.updates) > before
    assert chunks(out.updates) == "lo, worldDone."
    assert [(u["sessionUpdate"], u.get("status")) for u in out.updates if u.get("toolCallId") == "call-2"] == [
        ("tool_call_update", "completed")]


def test_attaching_announces_nothing_of_the_history_already_there():
    s = Session([row(1, "userInput", text="hi", origin="realUser"), text(2, "hello", state="complete"),
                 tool(3, "success", input={"command": "ls"})])
    assert s.updates == []
    s.deltas({"op": "row.upserted", "row": tool(3, "success", input={"command": "ls"}, output={"text": "x"})})
    assert s.updates == []  # already final: nothing more to say about it


def test_replaying_history_sends_every_row_once():
    s = Session([row(1, "userInput", text="hi", origin="realUser"), text(2, "thinking", "reasoning", "complete"),
                 text(3, "hello", state="complete"),
                 tool(4, "error", input={"command": "false"}, error={"code": "x", "message": "exit 1"})],
                replay=True, meta={"title": "Greeting", "titleSource": "generated"})
    kinds = [u["sessionUpdate"] for u in s.updates]
    # A settled call is one card holding its outcome, as the legacy replay makes it (protocol/history.py).
    assert kinds == ["user_message_chunk", "agent_thought_chunk", "agent_message_chunk", "tool_call",
                     "current_mode_update", "session_info_update"]
    assert s.updates[3]["status"] == "failed" and s.updates[3]["content"][0]["content"]["text"] == "exit 1"
    assert s.updates[4]["currentModeId"] == "build"
    assert s.updates[5]["title"] == "Greeting"


def test_a_replayed_settled_bash_call_is_a_text_card_even_for_a_terminal_client():
    rows = [tool(1, "success", input={"command": "ls"}, output={"text": "README.md\n"}),
            tool(2, "running", input={"command": "sleep 9"}, output={"text": "zz"})]
    updates = Session(rows, replay=True, terminal=True).updates
    settled, running = [u for u in updates if u["sessionUpdate"] == "tool_call"]
    # Nothing runs to stream into a terminal: the output is the card's content, in the card itself.
    assert settled["status"] == "completed" and settled["rawOutput"] == {"text": "README.md\n"}
    assert settled["content"] == [{"type": "content", "content": {"type": "text", "text": "README.md\n"}}]
    assert not [u for u in updates if u.get("toolCallId") == "call-1" and u["sessionUpdate"] == "tool_call_update"]
    assert running["content"] == [{"type": "terminal", "terminalId": "call-2"}]  # a running one is still a terminal


def test_the_user_input_row_is_echoed_only_when_asked():
    quiet, echoing = Session(), Session(echo=True)
    for s in (quiet, echoing):
        s.deltas({"op": "row.appended", "row": row(1, "userInput", text="do it", origin="realUser")})
    assert quiet.updates == []
    echo = {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "do it"}, "messageId": "row-1"}
    assert echoing.updates == [echo]


def test_a_failed_turn_is_an_error_not_an_end_turn_and_its_open_cards_close_once():
    s = Session()
    s.patch(control=control("running"))
    s.deltas({"op": "row.appended", "row": tool(1, "running", input={"command": "sleep 9"})})
    error = {"code": "fault.provider", "message": "rate limited", "recoverable": True, "at": 1, "source": "provider"}
    out = s.patch(control=control("error", lastError=error))
    assert out.signals == [cv.TurnEnded(None, error)]
    assert out.updates == [{"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "failed"}]
    s.deltas({"op": "row.upserted", "row": tool(1, "cancelled", input={"command": "sleep 9"})})
    assert [u for u in s.updates if u.get("toolCallId") == "call-1"][-1]["status"] == "failed"
    assert sum(1 for u in s.updates if u.get("status") in ("failed", "completed")) == 1


def test_an_interrupted_turn_ends_cancelled():
    s = Session()
    s.patch(control=control("running"))
    assert s.patch(control=control("completedInterrupted")).signals == [cv.TurnEnded("cancelled", None)]


def test_interactions_open_and_close_once_with_the_engines_countdown():
    question = {"interactionId": "ask-1", "kind": "userInput", "anchorRowId": None, "createdAt": 1,
                "autoResolution": {"state": "visibleCountdown", "startedAt": 1, "visibleAt": 2, "deadlineAt": 60_000},
                "payload": {"kind": "userInput", "prompt": "Which one?", "freeText": True}}
    s = Session()
    opened = s.patch(pendingInteractions=[question])
    (signal,) = opened.signals
    assert isinstance(signal, cv.InteractionOpened)
    assert (signal.interaction.interaction_id, signal.interaction.countdown_deadline_at) == ("ask-1", 60_000)
    assert s.snapshot([], delivery="recovery", pendingInteractions=[question]).signals == []
    assert s.patch(pendingInteractions=[]).signals == [cv.InteractionClosed("ask-1")]


def test_an_interaction_open_at_attach_is_signalled():
    permission = {"interactionId": "perm-1", "kind": "permission", "anchorRowId": 1, "createdAt": 1,
                  "payload": {"kind": "permission", "toolCallId": "call-1", "toolName": "Bash", "summary": "rm", "detail": {},
                              "options": []}}
    s = Session([tool(1, "pendingApproval", input={"command": "rm x"})], pendingInteractions=[permission])
    assert [type(x) for x in s.signals] == [cv.InteractionOpened]


def test_title_plan_usage_and_mode_become_their_updates_and_only_when_they_change():
    s = Session()
    s.patch(meta={"title": "Fix the build", "titleSource": "generated"})
    s.patch(meta={"title": "Fix the build", "titleSource": "custom"})
    s.patch(plan={"items": [{"id": "1", "content": "Read", "status": "completed"},
                            {"id": "2", "content": "Patch", "status": "inProgress"}], "updatedAt": 1})
    usage = {"contextWindow": {"usedTokens": 1200, "maxTokens": 128000, "autoCompactThresholdTokens": None},
             "cumulative": BASE_SNAPSHOT["usage"]["cumulative"]}
    s.patch(usage=usage)
    s.patch(usage=usage)
    s.patch(config={**BASE_SNAPSHOT["config"], "mode": "plan"})
    assert s.updates == [
        {"sessionUpdate": "session_info_update", "title": "Fix the build"},
        {"sessionUpdate": "plan", "entries": [{"content": "Read", "status": "completed", "priority": "medium"},
                                              {"content": "Patch", "status": "in_progress", "priority": "medium"}]},
        {"sessionUpdate": "usage_update", "used": 1200, "size": 128000},
        {"sessionUpdate": "current_mode_update", "currentModeId": "plan"},
    ]


def test_a_change_in_input_routing_is_signalled():
    s = Session()
    out = s.patch(inputRouting={"mode": "enqueue"})
    assert out.signals == [cv.RoutingChanged(cv.view.InputRouting("enqueue", None))]


def test_background_works_are_cards_that_finish_once():
    work = {"workId": "w1", "kind": "bash", "title": "npm test", "status": "running", "startedAt": 1, "anchorRowId": 3}
    s = Session()
    s.patch(backgroundWorks=[work])
    s.patch(backgroundWorks=[{**work, "status": "resultPending"}])
    s.patch(backgroundWorks=[])
    expected = [("tool_call", "in_progress"), ("tool_call_update", "completed")]
    assert [(u["sessionUpdate"], u["status"]) for u in s.updates] == expected
    assert s.updates[0]["title"] == "[background] npm test" and s.updates[0]["toolCallId"] == "bg_w1"  # the legacy path's id


def test_a_subagent_is_a_card_naming_its_parent_tool_call():
    s = Session()
    agent = row(5, "subagent", parentToolCallId="call-4", subagentType="explore", status="running", summaryText="")
    s.deltas({"op": "row.appended", "row": agent})
    s.deltas({"op": "row.delta", "rowId": 5, "path": "summaryText", "append": "Found it."})
    s.deltas({"op": "row.upserted", "row": {**agent, "status": "success", "summaryText": "Found it."}})
    start, done = s.updates
    assert start["toolCallId"] == "subagent-5" and start["_meta"]["zcode"]["parentToolCallId"] == "call-4"
    assert done["status"] == "completed" and done["content"][0]["content"]["text"] == "Found it."


def test_a_timeline_marker_is_a_notice_of_its_own():
    s = Session()
    marker = {"type": "compact", "origin": "manual", "status": "running"}
    s.deltas({"op": "row.appended", "row": row(9, "timelineMarker", marker=marker)})
    s.deltas({"op": "row.upserted", "row": row(9, "timelineMarker", marker={**marker, "status": "success"})})
    assert [(u["content"]["text"], u["messageId"]) for u in s.updates] == [
        ("Compacting the conversation…", "notice-9"), ("Conversation compacted.", "notice-9")]


def test_a_rewound_branch_closes_its_open_cards():
    s = Session()
    s.deltas({"op": "row.appended", "row": text(1, "a", state="complete")}, {"op": "row.appended", "row": tool(2, "running")})
    out = s.deltas({"op": "row.removed", "fromRowId": 2})
    assert out.updates == [{"sessionUpdate": "tool_call_update", "toolCallId": "call-2", "status": "failed"}]


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=60)
@given(pieces=st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=12), data=st.data())
def test_streamed_text_with_a_recovery_anywhere_reaches_the_client_exactly_once(pieces, data):
    s = Session()
    s.deltas({"op": "row.appended", "row": text(1)})
    recover_after = data.draw(st.integers(0, len(pieces)))
    for index, piece in enumerate(pieces):
        if index == recover_after:
            # The engine resyncs with a snapshot a few pieces ahead of what was applied.
            ahead = data.draw(st.integers(index, len(pieces)))
            s.snapshot([text(1, "".join(pieces[:ahead]))], delivery="recovery")
            remaining = pieces[ahead:]
            for rest in remaining:
                s.deltas({"op": "row.delta", "rowId": 1, "path": "text", "append": rest})
            break
        s.deltas({"op": "row.delta", "rowId": 1, "path": "text", "append": piece})
    assert chunks(s.updates) == "".join(pieces)


def test_replaying_a_finished_history_ends_no_turn():
    s = Session([text(1, "done", state="complete")], replay=True, control=control("completedSuccess", sessionEnded=True))
    assert not any(isinstance(x, cv.TurnEnded) for x in s.signals)


def test_a_turn_that_ended_while_the_client_was_resyncing_ends_on_the_recovery_snapshot():
    s = Session()
    s.patch(control=control("running"))
    s.deltas({"op": "row.appended", "row": tool(1, "running", input={"command": "make"})})
    out = s.snapshot([tool(1, "success", input={"command": "make"})], delivery="recovery",
                     control=control("completedSuccess", sessionEnded=True))
    assert out.signals == [cv.TurnEnded("end_turn", None)]
    assert [(u["sessionUpdate"], u.get("status")) for u in out.updates] == [("tool_call_update", "completed")]


def test_a_backgrounded_tool_call_stays_open_when_the_turn_ends():
    s = Session()
    s.patch(control=control("running"))
    s.deltas({"op": "row.appended", "row": tool(1, "running", input={"command": "npm test"}, backgrounded=True, workId="w1")})
    out = s.patch(control=control("completedSuccess", sessionEnded=True))
    assert out.updates == []


def test_an_edit_opens_with_its_diff_and_location():
    s = Session()
    edit = {"file_path": "/w/a.py", "old_string": "x = 1", "new_string": "x = 2"}
    s.deltas({"op": "row.appended", "row": row(1, "toolCall", toolCallId="call-1", toolName="Edit", status="running",
                                                inputText="", input=edit)})
    (start,) = s.updates
    assert start["kind"] == "edit" and start["locations"] == [{"path": "/w/a.py"}]
    assert start["content"][0]["type"] == "diff" and start["content"][0]["newText"] == "x = 2"


def test_after_the_replay_a_new_prompt_is_not_echoed_to_its_sender():
    s = Session([row(1, "userInput", text="old", origin="realUser")], replay=True)
    assert [u["sessionUpdate"] for u in s.updates][:1] == ["user_message_chunk"]
    before = len(s.updates)
    s.deltas({"op": "row.appended", "row": row(2, "userInput", text="new", origin="realUser")})
    assert s.updates[before:] == []


# -- a fuzz: any sequence of well-formed ops never raises and only ever makes valid ACP updates ----

_kinds = st.sampled_from(["assistantText", "reasoning", "toolCall", "subagent", "timelineMarker", "userInput", "turnHeader"])
_tool_status = st.sampled_from(list(cv.TOOL_STATUSES))
_sub_status = st.sampled_from(list(cv.SUBAGENT_STATUSES))


@st.composite
def _row(draw, row_id):
    kind = draw(_kinds)
    if kind in ("assistantText", "reasoning"):
        return text(row_id, draw(st.text(max_size=5)), kind, draw(st.sampled_from(["streaming", "complete"])))
    if kind == "toolCall":
        extra = draw(st.fixed_dictionaries({}, optional={
            "input": st.fixed_dictionaries({"command": st.text(max_size=6)}),
            "output": st.fixed_dictionaries({"text": st.text(max_size=6)}),
            "backgrounded": st.just(True),
        }))
        return tool(row_id, draw(_tool_status), **extra)
    if kind == "subagent":
        return row(row_id, "subagent", subagentType="explore", status=draw(_sub_status), summaryText=draw(st.text(max_size=4)))
    if kind == "timelineMarker":
        return row(row_id, "timelineMarker", marker={"type": "compact", "origin": "auto",
                                                     "status": draw(st.sampled_from(["running", "success", "failed"]))})
    if kind == "userInput":
        return row(row_id, "userInput", text=draw(st.text(max_size=5)), origin="realUser")
    return row(row_id, "turnHeader", origin="userInput", state="running", startedAt=1)


@st.composite
def _op(draw):
    row_id = draw(st.integers(1, 6))
    choice = draw(st.sampled_from(["append", "upsert", "delta", "remove", "control", "works", "plan"]))
    if choice in ("append", "upsert"):
        return {"op": "row.appended" if choice == "append" else "row.upserted", "row": draw(_row(row_id))}
    if choice == "delta":
        path = draw(st.sampled_from(sorted(("text", "inputText", "output.text", "summaryText"))))
        return {"op": "row.delta", "rowId": row_id, "path": path, "append": draw(st.text(min_size=1, max_size=3))}
    if choice == "remove":
        return {"op": "row.removed", "fromRowId": row_id}
    if choice == "control":
        return {"op": "state.updated", "patch": {"control": control(draw(st.sampled_from(
            ["running", "completedSuccess", "completedInterrupted", "error"])))}}
    if choice == "works":
        status = draw(st.sampled_from(["running", "resultPending", "failed", "cancelled"]))
        works = draw(st.lists(st.just({"workId": f"w{row_id}", "kind": "bash", "title": "t", "status": status,
                                       "startedAt": 1, "anchorRowId": None}), max_size=1))
        return {"op": "state.updated", "patch": {"backgroundWorks": works}}
    plan = {"items": [{"id": "1", "content": "x", "status": "inProgress"}], "updatedAt": 1}
    return {"op": "state.updated", "patch": {"plan": plan}}


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=150)
@given(frames=st.lists(st.lists(_op(), min_size=1, max_size=4), max_size=10), replay=st.booleans())
def test_any_sequence_of_ops_makes_only_valid_updates_and_each_card_ends_once(frames, replay):
    s = Session(replay=replay)
    for deltas in frames:
        s.deltas(*deltas)  # every update is schema-checked in Session._send
    finals = {}
    for update in s.updates:
        if update["sessionUpdate"] in ("tool_call", "tool_call_update") and update.get("status") in ("completed", "failed"):
            finals[update["toolCallId"]] = finals.get(update["toolCallId"], 0) + 1
    # A card id can be reused after a rewind removed its row; otherwise one terminal status each.
    rewound = any(d["op"] == "row.removed" for deltas in frames for d in deltas)
    assert rewound or all(count == 1 for count in finals.values())


def test_a_snapshot_after_a_resume_is_taken_as_known_even_under_other_row_ids():
    # The engine read the session back from its store (the stop fallback's close and resume): its rows
    # carry ids of its own, so a diff would send every earlier reply again as new text.
    s = Session()
    s.deltas({"op": "row.appended", "row": text(1, "First reply.", state="complete")},
             {"op": "row.appended", "row": text(2, "Stuck turn's text so f")})
    s.translator.rebaseline()
    resumed = s.snapshot([text(5, "First reply.", state="complete"), text(6, "Stuck turn's text so far.", state="complete")],
                         delivery="initial")
    assert chunks(resumed.updates) == ""
    later = s.deltas({"op": "row.appended", "row": text(7, "New answer.")})
    assert chunks(later.updates) == "New answer."

"""Sub-agents as child sessions (protocol/subagents.py) on the legacy translator: golden cases."""

from __future__ import annotations

import ujson

from zcode_acp.protocol.subagents import CHILD, child_session_id, supports_subagents
from zcode_acp.protocol.translator import TurnTranslator
from zcode_acp.protocol.updates import encode

PARENT = "sess-1"
CHILD_ID = child_session_id(PARENT, "agent_1")


def tool(**body):
    return {"type": "tool.updated", "payload": body}


def subagent_turn(translator: TurnTranslator) -> list[dict]:
    out: list[dict] = []
    out += translator.feed(tool(kind="scheduled", toolCallId="agent_1", toolName="Agent",
                                input={"description": "look around", "subagent_type": "explore"}))
    out += translator.feed(tool(kind="started", toolCallId="agent_1"))
    out += translator.feed(tool(kind="scheduled", toolCallId="read_1", parentToolCallId="agent_1",
                                toolName="Read", input={"file_path": "/w/README.md"}))
    out += translator.feed({"type": "model.streaming",
                            "payload": {"kind": "text_delta", "delta": "found it", "parentToolCallId": "agent_1"}})
    out += translator.feed(tool(kind="result", toolCallId="read_1", parentToolCallId="agent_1",
                                result={"content": "hi"}))
    out += translator.feed(tool(kind="result", toolCallId="agent_1", result={"content": "done"}))
    return out


def sessions_and_kinds(lines: bytes) -> list[tuple[str, str]]:
    frames = [ujson.loads(line) for line in lines.splitlines()]
    return [(f["params"]["sessionId"], f["params"]["update"]["sessionUpdate"]) for f in frames]


def test_the_capability_is_an_object_under_subagents():
    assert supports_subagents({"subagents": {}})
    assert not supports_subagents({"subagents": None}) and not supports_subagents({}) and not supports_subagents(None)


def test_a_client_that_opts_in_sees_the_sub_agent_as_a_child_session():
    translator = TurnTranslator(message_id="m", subagents=True, session_id=PARENT)
    lines = encode(PARENT, subagent_turn(translator))
    assert sessions_and_kinds(lines) == [
        (PARENT, "tool_call"), (PARENT, "subagent_update"),  # the parent's card stays, the child announced
        (PARENT, "tool_call_update"),
        (CHILD_ID, "tool_call"), (CHILD_ID, "agent_message_chunk"), (CHILD_ID, "tool_call_update"),
        (PARENT, "tool_call_update"), (PARENT, "subagent_update"),
    ]
    frames = [ujson.loads(line) for line in lines.splitlines()]
    announce, end = (f["params"]["update"] for f in frames if f["params"]["update"]["sessionUpdate"] == "subagent_update")
    assert announce == {"sessionUpdate": "subagent_update", "sessionId": CHILD_ID, "title": "look around",
                        "state": {"state": "running"}, "description": "explore"}
    assert end == {"sessionUpdate": "subagent_update", "sessionId": CHILD_ID,
                   "state": {"state": "idle", "stopReason": "end_turn"}}
    assert CHILD.encode() not in lines  # the routing mark never reaches the wire


def test_a_sub_agent_cut_short_ends_its_child_failed_and_its_cards_in_the_child():
    translator = TurnTranslator(message_id="m", subagents=True, session_id=PARENT)
    translator.feed(tool(kind="scheduled", toolCallId="agent_1", toolName="Task", input={"description": "d"}))
    translator.feed(tool(kind="scheduled", toolCallId="read_1", parentToolCallId="agent_1", toolName="Read",
                         input={}))
    assert sessions_and_kinds(encode(PARENT, translator.close_open_cards())) == [
        (CHILD_ID, "tool_call_update"), (PARENT, "tool_call_update"), (PARENT, "subagent_update")]
    assert translator.close_open_cards() == []


def test_a_client_without_the_capability_gets_todays_nested_cards():
    lines = encode(PARENT, subagent_turn(TurnTranslator(message_id="m", session_id=PARENT)))
    assert {session for session, _ in sessions_and_kinds(lines)} == {PARENT}
    assert "subagent_update" not in {kind for _, kind in sessions_and_kinds(lines)}


def test_a_sub_agents_text_leaves_the_parents_fast_path():
    translator = TurnTranslator(message_id="m", subagents=True, session_id=PARENT)
    event = {"type": "model.streaming", "payload": {"kind": "text_delta", "delta": "x", "parentToolCallId": "a"}}
    assert translator.text_delta(event) is None
    assert TurnTranslator(message_id="m").text_delta(event) == ("m", "x")


def test_a_dialog_about_a_sub_agents_call_makes_its_child_require_action_once():
    translator = TurnTranslator(message_id="m", subagents=True, session_id=PARENT)
    translator.feed(tool(kind="scheduled", toolCallId="agent_1", toolName="Agent", input={"description": "d"}))
    for read in ("read_1", "read_2"):
        translator.feed(tool(kind="scheduled", toolCallId=read, parentToolCallId="agent_1", toolName="Read", input={}))
    states = lambda out: [(u["sessionId"], u["state"]["state"]) for u in out]  # noqa: E731
    assert states(translator.dialog_waits("read_1", True)) == [(CHILD_ID, "requires_action")]
    assert translator.dialog_waits("read_2", True) == []  # already waiting
    assert translator.dialog_waits("read_1", False) == []  # read_2's dialog still waits
    assert states(translator.dialog_waits("read_2", False)) == [(CHILD_ID, "running")]
    assert translator.dialog_waits("agent_1", True) == []  # the Agent call's own dialog is the parent's


def test_a_dialog_changes_nothing_without_the_capability_or_after_the_child_ended():
    plain = TurnTranslator(message_id="m", session_id=PARENT)
    plain.feed(tool(kind="scheduled", toolCallId="read_1", parentToolCallId="agent_1", toolName="Read", input={}))
    assert plain.dialog_waits("read_1", True) == []
    translator = TurnTranslator(message_id="m", subagents=True, session_id=PARENT)
    translator.feed(tool(kind="scheduled", toolCallId="agent_1", toolName="Task", input={}))
    translator.feed(tool(kind="scheduled", toolCallId="read_1", parentToolCallId="agent_1", toolName="Read", input={}))
    translator.close_open_cards()
    assert translator.dialog_waits("read_1", False) == []  # idle already: no running after the end


def test_the_agent_calls_prompt_is_a_message_from_the_parent_to_the_child():
    translator = TurnTranslator(message_id="m", subagents=True, session_id=PARENT)
    out = translator.feed(tool(kind="scheduled", toolCallId="agent_1", toolName="Agent",
                               input={"description": "d", "prompt": "Find the loader."}))
    lines = encode(PARENT, out)
    assert sessions_and_kinds(lines) == [(PARENT, "tool_call"), (PARENT, "subagent_update"),
                                         (PARENT, "session_message"), (CHILD_ID, "session_message")]
    sent, received = (ujson.loads(line)["params"]["update"] for line in lines.splitlines()[2:])
    text = [{"type": "text", "text": "Find the loader."}]
    assert sent == {"sessionUpdate": "session_message", "messageId": "agent_1-prompt", "senderSessionId": PARENT,
                    "recipientSessionId": CHILD_ID, "recipientMessageId": "agent_1-prompt-received", "content": text}
    assert received == {"sessionUpdate": "session_message", "messageId": "agent_1-prompt-received",
                        "senderSessionId": PARENT, "recipientSessionId": CHILD_ID, "senderMessageId": "agent_1-prompt",
                        "content": text}
    plain = TurnTranslator(message_id="m", session_id=PARENT)
    assert [u["sessionUpdate"] for u in plain.feed(tool(kind="scheduled", toolCallId="agent_1", toolName="Agent",
                                                        input={"prompt": "Find the loader."}))] == ["tool_call"]


def test_a_replay_shows_the_sub_agent_as_the_child_session_it_was_live():
    from zcode_acp.protocol.history import replay_updates
    from zcode_acp.protocol.subagents import replay_children
    agent_input = {"description": "look around", "subagent_type": "explore", "prompt": "Read it."}
    history = [{"info": {"role": "assistant", "id": "m"}, "parts": [
        {"type": "tool", "id": "agent_1", "tool": "Agent", "state": {"status": "completed", "input": agent_input,
                                                                      "output": "done"}},
        {"type": "tool", "id": "read_1", "tool": "Read", "parentToolCallId": "agent_1",
         "state": {"status": "completed", "input": {"file_path": "/w/README.md"}, "output": "hi"}},
        {"type": "text", "text": "It looked."}]}]
    replayed = replay_children(replay_updates(history), PARENT)
    live = TurnTranslator(message_id="m", subagents=True, session_id=PARENT)
    shown = live.feed(tool(kind="scheduled", toolCallId="agent_1", toolName="Agent", input=agent_input))
    shown += live.feed(tool(kind="scheduled", toolCallId="read_1", parentToolCallId="agent_1", toolName="Read",
                            input={"file_path": "/w/README.md"}))
    shown += live.feed(tool(kind="result", toolCallId="read_1", parentToolCallId="agent_1", result={"content": "hi"}))
    shown += live.feed(tool(kind="result", toolCallId="agent_1", result={"content": "done"}))
    links = lambda out: [u for u in out if u["sessionUpdate"] in ("subagent_update", "session_message")]  # noqa: E731
    assert links(replayed) == links(shown)
    assert [(u.get(CHILD), u["toolCallId"]) for u in replayed if u["sessionUpdate"] == "tool_call"] == \
        [(None, "agent_1"), (CHILD_ID, "read_1")]
    assert replayed[-1]["sessionUpdate"] == "subagent_update"  # the child ends after its own cards
    assert replay_updates(history)[-1]["sessionUpdate"] == "agent_message_chunk"

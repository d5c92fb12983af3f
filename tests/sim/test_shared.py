"""Behaviour both dialects share (each test runs once per dialect), and the prompt-aware default."""

from __future__ import annotations

import pytest

from tests.sim.peer import SimPeer

from zcode_acp.sim.scenarios import BUILTIN, list_scenarios


def test_a_prompt_runs_a_turn_that_answers_what_was_asked(sim: SimPeer) -> None:
    sid = sim.create()
    events = sim.turn(sid, "What does the retry policy do?")
    kinds = [e["type"] for e in events]
    assert kinds[0] == "turn.started" and kinds[-1] == "turn.completed"
    assert "What does the retry policy do?" in sim.text_of(events)
    assert "What does the retry policy do?" in sim.text_of(events, "reasoning_delta")
    seqs = [e["seq"] for e in sim.events(sid)]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # contiguous per session


def test_a_prompt_naming_a_file_reads_it(sim: SimPeer) -> None:
    sid = sim.create()
    events = sim.turn(sid, "explain src/app/main.py please")
    calls = [e["payload"] for e in events if e["type"] == "model.streaming" and e["payload"]["kind"] == "tool_call"]
    assert [(c["toolName"], c["input"]) for c in calls] == [("Read", {"file_path": "src/app/main.py"})]
    assert "`src/app/main.py`" in sim.text_of(events)


def test_a_tour_request_gets_the_demo_and_a_greeting_a_hello(sim: SimPeer) -> None:
    sid = sim.create()
    tour = sim.turn(sid, "Show me around")
    names = [e["payload"]["toolName"] for e in tour if e["type"] == "model.streaming"
             and e["payload"]["kind"] == "tool_call"]
    assert names == ["Read", "Bash"] and sim.text_of(tour).startswith("Let me look at the project.")
    hello = sim.turn(sid, "hello there")
    assert sim.text_of(hello).startswith("Hello! You said “hello there”.")


def test_sim_help_lists_every_scenario(sim: SimPeer) -> None:
    sid = sim.create()
    text = sim.text_of(sim.turn(sid, "#sim help"))
    for name, line in list_scenarios():
        assert f"- `{name}`: {line}" in text


def test_every_builtin_scenario_has_a_one_line_description() -> None:
    listed = dict(list_scenarios())
    assert set(listed) == set(BUILTIN)
    assert all(line and "\n" not in line for line in listed.values())


def test_scenario_files_are_listed_and_a_named_scenario_still_wins(tmp_path, start) -> None:
    path = tmp_path / "scenarios.json"
    path.write_text('{"scenarios": {"hello": {"steps": [{"type": "text", "text": "Hi from a file."}]}}}')
    assert ("hello", f"from {path}") in list_scenarios(str(path))
    peer = start("cli016", env={"ZCODE_SIM_SCENARIOS": str(path)})
    sid = peer.create()
    assert peer.text_of(peer.turn(sid, "#sim hello")) == "Hi from a file."
    assert peer.text_of(peer.turn(sid, "#sim stream count=3")) == "xxx"


def test_a_send_while_a_turn_runs_is_busy_with_the_dialects_code(sim: SimPeer) -> None:
    sid = sim.create()
    start, _ = sim.send_prompt(sid, "#sim hang")
    sim.event(sid, "turn.started", start)
    error = sim.error("session/send", {"sessionId": sid, "content": "again"})
    assert (error["code"], error["message"]) == ((1308, "prompt is running") if sim.dialect == "classic"
                                                 else (-32010, "A prompt is already running for this session"))


def test_subscribe_after_seq_returns_what_was_missed(sim: SimPeer) -> None:
    sid = sim.create()
    events = sim.turn(sid, "#sim stream count=4")
    again = sim.result("session/subscribe", {"sessionId": sid, "deliveryKind": "desktop-continuous",
                                             "includeSnapshot": False, "afterSeq": events[1]["seq"]})
    assert [e["seq"] for e in again["events"]] == [e["seq"] for e in sim.events(sid) if e["seq"] > events[1]["seq"]]


def test_frames_with_jsonrpc_and_unknown_methods_are_refused(sim: SimPeer) -> None:
    sim.send({"jsonrpc": "2.0", "id": 99, "method": "session/list", "params": {}})
    assert sim.answer_to(99)["error"]["code"] == -32600
    assert sim.error("session/nothingLikeThis")["code"] == -32601


def test_an_interaction_request_is_reannounced_under_new_ids_of_the_dialects_type(start, dialect) -> None:
    peer = start(dialect, env={"ZCODE_SIM_REANNOUNCE": "0.05"})
    sid = peer.create()
    peer.send_prompt(sid, "#sim permission")
    first = peer.wait(lambda f: f.get("method") == "interaction/requestPermission")
    second = peer.wait(lambda f: f.get("method") == "interaction/requestPermission" and f["id"] != first["id"])
    assert first["params"]["requestId"] == second["params"]["requestId"]
    wanted = int if dialect == "classic" else str
    assert isinstance(first["id"], wanted) and isinstance(second["id"], wanted)
    start_index = peer.mark()
    peer.send({"id": second["id"], "result": {"decision": "allow"}})
    done = peer.event(sid, "turn.completed", start_index)
    assert done["payload"]["resultType"] == "success"


@pytest.mark.parametrize("scenario, request_method, answer, tool, status", [
    ("#sim permission", "interaction/requestPermission", {"decision": "allow"}, "Bash", "completed"),
    ("#sim permission", "interaction/requestPermission", {"decision": "deny", "reason": "no"}, "Bash", "error"),
    ("#sim questions", "interaction/requestUserInput", {"action": "decline", "reason": "no"}, "AskUserQuestion",
     "error"),
    ("#sim plan", "interaction/requestUserInput", {"action": "decline", "reason": "no"}, "ExitPlanMode", "error"),
])
def test_a_dialogs_tool_is_a_part_of_the_history_between_its_texts(
        start, dialect, scenario, request_method, answer, tool, status) -> None:
    # The engine keeps every tool it ran or refused; without the part a reload lost the card and the
    # text before and after it ran together (issue 29).
    peer = start(dialect)
    sid = peer.create()
    index, _ = peer.send_prompt(sid, scenario)
    asked = peer.wait(lambda f: f.get("method") == request_method, start=index)
    peer.send({"id": asked["id"], "result": answer})
    peer.event(sid, "turn.completed", index)
    assistant = peer.result("session/messages", {"sessionId": sid})["messages"][-1]
    kinds = [part["type"] for part in assistant["parts"]]
    [part] = [part for part in assistant["parts"] if part["type"] == "tool"]
    assert "text" in kinds[kinds.index("tool") + 1:]  # what the model said after the dialog: a part of its own
    assert part["tool"] == tool and part["state"]["status"] == status

"""Issue 9, wrong answers (items 7–12): what the editor sees, frame by frame.

Each test asserts an order or an absence on the bridge's stdout. Absence is
asserted behind a marker: an ``initialize`` sent after the fact, whose answer
the bridge writes after everything the fact could still cause on that path.
"""

import json
import os
import signal


import pytest

from tests.process.reliability import running, text_of, updates


def marker(b, name="mark"):
    """Frames written before the answer to a fresh ``initialize``."""
    seen = []
    b.request(name, "initialize", {"protocolVersion": 1})
    b.answer(name, seen=seen)
    return seen


def option(dialog, prefix):
    return next(o["optionId"] for o in dialog["params"]["options"] if o["kind"].startswith(prefix))


def answer_dialog(b, dialog, prefix):
    b.send({"jsonrpc": "2.0", "id": dialog["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": option(dialog, prefix)}}})


def is_dialog(frame, session_id):
    return frame.get("method") == "session/request_permission" and frame["params"]["sessionId"] == session_id


def test_a_dialog_open_when_the_backend_dies_never_answers_the_next_backend(tmp_path):
    with running(tmp_path) as b:
        first = b.new_session(request_id="new-a")
        b.prompt("pa", first, "#sim permission")
        stale = b.until(lambda f: is_dialog(f, first))
        os.kill(b.backend(), signal.SIGKILL)
        assert b.answer("pa")["error"]["code"] == -32603
        second = b.new_session(request_id="new-b")
        b.prompt("pb", second, "#sim permission")
        fresh = b.until(lambda f: is_dialog(f, second))
        answer_dialog(b, stale, "allow")  # the user answers the dialog of the dead process …
        answer_dialog(b, fresh, "reject")  # … then refuses the one in front of them
        seen = []
        assert b.answer("pb", seen=seen)["result"]["stopReason"] == "end_turn"
        text = text_of(seen, second)
        assert "Permission denied" in text and "granted" not in text, text
        withdrawn = [f for f in b.frames if f.get("method") == "$/cancel_request"
                     and f["params"]["requestId"] == stale["id"]]
        assert withdrawn, "the dead backend's dialog was never withdrawn"


def test_a_reused_request_id_gets_its_own_answer(tmp_path):
    with running(tmp_path) as b:
        sid = b.new_session()
        b.prompt("R", sid, "#sim hang")
        b.until(lambda f: bool(updates([f], sid, "agent_message_chunk")))
        cancel = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "R"}}
        again = {"jsonrpc": "2.0", "id": "R", "method": "session/prompt",
                 "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "#sim stream count=3"}]}}
        b.raw.write(json.dumps(cancel).encode() + b"\n" + json.dumps(again).encode() + b"\n")  # one read
        assert b.answer("R")["error"]["code"] == -32800
        second = b.answer("R")
        assert second.get("result", {}).get("stopReason") == "end_turn", second
        assert not [f for f in marker(b) if f.get("id") == "R"]


def test_a_backend_that_dies_at_start_is_retried_with_backoff_and_its_stderr_is_reported(tmp_path):
    complaint = "fatal: no credentials in ~/.zcode (run zcode login)"
    with running(tmp_path, env={"ZCODE_SIM_DIE_AT_START": complaint}) as b:
        sid = b.new_session()
        for index in range(4):
            b.prompt(f"p{index}", sid, "hello")
            error = b.answer(f"p{index}")["error"]
            assert error["code"] == -32603
            assert complaint in json.dumps(error), error
        starts = [t for t in b.trace() if "diedAtStart" in t]
        assert 1 <= len(starts) <= 2, f"{len(starts)} starts for 4 prompts within a fraction of a second"


def test_a_mode_change_written_after_text_reaches_the_client_after_it(tmp_path):
    with running(tmp_path) as b:
        sid = b.new_session()
        b.prompt("p", sid, "#sim text_then_mode count=8")  # eight deltas and the mode change in one write
        seen = []
        b.answer("p", seen=seen)
        seen += marker(b)
        kinds = [u["sessionUpdate"] for u in updates(seen, sid)
                 if u["sessionUpdate"] in ("agent_message_chunk", "current_mode_update")]
        assert kinds.count("agent_message_chunk") == 8 and "current_mode_update" in kinds, kinds
        assert kinds.index("current_mode_update") > max(i for i, k in enumerate(kinds) if k == "agent_message_chunk")


@pytest.mark.parametrize(("text", "kind"), [
    ("#sim demo delay=0", "plan"),  # the plan of a turn (read at its end)
    ("/mode plan", "current_mode_update"),  # a slash command's updates
], ids=["the plan of a turn", "a slash command's updates"])
def test_what_a_prompt_shows_arrives_before_its_answer_and_nothing_after(tmp_path, text, kind):
    with running(tmp_path) as b:
        sid = b.new_session()
        b.prompt("p", sid, text)
        before = []
        assert b.answer("p", seen=before)["result"]["stopReason"] == "end_turn"
        after = marker(b)
        assert updates(before, sid, kind), f"no {kind} before the answer"
        assert not updates(after, sid), [u["sessionUpdate"] for u in updates(after, sid)]


def test_nothing_of_a_cancelled_request_follows_its_answer(tmp_path):
    with running(tmp_path) as b:
        sid = b.new_session()
        b.prompt("p", sid, "#sim stream count=200000")
        b.until(lambda f: len(updates([f], sid, "agent_message_chunk")) > 0)
        b.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "p"}})
        assert b.answer("p", timeout=10)["error"]["code"] == -32800
        late = updates(marker(b), sid, "agent_message_chunk")
        assert not late, f"{len(late)} chunks after the -32800 answer"


def _last_status(frames, session_id):
    status = {}
    for update in updates(frames, session_id):
        if update["sessionUpdate"] in ("tool_call", "tool_call_update") and "status" in update:
            status[update["toolCallId"]] = update["status"]
    return status


@pytest.mark.parametrize("scenario", ["fail_mid_tool", "die_mid_tool"], ids=["the turn fails", "the backend dies"])
def test_open_cards_are_closed_failed_when_the_turn_ends_abnormally(tmp_path, scenario):
    with running(tmp_path) as b:
        sid = b.new_session()
        b.prompt("p", sid, f"#sim {scenario}")
        seen = []
        assert b.answer("p", seen=seen)["error"]["code"] == -32603
        status = _last_status(seen, sid)
        assert status and set(status.values()) == {"failed"}, status

"""Session and Turn actors between recording fakes (no processes, no sleeps).

Absence ("this did not settle") is asserted behind a barrier: a later event
that travels the same FIFO path and whose effect the test waits for.
"""

from dataclasses import replace

import pytest

from zcode_acp.config.settings import Config
from zcode_acp.actors.messages import BackendLost, CancelTurn, GoDormant, Prompt, SessionEvents, StopFailed, Teardown
from zcode_acp.actors.session.actor import Session
from zcode_acp.protocol.content import BackendPrompt
from zcode_acp.protocol.session_config import SessionSettings
from tests.actors.fakes import Probe

CONFIG = replace(Config(), busy_retry_interval=0.01, gap_wait=0.2, silence_probe=0)


def _world(config):
    backend, conn, supervisor, router = Probe(), Probe(), Probe(), Probe()
    session = Session.start(
        session_id="acp-1", cwd="/w", mcp_servers=[], settings=SessionSettings(), backend=backend.ref,
        router=router.ref, supervisor=supervisor.ref, clients=[conn.ref], capabilities={}, config=config)
    yield session, backend, conn, supervisor
    session.stop()
    for probe in (backend, conn, supervisor):
        probe.stop()


@pytest.fixture
def world():
    yield from _world(CONFIG)


@pytest.fixture
def chinese_world():
    yield from _world(replace(CONFIG, lang="zh-CN"))


class Script:
    """Plays the backend's side for one session."""

    def __init__(self, session, backend):
        self.session, self.backend, self.seq = session, backend, 0

    def reply(self, call, result=None, error=None):
        call.reply_to.tell(call.reply(result, error))  # the typed reply the caller asked for

    def go_live(self):
        create = self.backend.wait_call("session/create")
        self.reply(create, {"session": {"sessionId": "b-1"}})
        subscribe = self.backend.wait_call("session/subscribe")
        self.reply(subscribe, {"eventSeq": 0})

    def event(self, event_type, turn_id=None, seq=None, **payload):
        if seq is None:
            self.seq += 1
            seq = self.seq
        event = {"sessionId": "b-1", "seq": seq, "type": event_type, "payload": payload}
        if turn_id:
            event["turnId"] = turn_id
        return event

    def push(self, *events):
        self.session.tell(SessionEvents(list(events)))

    def text(self, turn_id, delta):
        return self.event("model.streaming", turn_id, kind="text_delta", delta=delta)


def prompt(session, conn, request_id, text="hi"):
    session.tell(Prompt(conn.ref, request_id, BackendPrompt(text)))


def test_lazy_session_creates_once_then_subscribes_before_sending(world):
    session, backend, conn, supervisor = world
    script = Script(session, backend)
    prompt(session, conn, 1)
    script.go_live()
    send = backend.wait_call("session/send")
    assert send.params == {"sessionId": "b-1", "content": "hi"}
    order = [m.method for m in backend.of("BackendCall")]
    assert order == ["session/create", "session/subscribe", "session/send"]
    supervisor.wait_for(lambda: supervisor.of("Materialized"))


def test_two_prompts_racing_first_is_cancelled_second_runs(world):
    session, backend, conn, _ = world
    script = Script(session, backend)
    prompt(session, conn, 1, "first")
    prompt(session, conn, 2, "second")
    assert conn.wait_reply(1).result == {"stopReason": "cancelled"}
    script.go_live()
    send = backend.wait_call("session/send")
    assert send.params["content"] == "second"
    script.reply(send, {"accepted": True})
    script.push(script.event("turn.started", "t2"), script.text("t2", "hello"),
                script.event("turn.completed", "t2", resultType="success"))
    assert conn.wait_reply(2).result["stopReason"] == "end_turn"
    assert conn.text() == "hello"
    assert len(backend.calls("session/create")) == 1
    assert len(backend.calls("session/send")) == 1  # the cancelled prompt never ran


def start_running(session, backend, conn, script, request_id=1, turn_id="t1"):
    prompt(session, conn, request_id)
    if not backend.calls("session/create"):
        script.go_live()
    send = backend.wait_call("session/send", count=len(backend.calls("session/send")) + 1)
    script.reply(send, {"accepted": True})
    script.push(script.event("turn.started", turn_id), script.text(turn_id, "a"))
    conn.wait_for(lambda: "a" in conn.text())
    return send


def test_cancel_during_a_turn_answers_at_once_and_stops_the_backend_turn(world):
    session, backend, conn, _ = world
    script = Script(session, backend)
    start_running(session, backend, conn, script)
    session.tell(CancelTurn())
    assert conn.wait_reply(1).result == {"stopReason": "cancelled"}
    stop = backend.wait_call("session/stop")
    assert stop.params == {"sessionId": "b-1"}
    # Leftovers of the stopped turn never reach the client.
    script.push(script.text("t1", "LEFTOVER"), script.event("turn.completed", "t1", resultType="cancelled"))
    prompt(session, conn, 2)  # barrier: the next prompt's send comes after the leftovers
    backend.wait_call("session/send", count=2)
    assert "LEFTOVER" not in conn.text()
    assert len(conn.replies()) == 1


def test_cancel_while_the_send_is_in_flight_stops_the_turn_it_started(world):
    session, backend, conn, _ = world
    script = Script(session, backend)
    prompt(session, conn, 1)
    script.go_live()
    send = backend.wait_call("session/send")
    session.tell(CancelTurn())
    assert conn.wait_reply(1).result == {"stopReason": "cancelled"}
    assert backend.calls("session/stop") == []
    script.reply(send, {"accepted": True})
    backend.wait_call("session/stop")


def test_a_busy_backend_is_retried_until_it_accepts(world):
    session, backend, conn, _ = world
    script = Script(session, backend)
    prompt(session, conn, 1)
    script.go_live()
    first = backend.wait_call("session/send")
    script.reply(first, error={"code": 1308, "message": "prompt is running"})
    second = backend.wait_call("session/send", count=2)
    script.reply(second, {"accepted": True})
    script.push(script.event("turn.started", "t1"), script.event("turn.completed", "t1", resultType="success"))
    assert conn.wait_reply(1).result["stopReason"] == "end_turn"


def test_a_leftover_turn_completed_of_a_stopped_turn_does_not_end_the_next_prompt(world):
    session, backend, conn, _ = world
    script = Script(session, backend)
    start_running(session, backend, conn, script, request_id=1, turn_id="old")
    prompt(session, conn, 2)  # preempts
    assert conn.wait_reply(1).result["stopReason"] == "cancelled"
    send = backend.wait_call("session/send", count=2)
    script.reply(send, {"accepted": True})
    script.push(script.event("turn.completed", "old", resultType="cancelled"),  # before ours started
                script.event("turn.started", "new"),
                script.text("old", "LEFTOVER"),
                script.event("turn.completed", "old", resultType="cancelled"),  # after ours started
                script.text("new", "B"))
    conn.wait_for(lambda: "B" in conn.text())
    assert [r.request_id for r in conn.replies()] == [1]  # prompt 2 still running
    assert "LEFTOVER" not in conn.text()
    script.push(script.event("turn.completed", "new", resultType="success"))
    assert conn.wait_reply(2).result["stopReason"] == "end_turn"


def test_a_seq_gap_is_fetched_and_applied_in_order_duplicates_dropped(world):
    session, backend, conn, _ = world
    script = Script(session, backend)
    prompt(session, conn, 1)
    script.go_live()
    script.reply(backend.wait_call("session/send"), {"accepted": True})
    e1 = script.event("turn.started", "t")
    e2 = script.text("t", "one ")
    e3 = script.text("t", "two ")
    e4 = script.text("t", "three")
    script.push(e1, e2, e2, e4)  # duplicate e2, e3 missing
    gap = backend.wait_call("session/subscribe", count=2)
    assert gap.params["afterSeq"] == 2
    assert conn.text() == "one "
    script.reply(gap, {"eventSeq": 4, "events": [e2, e3, e4]})
    conn.wait_for(lambda: conn.text() == "one two three")
    script.push(e4, script.event("turn.completed", "t", resultType="success"))
    assert conn.wait_reply(1).result["stopReason"] == "end_turn"
    assert conn.text() == "one two three"


def test_a_gap_nobody_fills_is_skipped_after_the_bound(world):
    session, backend, conn, _ = world
    script = Script(session, backend)
    prompt(session, conn, 1)
    script.go_live()
    script.reply(backend.wait_call("session/send"), {"accepted": True})
    script.push(script.event("turn.started", "t"), script.event("model.streaming", "t", seq=5,
                                                                kind="text_delta", delta="late"))
    backend.wait_call("session/subscribe", count=2)  # asked once; never answered
    conn.wait_for(lambda: conn.text() == "late", timeout=2)


def test_backend_loss_fails_the_running_prompt(world):
    session, backend, conn, _ = world
    script = Script(session, backend)
    start_running(session, backend, conn, script)
    session.tell(BackendLost("ZCode backend exited (code -9)"))
    reply = conn.wait_reply(1)
    assert reply.error["code"] == -32603 and "exited" in reply.error["message"]


def test_a_chinese_session_says_in_chinese_that_the_backend_was_lost_during_the_turn(chinese_world):
    """Issue 29: the bridge's own words follow the session's language (the Backend words its death in it)."""
    session, backend, conn, _ = chinese_world
    script = Script(session, backend)
    start_running(session, backend, conn, script)
    session.tell(BackendLost("ZCode 后端已退出（退出码 -9）"))
    reply = conn.wait_reply(1)
    assert reply.error["message"] == "ZCode 后端已退出（退出码 -9）（发生在本轮对话中）"


def test_background_notification_turns_never_reach_the_prompt(world):
    session, backend, conn, _ = world
    script = Script(session, backend)
    start_running(session, backend, conn, script, turn_id="mine")
    script.push(script.event("turn.started", "bg", inputSource="background_task"),
                script.text("bg", "BACKGROUND"), script.event("turn.completed", "bg", resultType="success"),
                script.text("mine", "b"))
    conn.wait_for(lambda: "b" in conn.text().replace("BACKGROUND", "") and "BACKGROUND" in conn.text())
    assert conn.replies() == []  # the background turn's end did not end the prompt
    chunks = [u for u in conn.updates() if u["sessionUpdate"] == "agent_message_chunk"]
    background = [u["messageId"] for u in chunks if u["content"]["text"] == "BACKGROUND"]
    mine = {u["messageId"] for u in chunks if u["content"]["text"] in ("a", "b")}
    assert len(background) == 1 and background[0] not in mine
    script.push(script.event("turn.completed", "mine", resultType="success"))
    assert conn.wait_reply(1).result["stopReason"] == "end_turn"


def test_a_background_bash_launch_card_is_reused_by_its_task_and_others_get_bg_cards(world):
    session, backend, conn, _ = world
    script = Script(session, backend)
    start_running(session, backend, conn, script, turn_id="t")
    launch = {"command": "make", "run_in_background": True}
    script.push(
        script.event("tool.updated", "t", kind="scheduled", toolCallId="L", toolName="Bash", input=launch),
        script.event("tool.updated", "t", kind="result", toolCallId="L", result="Command running in background"),
        script.event("session.updated", taskId="exec_1", toolCallId="L", toolName="Bash", status="running",
                     outputTail="x\n"),
        script.event("session.updated", taskId="exec_2", toolCallId="unknown", toolName="Bash",
                     status="running", description="other"),
        script.event("turn.completed", "t", resultType="success"),
        script.event("session.updated", taskId="exec_1", toolCallId="L", status="completed", outputTail="x\ny\n"),
    )
    conn.wait_for(lambda: any(u.get("status") == "completed" and u.get("toolCallId") == "L" for u in conn.updates()))
    cards = [u["toolCallId"] for u in conn.updates() if u["sessionUpdate"] == "tool_call"]
    assert cards == ["L", "bg_exec_2"]  # the task reused L; the unknown launch fell back
    finals = [u for u in conn.updates() if u.get("toolCallId") == "L" and u.get("status") in ("completed", "failed")]
    assert len(finals) == 1
    outputs = [u["content"][0]["content"]["text"] for u in conn.updates()
               if u.get("toolCallId") == "L" and u.get("content") and u["content"][0]["type"] == "content"]
    assert outputs[-2:] == ["x\n", "x\ny\n"]  # a plain client sees the current tail as content


def test_a_second_hole_after_a_fill_is_asked_for_not_skipped(world):
    session, backend, conn, _ = world
    script = Script(session, backend)
    prompt(session, conn, 1)
    script.go_live()
    script.reply(backend.wait_call("session/send"), {"accepted": True})
    events = [script.event("turn.started", "t")] + [script.text("t", f"{n} ") for n in range(1, 7)]
    script.push(events[0], events[1], events[3], events[4], events[6])  # holes at seq 3 and 6
    first_gap = backend.wait_call("session/subscribe", count=2)
    assert first_gap.params["afterSeq"] == 2
    script.reply(first_gap, {"eventSeq": 5, "events": events[2:5]})  # fills 3 (4, 5 again), not 6
    second_gap = backend.wait_call("session/subscribe", count=3)
    assert second_gap.params["afterSeq"] == 5
    script.reply(second_gap, {"eventSeq": 7, "events": events[5:]})
    conn.wait_for(lambda: conn.text() == "1 2 3 4 5 6 ")


def test_a_send_merged_into_a_running_turn_follows_that_turn(world):
    session, backend, conn, _ = world
    script = Script(session, backend)
    prompt(session, conn, 1)
    script.go_live()
    script.reply(backend.wait_call("session/send"), {"accepted": True})
    script.push(script.event("turn.steerQueued", "running"), script.text("running", "merged"),
                script.event("turn.completed", "running", resultType="success"))
    assert conn.wait_reply(1).result["stopReason"] == "end_turn"
    assert "merged into the turn" in conn.text() and conn.text().endswith("merged")


def test_a_create_answered_after_close_does_not_revive_the_session(world):
    session, backend, conn, _ = world
    script = Script(session, backend)
    prompt(session, conn, 1)
    create = backend.wait_call("session/create")
    session.ask(Teardown())
    assert conn.wait_reply(1).result == {"stopReason": "cancelled"}
    script.reply(create, {"session": {"sessionId": "b-1"}})
    prompt(session, conn, 2)  # barrier: answered as closed, after the late create was handled
    assert "closed" in conn.wait_reply(2).error["message"]
    assert backend.calls("session/subscribe") == [] and backend.of("RegisterRoute") == []


def test_a_create_in_flight_at_teardown_settles_to_the_engines_id_for_the_store(world):
    """A first run makes its session at once to learn the models; an editor that leaves before that
    create answers must not orphan the engine's session (the next run would make a second one)."""
    session, backend, conn, _ = world
    script = Script(session, backend)
    prompt(session, conn, 1)
    create = backend.wait_call("session/create")
    settled = session.ask(Teardown())
    assert not settled.ready()
    models = {"available": [{"providerId": "zai", "modelId": "glm-5", "name": "GLM-5"}]}  # the seed's shape
    script.reply(create, {"session": {"sessionId": "b-1"}, "settings": {"model": models}})
    backend_id, catalog = settled.get(timeout=5)
    assert backend_id == "b-1" and catalog is not None  # the next run offers the models too
    assert backend.of("RegisterRoute") == []  # closed all the same: only its id is kept


def test_a_create_that_fails_after_teardown_settles_to_nothing(world):
    session, backend, conn, _ = world
    script = Script(session, backend)
    prompt(session, conn, 1)
    create = backend.wait_call("session/create")
    settled = session.ask(Teardown())
    script.reply(create, error={"code": -32603, "message": "boom"})
    assert settled.get(timeout=5) is None


def test_a_teardown_with_no_create_in_flight_has_nothing_to_settle(world):
    session, *_ = world  # never used: a placeholder, no create sent
    assert session.ask(Teardown()) is None


def test_after_a_stop_fails_the_session_resumes_only_once_its_close_is_answered(world):
    """A resume sent before the close's answer could be overtaken by the close (a backend handles
    requests concurrently): the session would be closed under a bridge that believes it live."""
    session, backend, conn, _ = world
    script = Script(session, backend)
    start_running(session, backend, conn, script)
    session.tell(StopFailed(1))  # the turn ran on past its stop's fallback
    close = backend.wait_call("session/close")
    prompt(session, conn, 2)  # a use while the close is in flight
    assert session.ask(GoDormant()) is None  # barrier: the prompt has been handled (and it is not idle)
    assert backend.calls("session/resume") == []
    script.reply(close, {"closed": True})
    resume = backend.wait_call("session/resume")
    script.reply(resume, {"session": {"sessionId": "b-1"}})
    subscribe = backend.wait_call("session/subscribe", count=2)
    script.reply(subscribe, {"eventSeq": script.seq})
    backend.wait_call("session/send", count=2)  # the waiting prompt runs on the resumed session


# -- why a prompt waits on the busy lock (docs/decisions.md, "A turn that ignores stop") ----------

BUSY = {"code": -32010, "message": "A prompt is already running for this session"}


def test_a_long_busy_wait_with_no_known_cause_is_explained(world):
    session, backend, conn, _ = world
    script = Script(session, backend)
    prompt(session, conn, 1)
    script.go_live()
    count = 0
    while "busy with another turn" not in conn.text():  # the engine stays busy until the notice shows
        count += 1
        assert count < 1000, "no notice after a long busy wait"
        script.reply(backend.wait_call("session/send", count=count), error=BUSY)
    script.reply(backend.wait_call("session/send", count=count + 1), {"accepted": True})
    script.push(script.event("turn.started", "t1"), script.event("turn.completed", "t1", resultType="success"))
    assert conn.wait_reply(1).result["stopReason"] == "end_turn"
    assert conn.text().count("busy with another turn") == 1  # said once


def test_a_prompt_behind_a_turn_that_ignored_its_stop_says_so_at_once(world):
    session, backend, conn, _ = world
    script = Script(session, backend)
    start_running(session, backend, conn, script, request_id=1, turn_id="stuck")
    session.tell(StopFailed(99, "stuck"))  # the fallback for the stopped turn
    close = backend.wait_call("session/close")
    script.reply(close, error={"code": -32601, "message": "Method not found: session/close"})
    conn.wait_for(lambda: "ignored the stop" in conn.text())
    script.reply(backend.wait_call("session/resume"), {"session": {"sessionId": "b-1"}})
    script.reply(backend.wait_call("session/subscribe", count=2), {"eventSeq": 1})
    before = conn.text().count("ignored the stop")
    prompt(session, conn, 2)  # preempts the (already settled) first prompt's turn, if any
    send = backend.wait_call("session/send", count=2)
    script.reply(send, error=BUSY)
    conn.wait_for(lambda: conn.text().count("ignored the stop") > before)  # at the first busy answer
    script.push(script.event("turn.completed", "stuck", resultType="success"))
    conn.wait_for(lambda: "takes prompts again" in conn.text())

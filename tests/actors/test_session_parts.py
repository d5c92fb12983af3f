"""The Session's parts, each without an actor: lifecycle, sequencer, routing, history,
settings and controls (with a fake port)."""

from __future__ import annotations

from typing import Any

import pytest

from zcode_acp.config.settings import Config

from zcode_acp.actors.session.controls import Controls
from zcode_acp.actors.session.extensions.handler import ExtensionRequest
from zcode_acp.actors.session.extensions.table import HANDLERS
from zcode_acp.actors.session.legacy.path import LegacyPath
from zcode_acp.actors.session.history import POLL_LIMIT, HistoryRead
from zcode_acp.actors.session.lifecycle import Lifecycle, Phase, Step
from zcode_acp.actors.session.routing import EventRouter, Routed
from zcode_acp.actors.session.sequencer import Sequencer
from zcode_acp.actors.session.settings import Settings
from zcode_acp.protocol import commands
from zcode_acp.protocol.errors import RpcError
from zcode_acp.protocol.session_config import SessionSettings


# -- lifecycle -------------------------------------------------------------------------------------

def test_racing_uses_make_one_create_and_all_run_once_live():
    life = Lifecycle("s", materialized=False)
    ran: list[str] = []
    assert life.when_live(lambda: ran.append("a"), pytest.fail) is Step.CREATE
    assert life.when_live(lambda: ran.append("b"), pytest.fail) is None  # waits for the same create
    life.materialized()
    assert life.subscribing() and ran == []
    life.became_live()
    assert ran == ["a", "b"] and life.live
    assert life.when_live(lambda: ran.append("c"), pytest.fail) is None and ran[-1] == "c"


def test_a_lost_session_resumes_and_a_failed_resume_fails_its_waiters_only():
    life = Lifecycle("s", materialized=True)
    errors: list[RpcError] = []
    assert life.when_live(pytest.fail, errors.append) is Step.RESUME
    life.step_failed(Step.RESUME, RpcError(-32603, "no"))
    assert life.phase is Phase.LOST and [e.message for e in errors] == ["no"]
    assert life.when_live(pytest.fail, errors.append) is Step.RESUME  # the next use tries again


def test_lost_reports_whether_a_route_was_registered():
    life = Lifecycle("s", materialized=False)
    life.when_live(lambda: None, pytest.fail)
    assert life.lost() is False and life.phase is Phase.PLACEHOLDER  # create in flight: start over
    life.when_live(lambda: None, pytest.fail)
    life.materialized()
    life.became_live()
    assert life.lost() is True and life.phase is Phase.LOST


def test_uses_during_a_close_wait_for_it_and_the_resume_comes_after():
    life = Lifecycle("s", materialized=True)
    life.when_live(lambda: None, pytest.fail)
    life.materialized()
    life.became_live()
    life.lost()
    life.detaching()
    ran: list[str] = []
    assert life.when_live(lambda: ran.append("use"), pytest.fail) is None  # no resume while the close is out
    life.detached()
    assert life.phase is Phase.LOST and ran == []
    assert life.when_live(lambda: ran.append("next"), pytest.fail) is Step.RESUME
    life.materialized()
    life.became_live()
    assert ran == ["use", "next"]


def test_closed_is_final_and_refuses_every_use():
    life = Lifecycle("s", materialized=True)
    errors: list[RpcError] = []
    life.when_live(pytest.fail, errors.append)
    life.close()
    life.fail_waiters(life.closed_error())
    assert life.when_live(pytest.fail, errors.append) is None
    assert len(errors) == 2 and all("closed" in e.message for e in errors)


# -- sequencer ------------------------------------------------------------------------------------

def ev(seq: int | None, kind: str = "model.streaming") -> dict[str, Any]:
    event: dict[str, Any] = {"type": kind, "payload": {}}
    if seq is not None:
        event["seq"] = seq
    return event


def seqs(events: list[dict[str, Any]]) -> list[Any]:
    return [e.get("seq") for e in events]


def test_in_order_events_pass_and_duplicates_are_dropped():
    sequencer = Sequencer()
    ready = sequencer.accept([ev(1), ev(2), ev(2), ev(1), ev(None), ev(3)])
    assert seqs(ready.events) == [1, 2, None, 3] and ready.gap_after is None


def test_a_gap_is_fetched_once_and_filled_in_order():
    sequencer = Sequencer()
    ready = sequencer.accept([ev(1), ev(4), ev(5)])
    assert seqs(ready.events) == [1] and ready.gap_after == 1
    assert sequencer.accept([ev(6)]).gap_after is None  # already being fetched
    ready = sequencer.gap_filled([ev(2), ev(3)])
    assert seqs(ready.events) == [2, 3, 4, 5, 6] and ready.gap_after is None


def test_a_hole_the_backend_cannot_fill_is_skipped():
    sequencer = Sequencer()
    sequencer.accept([ev(1), ev(5)])
    ready = sequencer.gap_filled([])  # nothing new
    assert seqs(ready.events) == [5] and ready.skipped == (2, 4)


def test_a_gap_that_waits_too_long_is_skipped_but_only_if_still_the_same():
    sequencer = Sequencer()
    sequencer.accept([ev(1), ev(3)])
    assert sequencer.gap_timed_out(0).events == []  # an older gap: nothing to do
    assert seqs(sequencer.gap_timed_out(1).events) == [3]


def test_events_held_before_subscribing_start_after_the_subscription_seq():
    sequencer = Sequencer()
    sequencer.hold([ev(3), ev(4), ev(6)])
    ready = sequencer.start(3)
    assert seqs(ready.events) == [4] and ready.gap_after == 4


# -- routing --------------------------------------------------------------------------------------

def routed(router: EventRouter, *events: dict[str, Any], has_turn: bool = True) -> Routed:
    out = Routed()
    for event in events:
        router.route(event, out, has_turn, terminal_output=True)
    return out


def test_turn_events_go_to_the_turn_and_usage_between_turns_to_the_session():
    router = EventRouter()
    out = routed(router, ev(1), {"type": "turn.terminal", "payload": {}})
    assert len(out.turn) == 1 and out.tasks == [] and out.session == []
    usage = {"type": "session.updated", "payload": {"usage": {"contextTokens": 10, "contextWindow": 100}}}
    out = routed(router, usage, has_turn=False)
    assert out.turn == [] and len(out.session) <= 1


def test_background_turns_and_task_status_go_to_background_tasks():
    router = EventRouter()
    start = {"type": "turn.started", "turnId": "bg", "payload": {"inputSource": "background_task"}}
    text = {"type": "model.streaming", "turnId": "bg", "payload": {}}
    end = {"type": "turn.completed", "turnId": "bg", "payload": {}}
    out = routed(router, start, text, end, text)
    assert [e["type"] for e, _ in out.tasks] == ["turn.started", "model.streaming", "turn.completed"]
    assert len(out.turn) == 1  # after its end, the id is no longer a background turn's


def test_a_background_bash_launch_card_is_remembered_for_its_task():
    router = EventRouter()
    call = {"type": "tool.updated", "payload": {"toolCallId": "c1", "toolName": "Bash",
                                                "input": {"command": "x", "run_in_background": True}}}
    result = {"type": "tool.updated", "payload": {"toolCallId": "c1", "kind": "result", "result": {"ok": True}}}
    status = {"type": "session.updated", "payload": {"taskId": "t", "toolCallId": "c1", "status": "completed"}}
    out = routed(router, call, result, status)
    assert out.tasks == [(status, True)] and router.launch_cards == {}


# -- history --------------------------------------------------------------------------------------

def test_one_history_read_serves_every_load_and_rereads_while_it_grows():
    history = HistoryRead()
    history.resumed()
    assert history.want("load-1") is True
    assert history.want("load-2") is False
    history.read_sent()
    assert history.read([1, 2]) is True  # first look: read again to see whether it grows
    history.read_sent()
    assert history.read([1, 2]) is False  # stable
    assert history.finish() == ["load-1", "load-2"] and not history.in_flight


def test_a_history_that_keeps_growing_is_read_a_bounded_number_of_times():
    history = HistoryRead()
    history.resumed()
    history.want("load")
    reads = 0
    while True:
        history.read_sent()
        reads += 1
        if not history.read(list(range(reads))):
            break
    assert reads == POLL_LIMIT


def test_only_the_first_load_after_a_resume_waits_for_the_history_to_settle():
    history = HistoryRead()
    history.resumed()
    history.want("first")
    history.read_sent()
    assert history.read([1]) is True
    history.read_sent()
    assert history.read([1]) is False
    history.finish()
    history.want("warm")  # live since: one read is the history
    history.read_sent()
    assert history.read([1, 2]) is False
    assert history.finish() == ["warm"]


# -- settings -------------------------------------------------------------------------------------

def test_a_settings_change_announces_what_changed_only():
    settings = Settings(SessionSettings(mode="yolo"))
    assert settings.change(SessionSettings(mode="yolo")) == []
    updates = settings.change(SessionSettings(mode="plan"))
    assert [u["sessionUpdate"] for u in updates] == ["current_mode_update", "config_option_update"]


# -- controls ---------------------------------------------------------------------------------------

class FakePort:
    compact_timeout = 99.0
    speaks_v4 = False  # the seed's engine unless a test says otherwise
    backend_session_id = "b-1"

    def __init__(self) -> None:
        self.settings = Settings(SessionSettings(mode="yolo"))
        self.calls: list[tuple[str, dict[str, Any], Any, Any, Any]] = []
        self.delivered: list[dict[str, Any]] = []
        self.started: list[int] = []
        self.cancelled: list[str] = []
        self.forks: list[str] = []
        self.config = Config()
        self.path = LegacyPath(self)  # what differs between the engine paths: the legacy one here

    def when_live(self, action, on_error):
        action()

    def request(self, method, params, on_result, on_error, timeout=None):
        self.calls.append((method, params, on_result, on_error, timeout))

    def deliver(self, updates):
        self.delivered.extend(updates)

    def fork_made(self, backend_session_id, reply_to, request_id, as_command):
        self.forks.append(backend_session_id)

    def task_cancelled(self, task_id):
        self.cancelled.append(task_id)

    def start_turns(self, keys):
        self.started.extend(keys)


def extend(controls: Controls, name: str, params: dict[str, Any], on_result: Any, on_error: Any,
           conn: Any = None, request_id: Any = None) -> None:
    """An extension method as the Session runs it on the legacy path: its handler, its params read once."""
    handler = HANDLERS[name]
    handler.on_legacy(handler.validate(params), ExtensionRequest(name, controls, conn, request_id, on_result,
                                                                 on_error, "en"))

def test_a_mode_change_is_announced_before_its_answer():
    port = FakePort()
    events: list[str] = []
    port.deliver = lambda updates: events.extend(u["sessionUpdate"] for u in updates)  # type: ignore[method-assign]
    Controls(port).set_setting("mode", "plan", lambda result: events.append("answer"), pytest.fail)
    method, params, on_result, _, _ = port.calls[0]
    assert (method, params) == ("session/setMode", {"mode": "plan"})
    on_result({})
    assert events == ["current_mode_update", "config_option_update", "answer"]


def test_a_compaction_holds_prompts_until_it_is_over():
    port = FakePort()
    controls = Controls(port)
    answers: list[Any] = []
    extend(controls, "session/compact", {}, answers.append, pytest.fail)
    method, _, on_result, _, timeout = port.calls[0]
    assert method == "session/compact" and timeout == 99.0
    assert controls.hold_turn(7) is True
    on_result({"response": "done"})
    assert port.started == [7] and answers == [{"response": "done"}] and controls.hold_turn(8) is False


def test_cancelling_a_background_task_marks_its_card_on_success():
    port = FakePort()
    extend(Controls(port), "session/cancelBackgroundTask", {"sessionId": "s", "taskId": "t9"}, lambda r: None,
           pytest.fail)
    assert port.calls[0][1] == {"taskId": "t9"}
    port.calls[0][2]({})
    assert port.cancelled == ["t9"]


def test_slash_mode_without_argument_says_the_current_one_and_the_others():
    port = FakePort()
    answered: list[Any] = []
    Controls(port).command(commands.Command("mode", ""), None, None, answered.append)
    assert port.delivered[0]["content"]["text"] == "Current mode: yolo\nAvailable: plan, build, edit, yolo, auto"
    assert answered == [{"stopReason": "end_turn"}]


def test_a_fork_hands_the_new_backend_session_to_the_port():
    port = FakePort()
    extend(Controls(port), "session/fork", {}, pytest.fail, pytest.fail, "conn", 4)
    port.calls[0][2]({"forkedSessionId": "b-2"})
    assert port.forks == ["b-2"]


@pytest.mark.parametrize("name,params,field", [
    ("session/steer", {}, "content"),
    ("session/cancelBackgroundTask", {"taskId": 3}, "taskId"),
    ("session/setMode", {"mode": "nope"}, "modeId"),
    ("session/goal", {"action": "set"}, "objective"),
])
def test_the_extension_table_refuses_bad_params_naming_the_field(name, params, field):
    with pytest.raises(RpcError) as caught:
        HANDLERS[name].validate(params)
    assert caught.value.code == -32602 and field in caught.value.message


# -- compaction from request to the engine's word; a refused task cancel ------------------------
# today's answer {response: "", snapshot, compact: {state, operationId}} then a state.updated reason;
# the seed's {compacted: true}, written after its state.updated.

ACCEPTED = {"response": "", "snapshot": {}, "compact": {"state": "accepted", "operationId": "op1"}}


def compacting(port: FakePort) -> tuple[Controls, list[Any], list[Any]]:
    controls, answers, errors = Controls(port), [], []
    extend(controls, "session/compact", {}, answers.append, errors.append)
    return controls, answers, errors


def test_an_accepted_compaction_holds_prompts_until_the_engine_says_it_is_over():
    port = FakePort()
    controls, answers, errors = compacting(port)
    port.calls[0][2](ACCEPTED)  # accepted: the engine compacts on
    assert controls.hold_turn(7) is True and answers == [] and port.started == []
    assert "compaction to finish" in port.delivered[-1]["content"]["text"]  # the user reads why it waits
    controls.compaction_ended("prompt_started")  # another reason: not the end
    assert answers == []
    controls.compaction_ended("session_compacted")
    assert port.started == [7] and errors == []
    assert answers == [{**ACCEPTED, "compact": {"state": "completed", "operationId": "op1"}}]
    assert controls.hold_turn(8) is False


def test_a_failed_compaction_is_an_error_and_a_cancelled_one_says_so():
    port = FakePort()
    controls, answers, errors = compacting(port)
    port.calls[0][2](ACCEPTED)
    controls.compaction_ended("session_compact_failed")
    assert answers == [] and "compaction failed" in errors[0].message
    port = FakePort()
    controls, answers, errors = compacting(port)
    port.calls[0][2](ACCEPTED)
    controls.compaction_ended("session_compact_cancelled")
    assert answers[0]["compact"]["state"] == "cancelled" and errors == []


def test_the_seeds_engine_ends_before_it_answers():
    port = FakePort()
    controls, answers, _ = compacting(port)
    controls.compaction_ended("session_compacted")  # written before the answer
    assert answers == [] and controls.hold_turn(3) is True
    port.calls[0][2]({"compacted": True})
    assert answers == [{"compacted": True}] and port.started == [3]


def test_a_lost_backend_ends_the_wait_once():
    port = FakePort()
    controls, answers, errors = compacting(port)
    port.calls[0][2](ACCEPTED)
    controls.hold_turn(5)
    controls.compaction_lost({"message": "backend exited during the compaction"})
    assert [e.message for e in errors] == ["ZCode backend error on session/compact: backend exited during the "
                                           "compaction"] and port.started == [5]
    controls.compaction_ended("session_compacted")  # too late: answered already
    assert answers == [] and len(errors) == 1


def test_a_task_the_engine_did_not_cancel_keeps_its_card():
    port = FakePort()
    answers: list[Any] = []
    extend(Controls(port), "session/cancelBackgroundTask", {"sessionId": "s", "taskId": "t9"}, answers.append,
           pytest.fail)
    port.calls[0][2]({"cancelled": False})
    assert port.cancelled == [] and answers == [{"cancelled": False}]


def test_a_second_compaction_joins_the_running_one_and_both_are_answered_once():
    port = FakePort()
    controls, answers, _ = compacting(port)
    port.calls[0][2](ACCEPTED)
    second: list[Any] = []
    extend(controls, "session/compact", {}, second.append, pytest.fail)
    assert len(port.calls) == 1  # not sent again
    controls.compaction_ended("session_compacted")
    controls.compaction_ended("session_compacted")
    assert len(answers) == 1 and len(second) == 1 and second[0]["compact"]["state"] == "completed"


class RecordingPath:
    """An EnginePath that records what Controls ask of it (Controls know no path by name)."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, Any]] = []

    def set_setting(self, config_id, value, done, fail):
        self.asked.append(("set_setting", (config_id, value)))
        done({})

    def compact(self, call, answered, failed, timeout):
        self.asked.append(("compact", timeout))

    def fork(self, call, forked, forked_unused, on_error):
        self.asked.append(("fork", call.method))
        forked({"forkedSessionId": "b-9"})

    def rename(self, title, on_done, on_error):
        self.asked.append(("rename", title))
        on_done()
        return True


def test_what_differs_between_the_engine_paths_controls_ask_of_the_ports_path():
    port = FakePort()
    port.path = RecordingPath()  # type: ignore[assignment]
    renamed: list[str] = []
    port.renamed = lambda title, kept=False: renamed.append(title)  # type: ignore[attr-defined]
    controls = Controls(port)
    answers: list[Any] = []
    controls.set_setting("mode", "plan", answers.append, pytest.fail)
    extend(controls, "session/compact", {}, answers.append, pytest.fail)
    extend(controls, "session/fork", {}, pytest.fail, pytest.fail, "conn", 4)
    controls.rename("Named", answers.append, pytest.fail)
    assert port.path.asked == [("set_setting", ("mode", "plan")), ("compact", 99.0), ("fork", "session/fork"),
                               ("rename", "Named")]
    assert port.calls == [] and port.forks == ["b-9"] and renamed == ["Named"]
    assert answers == [{}, {"title": "Named"}]  # the compaction is answered when the engine says it is over

"""A Session on the v4 data plane, against the simulator's own plane (``sim/v4``).

The backend is a recording fake; each call the Session makes is answered by a real
``DataPlane`` (its acks and the frames it writes, in the order it writes them: the ack
first), so the frames the Session reads are the simulator's, not ones this test made
up. The engine behind the plane is ``tests/sim/v4_fakes.py``'s: legacy events as the
cli016 dialect emits them.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from zcode_acp.config.settings import Config, SettingError
from zcode_acp.actors.client_connection import ClientConnection
from zcode_acp.actors.messages import (Attach, BackendLost, BackendRequest, CancelPromptRequest, CancelTurn, Extension, Prompt,
                                      V4Frames, V4Resolve)
from zcode_acp.actors.session.actor import Session
from zcode_acp.protocol import framing
from zcode_acp.protocol.content import BackendPrompt
from zcode_acp.protocol.session_config import SessionSettings
from zcode_acp.sim.v4.faults import Faults
from zcode_acp.sim.v4.plane import DataPlane
from tests.actors.fakes import Probe
from tests.schema import assert_valid_update
from tests.sim.v4_fakes import WORKSPACE, Clock, Engine, FakePort

CONFIG = replace(Config(), silence_probe=0, engine_api="v4")


class PlaneBackend:
    """Answers the Session's backend calls through a real simulator data plane."""

    def __init__(self, session: Any, probe: Probe, faults: str = "") -> None:
        self.session, self.probe = session, probe
        self.port = FakePort()
        self.written: list[dict[str, Any]] = []
        self.plane = DataPlane(self.port, self.written.append, clock=Clock(), faults=Faults(faults))
        self.served: dict[str, int] = {}
        self.engine: Engine | None = None

    def serve(self, method: str) -> Any:
        """Answer the next call of ``method`` (waiting for it), then hand over the frames it caused."""
        count = self.served.get(method, 0) + 1
        call = self.probe.wait_call(method, count)
        self.served[method] = count
        answers: list[Any] = []
        self.plane.dispatch(method, json.loads(json.dumps(call.params)), lambda r, e: answers.append((r, e)))
        assert len(answers) == 1
        result, v4error = answers[0]
        error = None if v4error is None else {"code": v4error.code, "message": v4error.message}
        if call.params.get("type") == "createSession" and result["status"] == "accepted":
            self.engine = Engine(self.plane, result["result"]["sessionId"])
        call.reply_to.tell(call.reply(json.loads(json.dumps(result)), error))
        self.flush()
        return call

    def flush(self) -> None:
        if self.written:
            frames = [json.loads(json.dumps(frame["params"])) for frame in self.written]  # through the pipe
            self.written.clear()
            self.session.tell(V4Frames(frames))

    def live(self) -> Engine:
        create = self.serve("v4/command")
        assert create.params["type"] == "createSession" and create.params["payload"] == {"workspaceId": WORKSPACE}
        # The catalog read (docs/decisions.md, "The v4 catalog"): a resume of the session just made.
        read = self.probe.wait_call("session/resume")
        assert read.params["sessionId"] == self.engine.session_id
        read.reply_to.tell(read.reply({"settings": {"mode": {"current": "build"}}}, None))
        config = self.serve("v4/conversation/subscribe")  # the workspace's catalog and commands first
        assert config.params["topic"] == f"workspace-config/{WORKSPACE}"
        conversation = self.serve("v4/conversation/subscribe")
        assert conversation.params["topic"].startswith("conversation/")
        assert self.engine is not None
        return self.engine

    def play(self, *steps: Any) -> None:
        for step in steps:
            step()
        self.flush()


@pytest.fixture
def router():
    probe = Probe()
    yield probe
    probe.stop()


# The engine's own default mode: a session made in it needs no opening switch (v4/mode.py).
ENGINE_MODE = SessionSettings(mode="build")


@pytest.fixture
def world(router):
    backend, conn, supervisor = Probe(), Probe(), Probe()
    session = Session.start(
        session_id="acp-1", cwd=WORKSPACE, mcp_servers=[], settings=ENGINE_MODE, backend=backend.ref,
        router=router.ref, supervisor=supervisor.ref, clients=[conn.ref], capabilities={}, config=CONFIG)
    yield session, backend, conn
    session.stop()
    for probe in (backend, conn, supervisor):
        probe.stop()


def prompt(session: Any, conn: Probe, request_id: Any, text: str = "hi") -> None:
    session.tell(Prompt(conn.ref, request_id, BackendPrompt(text)))


def test_setting_chooses_the_path_and_refuses_other_words():
    assert Config.from_env({}).engine_api == "legacy"
    assert Config.from_env({"ZCODE_ACP_ENGINE_API": "v4"}).engine_api == "v4"
    with pytest.raises(SettingError):
        Config.from_env({"ZCODE_ACP_ENGINE_API": "v5"})


def test_prompt_streams_deltas_from_the_topic_and_answers_when_control_ends(world):
    session, backend, conn = world
    plane = PlaneBackend(session, backend)
    prompt(session, conn, 1, "say hello")
    engine = plane.live()
    send = plane.serve("v4/command")
    assert send.params["type"] == "sendText" and send.params["payload"] == {"text": "say hello"}
    # createSession, the workspace config and conversation topics, sendText: no legacy session method
    # but the catalog read (a resume of the resident session: a read, docs/decisions.md);
    # runtime/capabilities is the engine's, read once (whether plan mode works), and the interaction
    # preferences are the engine's workspace setting, told for every session opened (questions wait)
    assert [m.method for m in backend.of("BackendCall")] == [
        "v4/command", "session/resume", "workspace/updateInteractionPreferences", "runtime/capabilities",
        "v4/conversation/subscribe", "v4/conversation/subscribe", "v4/command"]
    assert plane.port.named("start_turn")
    plane.play(lambda: engine.start("say hello"), lambda: engine.text("hello there world"))
    conn.wait_for(lambda: conn.text() == "hello there world ")
    assert conn.replies() == []  # the turn still runs
    plane.play(engine.complete)
    reply = conn.wait_reply(1)
    assert reply.result["stopReason"] == "end_turn" and reply.error is None
    # the turn's tokens, from the engine's cumulative usage (10 in, 2 of them cached reads, 5 out)
    assert reply.result["usage"] == {"inputTokens": 8, "outputTokens": 5, "totalTokens": 15, "thoughtTokens": 0,
                                     "cachedReadTokens": 2, "cachedWriteTokens": 0}
    chunks = [u for u in conn.updates() if u["sessionUpdate"] == "agent_message_chunk"]
    assert [c["content"]["text"] for c in chunks] == ["hello ", "there ", "world "]  # deltas, not resends
    for update in conn.updates():
        assert_valid_update(update)


def test_a_gap_is_resynced_and_nothing_is_lost(world):
    session, backend, conn = world
    plane = PlaneBackend(session, backend, faults="gap")
    prompt(session, conn, 1)
    engine = plane.live()
    plane.serve("v4/command")
    plane.play(engine.start, lambda: engine.text("one two three"))
    plane.serve("v4/conversation/resync")  # the frame that went missing made a gap
    plane.play(engine.complete)
    assert conn.wait_reply(1).result["stopReason"] == "end_turn"
    assert conn.text() == "one two three "


def test_cancel_sends_the_v4_stop_and_the_turn_answers_cancelled(world):
    session, backend, conn = world
    plane = PlaneBackend(session, backend)
    prompt(session, conn, 1)
    engine = plane.live()
    plane.serve("v4/command")
    plane.play(engine.start, lambda: engine.text("working"))
    conn.wait_for(lambda: conn.text())
    session.tell(CancelTurn())
    stop = plane.serve("v4/command")
    assert stop.params["type"] == "stop"
    assert plane.port.named("stop")
    plane.play(lambda: engine.complete("cancelled"))
    assert conn.wait_reply(1).result["stopReason"] == "cancelled"


def test_a_prompt_during_a_turn_follows_the_engines_routing_and_the_client_is_told(world):
    session, backend, conn = world
    plane = PlaneBackend(session, backend)
    prompt(session, conn, 1, "first")
    engine = plane.live()
    plane.serve("v4/command")
    plane.play(lambda: engine.start("first"))
    prompt(session, conn, 2, "second")
    plane.serve("v4/command")  # the engine's followupMode (queue by default) decides
    conn.wait_for(lambda: "Queued" in conn.text())
    plane.play(engine.complete)
    assert conn.wait_reply(1).result["stopReason"] == "end_turn"
    assert [r.request_id for r in conn.replies()] == [1]  # the queued one waits for its own turn
    assert plane.port.named("start_turn")[-1][2] == "second"  # the queue drained into a new turn
    plane.play(lambda: engine.start("second"), lambda: engine.text("again"), engine.complete)
    assert conn.wait_reply(2).result["stopReason"] == "end_turn"


def extension(session: Any, conn: Probe, request_id: Any, name: str, **params: Any) -> None:
    session.tell(Extension(conn.ref, request_id, name, {"sessionId": "acp-1", **params}))


def test_the_engines_queue_is_listed_and_a_removed_item_answers_its_prompt_cancelled(world):
    session, backend, conn = world
    plane = PlaneBackend(session, backend)
    prompt(session, conn, 1, "first")
    engine = plane.live()
    plane.serve("v4/command")
    plane.play(lambda: engine.start("first"))
    prompt(session, conn, 2, "second")
    plane.serve("v4/command")
    conn.wait_for(lambda: "Queued" in conn.text())
    extension(session, conn, 3, "session/queue")
    items = conn.wait_reply(3).result["items"]
    assert [item["text"] for item in items] == ["second"]
    extension(session, conn, 4, "session/queueRemove", queueItemId=items[0]["queueItemId"])
    remove = plane.serve("v4/command")
    assert remove.params["type"] == "deleteQueueItem" and isinstance(remove.params["baseRevision"], int)
    assert conn.wait_reply(4).error is None
    assert conn.wait_reply(2).result == {"stopReason": "cancelled"}  # it will never run
    plane.play(engine.complete)
    assert conn.wait_reply(1).result["stopReason"] == "end_turn"
    assert len(plane.port.named("start_turn")) == 1


def test_retry_reruns_the_latest_turn_and_rename_renames(world):
    session, backend, conn = world
    plane = PlaneBackend(session, backend)
    prompt(session, conn, 1, "first")
    engine = plane.live()
    plane.serve("v4/command")
    plane.play(lambda: engine.start("first"), lambda: engine.text("answer"), engine.complete)
    assert conn.wait_reply(1).result["stopReason"] == "end_turn"
    extension(session, conn, 2, "session/retry")
    retry = plane.serve("v4/command")
    assert retry.params["type"] == "retryTurn" and retry.params["baseLogEpoch"]
    assert conn.wait_reply(2).error is None
    assert plane.port.named("truncate") and plane.port.named("start_turn")[-1][2] == "first"
    extension(session, conn, 3, "session/rename", title="A better name")
    rename = plane.serve("v4/command")
    assert rename.params["type"] == "renameSession" and rename.params["payload"] == {"title": "A better name"}
    assert conn.wait_reply(3).result == {"title": "A better name"}  # answered as on the legacy path
    conn.wait_for(lambda: any(u["sessionUpdate"] == "session_info_update" and u.get("title") == "A better name"
                              for u in conn.updates()))


def test_edit_of_the_latest_prompt_names_its_row_and_the_engine_reruns_from_it(world):
    """``session/editPrompt {rowId}``: ``editUserQuery`` on that prompt's own row (its id and entity,
    against the revision and epoch seen), and the engine reruns the conversation from there. Only the
    latest prompt is granted ``canEdit`` (tests/actors/test_session_v4_guards.py: an earlier one is refused)."""
    session, backend, conn = world
    plane = PlaneBackend(session, backend)
    prompt(session, conn, 1, "first")
    engine = plane.live()
    plane.serve("v4/command")
    plane.play(lambda: engine.start("first"), lambda: engine.text("one"), engine.complete)
    assert conn.wait_reply(1).result["stopReason"] == "end_turn"
    prompt(session, conn, 2, "second")
    plane.serve("v4/command")
    plane.play(lambda: engine.start("second"), lambda: engine.text("two"), engine.complete)
    assert conn.wait_reply(2).result["stopReason"] == "end_turn"
    rows = plane.plane.sessions.get(engine.session_id).rows.rows  # the engine's own conversation
    first_row = next(r for r in rows if r["kind"] == "userInput" and r["text"] == "second")
    extension(session, conn, 3, "session/editPrompt", text="first, changed", rowId=first_row["rowId"])
    edit = plane.serve("v4/command")
    assert edit.params["type"] == "editUserQuery"
    assert edit.params["payload"]["target"] == {"rowId": first_row["rowId"], "entityId": first_row["entityId"]}
    assert edit.params["payload"]["newText"] == "first, changed" and edit.params["baseLogEpoch"]
    assert conn.wait_reply(3).error is None
    assert plane.port.named("truncate") and plane.port.named("start_turn")[-1][2] == "first, changed"
    extension(session, conn, 4, "session/editPrompt", text="x", rowId=10_000)  # no such prompt: refused, not sent
    assert conn.wait_reply(4).error["code"] == -32602


def test_the_v4_extras_are_refused_on_the_legacy_path():
    backend, conn, supervisor, router = Probe(), Probe(), Probe(), Probe()
    session = Session.start(
        session_id="acp-1", cwd=WORKSPACE, mcp_servers=[], settings=SessionSettings(), backend=backend.ref,
        router=router.ref, supervisor=supervisor.ref, clients=[conn.ref], capabilities={},
        config=replace(CONFIG, engine_api="legacy"))
    try:
        extension(session, conn, 1, "session/queue")
        assert conn.wait_reply(1).error["code"] == -32601
        assert backend.of("BackendCall") == []
    finally:
        session.stop()
        for probe in (backend, conn, supervisor, router):
            probe.stop()


def test_the_backends_death_fails_the_open_cards_then_the_prompt(world):
    session, backend, conn = world
    plane = PlaneBackend(session, backend)
    prompt(session, conn, 1)
    engine = plane.live()
    plane.serve("v4/command")
    plane.play(engine.start, lambda: engine.event("model.streaming", {"kind": "tool_call", "toolCallId": "t1",
                                                                       "toolName": "Bash", "input": {"command": "make"}}),
               lambda: engine.event("tool.updated", {"kind": "started", "toolCallId": "t1", "inputOmitted": True}))
    conn.wait_for(lambda: any(u["sessionUpdate"] == "tool_call" for u in conn.updates()))
    session.tell(BackendLost("ZCode backend exited (code 9)"))
    reply = conn.wait_reply(1)
    assert reply.error is not None and "exited" in reply.error["message"]
    statuses = [u.get("status") for u in conn.updates() if u.get("toolCallId") == "t1" and "status" in u]
    assert statuses[-1] == "failed" and statuses.count("failed") == 1
    assert len(conn.of("Deliver")) and conn.messages.index(reply) > max(
        i for i, m in enumerate(conn.messages) if type(m).__name__ == "Deliver")  # the card first, then the answer


def test_a_cancelled_prompt_request_stops_the_turn_and_answers_request_cancelled(world):
    session, backend, conn = world
    plane = PlaneBackend(session, backend)
    prompt(session, conn, 7)
    engine = plane.live()
    plane.serve("v4/command")
    plane.play(engine.start, lambda: engine.text("working"))
    conn.wait_for(lambda: conn.text())
    session.tell(CancelPromptRequest(conn.ref, 7))
    assert plane.serve("v4/command").params["type"] == "stop"
    plane.play(lambda: engine.complete("cancelled"))
    reply = conn.wait_reply(7)
    assert reply.result is None and reply.error["code"] == -32800


def test_a_question_the_engine_counts_down_says_when_it_answers_by_itself(world):
    session, backend, conn = world
    plane = PlaneBackend(session, backend)
    prompt(session, conn, 1)
    engine = plane.live()
    plane.serve("v4/command")
    plane.play(engine.start, lambda: engine.event("permission.requested", {
        "requestId": "r1", "toolCallId": "t1", "toolName": "Bash", "summary": "make", "autoResolveMs": 30_000}))
    conn.wait_for(lambda: "by itself in" in conn.text())
    assert "permission request by itself in" in conn.text()


PERMISSION_FRAME = {"jsonrpc": "2.0", "id": "server-3", "method": "interaction/requestPermission",
                    "params": {"requestId": "r1", "sessionId": "s", "toolCallId": "t1", "toolName": "Bash",
                               "input": {"command": "make"}}}


@pytest.mark.parametrize("answer,option", [({"decision": "allow", "reason": "Approved once"}, "allow_once"),
                                           ({"decision": "deny", "reason": "no"}, "deny")])
def test_a_dialogs_answer_resolves_the_pending_interaction_then_answers_the_request_once(world, answer, option):
    session, backend, conn = world
    plane = PlaneBackend(session, backend)
    prompt(session, conn, 1)
    engine = plane.live()
    plane.serve("v4/command")
    plane.play(engine.start, lambda: engine.event("permission.requested", {
        "requestId": "r1", "toolCallId": "t1", "toolName": "Bash", "summary": "make"}))
    assert [i["kind"] for i in plane.plane.sessions.get(engine.session_id).state["pendingInteractions"]] == ["permission"]
    # The router's first answer (actors/interaction_router.py sends it to a v4 Session, not to the backend):
    session.tell(V4Resolve(PERMISSION_FRAME, 1, ["server-3"], answer))
    resolve = plane.serve("v4/command")
    assert resolve.params["type"] == "resolveInteraction"
    interaction_id = resolve.params["payload"]["interactionId"]
    assert resolve.params["payload"] == {"interactionId": interaction_id, "answer": {"optionId": option}}
    assert [c[0] for c in plane.port.named("resolve_interaction")] == ["resolve_interaction"]  # the engine took it
    backend.wait_for(lambda: backend.of("AnswerBackend"))
    [legacy] = backend.of("AnswerBackend")  # and the request itself once, with the same answer
    assert legacy.request_ids == ["server-3"] and legacy.result == answer


def test_an_answer_with_no_pending_interaction_answers_the_request_alone(world):
    session, backend, conn = world
    plane = PlaneBackend(session, backend)
    prompt(session, conn, 1)
    engine = plane.live()
    plane.serve("v4/command")
    plane.play(engine.start)
    session.tell(V4Resolve(PERMISSION_FRAME, 1, ["server-3"], {"decision": "allow"}))
    backend.wait_for(lambda: backend.of("AnswerBackend"))
    [legacy] = backend.of("AnswerBackend")
    assert legacy.request_ids == ["server-3"] and legacy.result == {"decision": "allow"}
    assert [c.params["type"] for c in backend.calls("v4/command")] == ["createSession", "sendText"]


def test_the_engines_countdown_is_in_the_dialog_and_its_answer_comes_back_to_the_session(world, router):
    session, backend, conn = world
    plane = PlaneBackend(session, backend)
    prompt(session, conn, 1)
    engine = plane.live()
    plane.serve("v4/command")
    plane.play(engine.start, lambda: engine.event("permission.requested", {
        "requestId": "r1", "toolCallId": "t1", "toolName": "Bash", "summary": "make", "autoResolveMs": 30_000}))
    session.tell(BackendRequest(PERMISSION_FRAME, 1))
    [asked] = router.wait_for(lambda: router.of("InteractionAsked"))
    assert asked.answer_via is not None and asked.answer_via.actor_urn == session.actor_urn
    [notice] = [c["content"]["text"] for c in asked.tool_call["content"] if "by itself" in c["content"]["text"]]
    assert "permission request by itself in" in notice


def test_cancelling_a_background_task_is_the_engines_cancel_background_work_and_its_card_fails_once(world):
    session, backend, conn = world
    plane = PlaneBackend(session, backend)
    prompt(session, conn, 1, "build it")
    engine = plane.live()
    plane.serve("v4/command")
    plane.port.running_works.add("exec_9")
    plane.play(lambda: engine.start("build it"),
               lambda: engine.event("session.updated", {"taskId": "exec_9", "status": "running", "toolName": "Bash",
                                                        "description": "make build"}),
               engine.complete)
    assert conn.wait_reply(1).result["stopReason"] == "end_turn"
    conn.wait_for(lambda: any(u.get("toolCallId") == "bg_exec_9" for u in conn.updates()))
    extension(session, conn, 2, "session/cancelBackgroundTask", taskId="exec_9")
    cancel = plane.serve("v4/command")
    assert cancel.params["type"] == "cancelBackgroundWork" and cancel.params["payload"] == {"workId": "exec_9"}
    assert conn.wait_reply(2).result == {"cancelled": True, "status": "cancelled", "taskId": "exec_9"}
    assert backend.of("BackendCall") and not [c for c in backend.of("BackendCall")
                                              if getattr(c, "method", "") == "session/cancelBackgroundTask"]
    plane.play(lambda: engine.event("session.updated", {"taskId": "exec_9", "status": "cancelled"}, turn=False))
    conn.wait_for(lambda: any(u.get("toolCallId") == "bg_exec_9" and u.get("status") == "failed" for u in conn.updates()))
    closes = [u for u in conn.updates() if u.get("toolCallId") == "bg_exec_9" and u.get("status") in ("completed", "failed")]
    assert closes == [{"sessionUpdate": "tool_call_update", "toolCallId": "bg_exec_9", "status": "failed",
                       "_meta": {"backgroundTask": {"taskId": "exec_9", "cancelled": True}}}]


def test_a_made_session_is_switched_to_the_sessions_mode_before_its_first_prompt(router):
    backend, conn, supervisor = Probe(), Probe(), Probe()
    session = Session.start(
        session_id="acp-1", cwd=WORKSPACE, mcp_servers=[], settings=SessionSettings(mode="plan"), backend=backend.ref,
        router=router.ref, supervisor=supervisor.ref, clients=[conn.ref], capabilities={}, config=CONFIG)
    try:
        plane = PlaneBackend(session, backend)
        prompt(session, conn, 1, "say hello")
        plane.live()  # the snapshot says build, the engine's default
        switch = plane.serve("v4/command")
        assert switch.params["type"] == "switchCollaborationMode" and switch.params["payload"] == {"mode": "plan"}
        assert isinstance(switch.params["baseRevision"], int)
        assert ("switch_mode", switch.params["sessionId"], "plan") in plane.port.calls
        send = plane.serve("v4/command")  # only then the prompt
        assert send.params["type"] == "sendText"
        # the client already shows plan (session/new said so): the switch's own update is not sent
        assert not [u for u in conn.updates() if u["sessionUpdate"] == "current_mode_update"]
    finally:
        session.stop()
        for probe in (backend, conn, supervisor):
            probe.stop()


def failed_turn_with_a_prompt_queued(world: Any) -> tuple[Any, Any, Any, PlaneBackend, Engine]:
    """Prompt 1 runs, prompt 2 waits in the engine's queue, and prompt 1's turn fails: the engine
    holds its queue (``autoDrain: false``, ``pauseReason: error``, routing ``choice``)."""
    session, backend, conn = world
    plane = PlaneBackend(session, backend)
    prompt(session, conn, 1, "first")
    engine = plane.live()
    plane.serve("v4/command")
    plane.play(lambda: engine.start("first"))
    prompt(session, conn, 2, "second")
    plane.serve("v4/command")
    conn.wait_for(lambda: "Queued" in conn.text())
    plane.play(lambda: engine.event("turn.failed", {"error": {"type": "provider_error", "message": "down"}}))
    assert conn.wait_reply(1).error is not None
    return session, backend, conn, plane, engine


def test_a_queue_held_after_a_failed_turn_is_resumed_and_its_prompt_answered_at_its_own_end(world):
    session, backend, conn, plane, engine = failed_turn_with_a_prompt_queued(world)
    resume = plane.serve("v4/command")
    assert resume.params["type"] == "setAutoDrain" and resume.params["payload"] == {"autoDrain": True}
    assert isinstance(resume.params["baseRevision"], int)  # decided against the queue it saw (CAS)
    assert plane.port.named("start_turn")[-1][2] == "second"  # the queue drained into a new turn
    plane.play(lambda: engine.start("second"), lambda: engine.text("again"))
    assert [r.request_id for r in conn.replies()] == [1]  # not answered before its own turn's end
    plane.play(engine.complete)
    assert conn.wait_reply(2).result["stopReason"] == "end_turn"


def test_a_prompt_sent_while_the_queue_is_held_says_what_becomes_of_the_queue(world):
    session, backend, conn, plane, engine = failed_turn_with_a_prompt_queued(world)
    held = [item["queueItemId"] for item in plane.plane.sessions.get(engine.session_id).state["queue"]["items"]]
    prompt(session, conn, 3, "third")  # before the bridge's setAutoDrain is answered: the routing is choice
    backend.wait_call("v4/command", plane.served["v4/command"] + 2)
    send = [c for c in backend.calls("v4/command") if c.params["type"] == "sendText"][-1]
    assert send.params["payload"]["heldQueueDisposition"] == "keepQueueAndSend"
    assert send.params["payload"]["expectedHeldQueueItemIds"] == held


def one_running_patch(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The frames as one whose ``state.updated`` patches are merged into its last (later keys win):
    what the engine's flush window sends when a turn's end and the next turn's start fall in it
    (coalesce.ts) — ``control`` goes from running to running, never showing the end."""
    first, last = frames[0], frames[-1]
    ops = [op for frame in frames for op in frame["frame"]["payload"]["deltas"]]
    patch: dict[str, Any] = {}
    for op in ops:
        if op["op"] == "state.updated":
            patch.update(op["patch"])
    merged = [op for op in ops if op["op"] != "state.updated"] + [{"op": "state.updated", "patch": patch}]
    frame = {**last["frame"], "fromSeq": first["frame"]["fromSeq"],
             "payload": {**last["frame"]["payload"], "deltas": merged}}
    return [{**last, "frame": frame}]


def test_a_turn_that_ends_inside_the_frame_that_starts_the_next_answers_its_own_prompt(world):
    session, backend, conn = world
    plane = PlaneBackend(session, backend)
    prompt(session, conn, 1, "first")
    engine = plane.live()
    plane.serve("v4/command")
    plane.play(lambda: engine.start("first"), lambda: engine.text("one"))
    prompt(session, conn, 2, "second")
    plane.serve("v4/command")
    conn.wait_for(lambda: "Queued" in conn.text())
    engine.complete()  # the queue drains into the next turn at once (port.start_turn)
    engine.start("second")
    frames = [json.loads(json.dumps(frame["params"])) for frame in plane.written]
    plane.written.clear()
    assert len(frames) > 1 and all(f["kind"] == "complete" for f in frames)
    session.tell(V4Frames(one_running_patch(frames)))
    assert conn.wait_reply(1).result["stopReason"] == "end_turn"  # at its own turn's end
    assert [r.request_id for r in conn.replies()] == [1]  # the second one runs on
    plane.play(lambda: engine.text("two"), engine.complete)
    assert conn.wait_reply(2).result["stopReason"] == "end_turn"


def test_a_guided_prompt_is_answered_when_the_running_turn_ends_and_never_called_queued(world):
    session, backend, conn = world
    plane = PlaneBackend(session, backend)
    prompt(session, conn, 1, "first")
    engine = plane.live()
    plane.serve("v4/command")
    plane.play(lambda: engine.start("first"))
    # Another client (the desktop) set follow-ups to guide the running turn.
    plane.plane.dispatch("v4/command", {"commandId": "desk-1", "clientId": "desktop", "sessionId": engine.session_id,
                                        "type": "setFollowupMode", "payload": {"mode": "guide"}, "issuedAt": 1,
                                        "baseRevision": plane.plane.sessions.get(engine.session_id).state["revision"]},
                         lambda result, error: None)
    prompt(session, conn, 2, "use tabs")
    send = plane.serve("v4/command")
    assert send.params["type"] == "sendText"
    queue = plane.plane.sessions.get(engine.session_id).state["queue"]
    assert [item["delivery"]["admitted"] for item in queue["items"]] == ["guide"]  # acked "queue" all the same
    conn.wait_for(lambda: "running turn" in conn.text())
    [(_, _, text, input_id)] = plane.port.named("guide")
    plane.play(lambda: engine.event("turn.steerDrained", {"drainedInputs": [{"pendingInputId": input_id}]}),
               lambda: engine.text("tabs it is"), engine.complete)
    assert conn.wait_reply(1).result["stopReason"] == "end_turn"
    assert conn.wait_reply(2).result["stopReason"] == "end_turn"  # with the turn it went into
    assert "Queued" not in conn.text()
    assert len(plane.port.named("start_turn")) == 1  # no turn of its own


def test_a_load_asked_for_while_the_turn_streams_gets_each_line_once(router):
    """The phone's connection holds the session from its own ``session/load``; the Session takes
    the snapshot when it hears of the load, later. A line the feed sent in between is in both: the
    replay covers it (``FEED_LINES``), so the phone reads it once (a race the process suite's
    mid-turn load hit under load, tests/process/test_remote_reconnect.py)."""
    from tests.actors.test_client_connection import Pipes

    backend, conn, supervisor, phone_supervisor = Probe(), Probe(), Probe(), Probe()
    pipes = Pipes()
    phone = ClientConnection.start(phone_supervisor.ref, pipes.transport(), every_session=False)  # a remote client
    session = Session.start(
        session_id="acp-1", cwd=WORKSPACE, mcp_servers=[], settings=ENGINE_MODE, backend=backend.ref,
        router=router.ref, supervisor=supervisor.ref, clients=[conn.ref, phone], capabilities={}, config=CONFIG)
    try:
        plane = PlaneBackend(session, backend)
        prompt(session, conn, 1, "say hello")
        engine = plane.live()
        plane.serve("v4/command")
        plane.play(lambda: engine.start("say hello"), lambda: engine.text("hello"))
        conn.wait_for(lambda: conn.text() == "hello ")
        pipes.send(framing.encode({"jsonrpc": "2.0", "id": 7, "method": "session/load",
                                   "params": {"sessionId": "acp-1", "cwd": WORKSPACE, "mcpServers": []}}))
        load = phone_supervisor.wait_for(lambda: phone_supervisor.of("ClientFrame"))[0]  # held from here on
        plane.play(lambda: engine.text("there"))  # streams before the Session hears of the load
        conn.wait_for(lambda: conn.text() == "hello there ")
        session.tell(Attach(phone, load.handle, WORKSPACE, True))
        frames = pipes.read_lines(2)
        while not any(f.get("id") == 7 for f in frames):
            frames += pipes.read_lines(1)
        plane.play(lambda: engine.text("world"), engine.complete)
        conn.wait_reply(1)
        while not any("world" in json.dumps(f) for f in frames):
            frames += pipes.read_lines(1)
        texts = [f["params"]["update"]["content"]["text"] for f in frames
                 if f.get("method") == "session/update" and f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"]
        assert "".join(texts) == "hello there world "
    finally:
        session.stop()
        phone.stop()
        for probe in (backend, conn, supervisor, phone_supervisor):
            probe.stop()

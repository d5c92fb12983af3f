"""Retry, edit and fork by the engine's ``row.actions`` (issue 31), on a v4 Session against the
simulator's plane, which grants and guards them as the engine does (``sim/v4/commands.py``)."""

# ruff: noqa: F811  (the fixtures world and router are imported from test_session_v4)
from __future__ import annotations

from typing import Any

from zcode_acp.protocol.i18n import t
from zcode_acp.protocol.v4 import commands as v4
from zcode_acp.actors.session.v4.commands import refused
from zcode_acp.actors.session.v4.settings import fork_target
from tests.actors.test_session_v4 import CONFIG, ENGINE_MODE, extension, prompt, router, world  # noqa: F401
from tests.actors.v4_world import GuardPlane
from tests.sim.test_v4_engine_rules import rows, two_turns


def one_turn(session: Any, backend: Any, conn: Any, *texts: str) -> tuple[GuardPlane, Any]:
    plane = GuardPlane(session, backend)
    engine = None
    for number, text in enumerate(texts, start=1):
        prompt(session, conn, number, text)
        if engine is None:
            engine = plane.live()
        plane.serve("v4/command")
        plane.play(lambda e=engine, said=text: e.start(said), lambda e=engine, said=text: e.text(f"reply to {said}"),
                   engine.complete)
        assert conn.wait_reply(number).result["stopReason"] == "end_turn"
    return plane, engine


def test_a_retry_names_the_latest_reply_the_engine_grants_and_reruns(world):
    session, backend, conn = world
    plane, engine = one_turn(session, backend, conn, "first")
    reply = next(r for r in plane.plane.sessions.get(engine.session_id).rows.rows if r["kind"] == "assistantText")
    extension(session, conn, 10, "session/retry")
    retry = plane.serve("v4/command")
    assert retry.params["type"] == "retryTurn"
    assert retry.params["payload"]["target"] == {"rowId": reply["rowId"], "entityId": reply["entityId"]}
    assert conn.wait_reply(10).error is None
    assert plane.port.named("start_turn")[-1][2] == "first", "the engine reran the turn"


def test_a_retry_named_by_its_prompts_row_targets_that_turns_reply(world):
    session, backend, conn = world
    plane, engine = one_turn(session, backend, conn, "first")
    user = next(r for r in plane.plane.sessions.get(engine.session_id).rows.rows if r["kind"] == "userInput")
    extension(session, conn, 10, "session/retry", rowId=user["rowId"])
    retry = plane.serve("v4/command")
    assert retry.params["payload"]["target"]["rowId"] != user["rowId"]
    assert conn.wait_reply(10).error is None


def test_an_edit_of_an_earlier_prompt_is_refused_in_the_users_words_and_never_sent(world):
    session, backend, conn = world
    plane, engine = one_turn(session, backend, conn, "first", "second")
    conversation = plane.plane.sessions.get(engine.session_id).rows.rows
    first, latest = [r for r in conversation if r["kind"] == "userInput"]
    sent = len(backend.calls("v4/command"))
    extension(session, conn, 10, "session/editPrompt", text="changed", rowId=first["rowId"])
    error = conn.wait_reply(10).error
    assert error["code"] == -32602 and error["message"] == t("en", "v4.guard.edit")
    assert error["data"]["reasonCode"] == "guard.latestQueryEditOnly"
    assert len(backend.calls("v4/command")) == sent, "nothing the engine would refuse is sent"
    extension(session, conn, 11, "session/editPrompt", text="second, changed")  # the latest: granted
    edit = plane.serve("v4/command")
    assert edit.params["payload"]["target"] == {"rowId": latest["rowId"], "entityId": latest["entityId"]}
    assert conn.wait_reply(11).error is None
    assert plane.port.named("start_turn")[-1][2] == "second, changed"


def test_a_retry_while_a_turn_runs_is_refused_with_why_not_a_hang(world):
    session, backend, conn = world
    plane, engine = one_turn(session, backend, conn, "first")
    prompt(session, conn, 2, "second")
    plane.serve("v4/command")
    plane.play(lambda: engine.start("second"), lambda: engine.text("streaming"))
    extension(session, conn, 10, "session/retry")
    error = conn.wait_reply(10).error
    assert error["code"] == -32602 and error["message"] == t("en", "v4.guard.retry")


def test_the_engines_guard_refusal_reads_in_the_sessions_language():
    ack = v4.CommandAck("c1", "failed", "guard.latestAssistantRetryOnly", "retryTurn targetRowId 3 is not ...", 7, None)
    error = refused(ack, "zh-CN")
    assert error.message == t("zh-CN", "v4.guard.retry")
    assert error.data["reasonCode"] == "guard.latestAssistantRetryOnly"
    other = refused(v4.CommandAck("c2", "rejected", "proto.invalidPayload", "bad", 7, None), "zh-CN")
    assert "proto.invalidPayload" in other.message


def test_a_fork_targets_only_a_row_the_engine_grants_can_fork():
    side = two_turns()
    replies = rows(side, "assistantText")
    assert fork_target(side.projection.rows.rows) == v4.RowTarget(replies[1]["rowId"], replies[1]["entityId"])
    # A turn that failed leaves a settled reply with no stable segment: nothing to fork from it.
    failed = two_turns()
    failed.send(v4.send_text(failed.session_id, "three"))
    failed.engine.start("three")
    failed.engine.text("half a reply")
    failed.engine.event("turn.failed", {"error": {"type": "provider_error", "message": "boom"}, "turnPhase": "model"})
    last = rows(failed, "assistantText")[-1]
    assert last.get("state") != "streaming" and "canFork" not in (last.get("actions") or {})
    target = fork_target(failed.projection.rows.rows)
    assert target is not None and target.row_id != last["rowId"]
    assert fork_target(rows(failed, "userInput")) is None


def test_a_stale_retry_goes_again_once_the_feed_shows_the_engines_state(world):
    """The engine moved on (another client renamed the session) and its frames follow the ack: the retry
    goes again against the revision the engine decided at, not at once with the same old base."""
    session, backend, conn = world
    plane, engine = one_turn(session, backend, conn, "first")
    projection = plane.plane.sessions.get(engine.session_id)
    projection.set("meta", {"title": "renamed elsewhere", "titleSource": "custom"})
    projection.commit()  # its frame waits in the plane: the Session has not seen it
    extension(session, conn, 10, "session/retry")
    first = plane.serve("v4/command")  # stale; the frame follows the ack
    second = plane.serve("v4/command")
    assert second.params["type"] == "retryTurn" and second.params["commandId"] != first.params["commandId"]
    assert second.params["baseRevision"] > first.params["baseRevision"]
    assert conn.wait_reply(10).error is None
    assert plane.port.named("start_turn")[-1][2] == "first"


def test_a_compaction_queued_behind_a_turn_is_done_at_its_own_end_not_that_turns(world):
    """The engine queues a compaction asked for while a turn runs (``accepted``, no result): the turn it
    waits behind ending is not its end; its own marker's is."""
    session, backend, conn = world
    plane, engine = one_turn(session, backend, conn, "first")
    plane.play(lambda: engine.start("a prompt from the desktop"))  # a turn no prompt of ours runs
    extension(session, conn, 10, "session/compact")
    compact = plane.serve("v4/command")
    assert compact.params["type"] == "compact" and not plane.port.named("compact"), "queued, not started"
    plane.play(engine.complete)  # the desktop's turn ends: the engine starts the compaction it queued
    assert plane.port.named("compact")
    extension(session, conn, 11, "session/queue")  # answered in mailbox order: after that frame's effects
    conn.wait_reply(11)
    assert not [r for r in conn.replies() if r.request_id == 10], "not done at another turn's end"
    plane.play(lambda: engine.start("/compact", source="compaction"), engine.complete)
    reply = conn.wait_reply(10)
    assert reply.error is None and reply.result["compact"]["state"] == "completed"


def test_a_compaction_refused_because_one_is_queued_says_why(world):
    session, backend, conn = world
    plane, engine = one_turn(session, backend, conn, "first")
    plane.play(lambda: engine.start("a prompt from the desktop"))
    desktop = {"commandId": "desktop-compact", "clientId": "desktop", "sessionId": engine.session_id,
               "type": "compact", "payload": {}, "issuedAt": 1}
    plane.plane.dispatch("v4/command", desktop, lambda result, error: None)  # the desktop's, queued first
    extension(session, conn, 10, "session/compact")
    plane.serve("v4/command")
    error = conn.wait_reply(10).error
    assert error is not None and t("en", "v4.compact.locked") in error["message"]


def test_a_permission_the_engine_answers_by_itself_at_its_deadline_is_told_never_silent(world):
    session, backend, conn = world
    plane, engine = one_turn(session, backend, conn, "first")
    prompt(session, conn, 2, "second")
    plane.serve("v4/command")
    plane.play(lambda: engine.start("second"), lambda: engine.event("permission.requested", {
        "requestId": "r1", "toolCallId": "t1", "toolName": "Bash", "summary": "make", "autoResolveMs": 30_000}))
    conn.wait_for(lambda: "by itself in" in conn.text())
    deadline = plane.plane.sessions.get(engine.session_id).state["pendingInteractions"][0]["autoResolution"]
    plane.play(lambda: plane.plane.tick(deadline["deadlineAt"] + 1))  # the engine's countdown runs out
    conn.wait_for(lambda: t("en", "v4.countdown.answered.permission") in conn.text())


def test_a_countdown_closed_by_the_users_answer_or_before_its_deadline_says_nothing():
    from zcode_acp.actors.session.v4.countdowns import Countdowns
    from zcode_acp.protocol.v4.conversation_view import PendingInteraction

    countdowns = Countdowns()
    for name in ("mine", "early", "late"):
        countdowns.opened(PendingInteraction(name, "userInput", None, {}, 10_000.0))
    countdowns.answered("mine")
    assert countdowns.closed("mine", 20_000.0) is None, "the user's own answer"
    assert countdowns.closed("early", 5_000.0) is None, "another client answered before the deadline"
    assert countdowns.closed("late", 10_000.0) == "v4.countdown.answered.question"
    assert countdowns.closed("late", 10_000.0) is None, "told once"

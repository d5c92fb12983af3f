"""The 0.16 engine serving its v4 data plane (``sim/cli016_v4.py``), driven as a process.

Each test runs ``zcode-sim app-server --stdio`` (dialect ``cli016``), talks v4 to it the
way the bridge does (``protocol/v4`` builds the commands and decodes the frames), and
checks what the bridge ends up holding against what the legacy surface of the same
process says (``session/messages``, ``session/read``, its ``session/event`` stream). Every
frame both ways is recorded (``ZCODE_SIM_FRAMES``) and checked against
``schemas/engine/`` when the test ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import engine_schema
from tests.sim.peer import SimPeer
from tests.sim.v4_peer import Conversation, command, ended
from zcode_acp.protocol.v4 import attachments as bridge_attachments
from zcode_acp.protocol.v4 import commands as bridge
from zcode_acp.protocol.v4.commands import RowTarget
from zcode_acp.protocol.v4.sessions_index_apply import SessionsIndexState

WORKSPACE = "/tmp/v4-workspace"


@pytest.fixture
def v4(tmp_path: Path) -> Iterator[Callable[..., SimPeer]]:
    """Start today's simulator with every frame recorded; the recording passes the engine's schemas."""
    peers: list[SimPeer] = []
    frames = tmp_path / "frames.jsonl"

    def starter(env: dict[str, str] | None = None) -> SimPeer:
        peer = SimPeer(tmp_path, "cli016", {"ZCODE_SIM_FRAMES": str(frames), **(env or {})})
        peers.append(peer)
        return peer

    yield starter
    for peer in peers:
        peer.close()
    findings = engine_schema.check_recording(frames, "cli016") if frames.exists() else []
    recorded = engine_schema.read_recording(frames) if frames.exists() else {}
    # The v4 surface is this module's; the legacy frames are checked by tests/process's schema check.
    v4_findings = [f for f in findings if ("v4/" in f.what or f.schema.startswith("engine/v4"))
                   and not schemaless(f, recorded)]
    assert not v4_findings, "\n".join(str(finding) for finding in v4_findings[:10])


def schemaless(finding: engine_schema.Finding, recorded: dict[int, list[tuple[str, Any]]]) -> bool:
    """Frames schemas/engine/v4/ has no schema for yet: v4/attachment/* and the frames of the
    workspace topics (conversation.frame.json covers conversation/<id> topics only). The plane's
    own tests check those against the engine's source (test_v4_commands.py, test_v4_topics.py)."""
    if finding.schema == "(no schema)" and "v4/attachment/" in finding.what:
        return True
    pid = int(finding.conversation.rpartition(" ")[2]) if finding.conversation else 0
    frames = recorded.get(pid, [])
    frame = frames[finding.index][1] if 0 <= finding.index < len(frames) else None
    topic = ((frame or {}).get("params") or {}).get("topic") if isinstance(frame, dict) else None
    return isinstance(topic, str) and topic.startswith(("sessions-index/", "workspace-config/"))


def created(peer: SimPeer) -> tuple[str, Conversation]:
    """A session made by v4 ``createSession``, and a subscription to its conversation."""
    ack = command(peer, bridge.create_session(WORKSPACE))
    assert ack["status"] == "accepted", ack
    session_id = str(ack["result"]["sessionId"])
    # Its legacy events too, to compare with (a v4 client needs none of them).
    peer.result("session/subscribe", {"sessionId": session_id, "deliveryKind": "desktop-continuous",
                                      "includeSnapshot": False})
    conversation = Conversation(peer, f"conversation/{session_id}")
    assert conversation.open()["mode"] == "snapshot"
    conversation.until(lambda state: bool(state.state), what="the conversation's snapshot")
    return session_id, conversation


def legacy_history(peer: SimPeer, session_id: str) -> list[tuple[str, ...]]:
    """What ``session/messages`` holds, piece by piece, spelled as the rows that show it."""
    pieces: list[tuple[str, ...]] = []
    for message in peer.result("session/messages", {"sessionId": session_id})["messages"]:
        for part in message["parts"]:
            if message["info"]["role"] == "user":
                pieces.append(("userInput", part["text"]))
            elif part["type"] in ("text", "reasoning"):
                pieces.append(("assistantText" if part["type"] == "text" else "reasoning", part["text"]))
            elif part["type"] == "tool":
                pieces.append(("toolCall", part["tool"], str(part["state"].get("output") or "")))
    return pieces


def v4_history(conversation: Conversation) -> list[tuple[str, ...]]:
    pieces: list[tuple[str, ...]] = []
    for row in conversation.state.rows:
        if row["kind"] in ("userInput", "assistantText", "reasoning"):
            pieces.append((row["kind"], row["text"]))
        elif row["kind"] == "toolCall":
            pieces.append(("toolCall", row["toolName"], str((row.get("output") or {}).get("text") or "")))
    return pieces


def fresh_picture(peer: SimPeer, topic: str) -> dict[str, Any]:
    """A second subscriber's snapshot: what the engine holds now."""
    other = Conversation(peer, topic, connection_id="second")
    other.open()
    other.until(lambda state: bool(state.state), what="the second subscriber's snapshot")
    return other.picture()


def test_send_text_runs_the_scenario_and_the_frames_decode_to_the_legacy_history(v4) -> None:
    peer = v4()
    session_id, conversation = created(peer)
    ack = command(peer, bridge.send_text(session_id, "#sim demo"))
    assert (ack["status"], ack["result"]["delivery"]) == ("accepted", "startNow")
    conversation.until(ended(conversation, 1), what="the demo turn's end")
    history = legacy_history(peer, session_id)
    assert [piece[0] for piece in history] == ["userInput", "reasoning", "assistantText", "toolCall", "toolCall",
                                               "assistantText"]
    assert v4_history(conversation) == history
    header = conversation.rows("turnHeader")[0]
    started = peer.event(session_id, "turn.started")
    assert header["turnId"] == started["turnId"] and header["sourceCommandId"] == ack["commandId"]
    # Deltas applied one by one end where a new subscriber's snapshot starts.
    assert fresh_picture(peer, conversation.topic) == conversation.picture()


def test_create_session_with_a_first_input_starts_its_first_turn_at_once(v4) -> None:
    peer = v4()
    ack = command(peer, bridge.create_session(WORKSPACE, first_text="#sim stream count=2 text=hi"), "create-1")
    assert ack["status"] == "accepted", ack
    session_id = ack["result"]["sessionId"]
    conversation = Conversation(peer, f"conversation/{session_id}")
    conversation.open()
    conversation.until(ended(conversation, 1), what="the first turn's end")
    assert v4_history(conversation) == legacy_history(peer, session_id) == [
        ("userInput", "#sim stream count=2 text=hi"), ("assistantText", "hihi")]
    assert conversation.rows("turnHeader")[0]["sourceCommandId"] == "create-1"


def test_a_legacy_session_fails_its_first_send_text_then_serves_its_legacy_turns_on_v4(v4) -> None:
    peer = v4()
    session_id = peer.create(WORKSPACE)
    failed = command(peer, bridge.send_text(session_id, "hi"), "first")
    assert (failed["status"], failed["reasonCode"]) == ("failed", "fault.command.executionFailed")
    assert "FOREIGN KEY" in failed["message"]
    assert command(peer, bridge.send_text(session_id, "hi"), "first")["status"] == "duplicate"
    peer.turn(session_id, "#sim stream count=3 text=ab")
    conversation = Conversation(peer, f"conversation/{session_id}")
    conversation.open()
    conversation.until(ended(conversation, 1), what="the legacy turn in the snapshot")
    assert v4_history(conversation) == legacy_history(peer, session_id) == [
        ("userInput", "#sim stream count=3 text=ab"), ("assistantText", "ababab")]
    assert conversation.state.state["meta"]["title"] == peer.event(session_id, "session.titleUpdated")["payload"]["title"]


def test_a_v4_stop_cancels_the_running_turn_and_a_stale_one_is_a_noop(v4) -> None:
    peer = v4()
    session_id, conversation = created(peer)
    idle = command(peer, bridge.stop(session_id))
    assert idle["status"] == "accepted" and "result" not in idle  # nothing runs, nothing named: nothing to do
    command(peer, bridge.send_text(session_id, "#sim hang"))
    conversation.until(lambda state: conversation.phase() == "running", what="the running turn")
    execution = peer.event(session_id, "turn.started")["payload"]["foregroundExecutionId"]
    works = conversation.state.state["control"]["activeWorks"]
    assert [work.get("foregroundExecutionId") for work in works] == [execution]
    stale = command(peer, bridge.stop(session_id, expected_foreground_execution_id="exec_gone"))
    assert (stale["status"], stale["reasonCode"]) == ("noop", "guard.stopTargetChanged")
    stopped = command(peer, bridge.stop(session_id, expected_foreground_execution_id=execution))
    assert stopped["status"] == "accepted" and "result" not in stopped  # the ack union has no stop member
    assert peer.event(session_id, "turn.completed")["payload"]["resultType"] == "cancelled"
    conversation.until(ended(conversation, 1, "completedInterrupted"), what="the interrupted end")
    assert conversation.rows("turnHeader")[0]["state"] == "completedInterrupted"


def test_a_guided_text_joins_the_running_turn_and_a_queued_one_runs_after_it(v4) -> None:
    peer = v4()
    session_id, conversation = created(peer)
    command(peer, bridge.send_text(session_id, "#sim slow count=30 interval=0.02"))
    conversation.until(lambda state: conversation.phase() == "running", what="the running turn")
    assert conversation.state.state["inputRouting"]["mode"] == "enqueue"
    guided = command(peer, bridge.send_text(session_id, "use tabs", requested_delivery="guide"), "guide-1")
    assert guided["result"]["delivery"] == "queue"  # session-flow.ts: a guided input is acked queue
    queued = command(peer, bridge.send_text(session_id, "#sim stream count=2 text=q"), "queue-1")
    assert queued["result"]["delivery"] == "queue"
    announced = peer.event(session_id, "turn.steerQueued", where=lambda e: e["payload"]["intent"]["sourceCommandId"]
                           == "queue-1")
    assert announced["payload"]["intent"]["admittedDelivery"] == "queue" and "delivery" not in announced["payload"]
    drained = peer.event(session_id, "turn.steerDrained")["payload"]["drainedInputs"][0]
    assert drained["text"] == "use tabs" and drained["intent"]["sourceCommandId"] == "guide-1"
    conversation.until(ended(conversation, 2), timeout=10, what="the queued turn's end")
    users = conversation.rows("userInput")
    assert [(row["text"], row.get("guided", False)) for row in users] == [
        ("#sim slow count=30 interval=0.02", False), ("use tabs", True), ("#sim stream count=2 text=q", False)]
    assert users[2]["sourceCommandId"] == "queue-1" and conversation.state.state["queue"]["items"] == []
    history = peer.result("session/messages", {"sessionId": session_id})["messages"]
    assert [m["parts"][0]["text"] for m in history if m["info"]["role"] == "user"] == [
        "#sim slow count=30 interval=0.02", "use tabs", "#sim stream count=2 text=q"]


def test_resolve_interaction_answers_the_permission_the_legacy_host_was_asked(v4) -> None:
    peer = v4()
    session_id, conversation = created(peer)
    command(peer, bridge.send_text(session_id, "#sim permission"))
    conversation.until(lambda state: bool(state.state["pendingInteractions"]), what="the pending permission")
    asked = peer.wait(lambda f: f.get("method") == "interaction/requestPermission")
    item = conversation.state.state["pendingInteractions"][0]
    assert item["kind"] == "permission" and item["payload"]["toolName"] == "Bash"
    tool = conversation.rows("toolCall")[0]
    assert tool["status"] == "pendingApproval" and tool["approvalInteractionId"] == item["interactionId"]
    ack = command(peer, bridge.resolve_interaction(session_id, item["interactionId"], option_id="allow_once"))
    assert ack["status"] == "accepted" and ack["result"]["resolvedBy"]["optionId"] == "allow_once"
    resolved = peer.event(session_id, "permission.resolved")["payload"]
    assert resolved["requestId"] == asked["params"]["requestId"] and resolved["decision"] == "allow"
    conversation.until(ended(conversation, 1), what="the turn's end")
    assert conversation.rows("toolCall")[0]["status"] == "success"
    assert conversation.rows("assistantText")[-1]["text"].endswith("Permission granted; done.")
    late = command(peer, bridge.resolve_interaction(session_id, item["interactionId"], option_id="deny"))
    assert (late["status"], late["reasonCode"]) == ("noop", "interaction.alreadyResolved")


def test_resolve_interaction_answers_a_question_with_its_content(v4) -> None:
    peer = v4()
    session_id, conversation = created(peer)
    command(peer, bridge.send_text(session_id, "#sim questions"))
    conversation.until(lambda state: bool(state.state["pendingInteractions"]), what="the pending question")
    item = conversation.state.state["pendingInteractions"][0]
    assert item["kind"] == "userInput"
    assert item["payload"]["questions"][0]["question"] == "Which file should I test?"
    answers = {"Which file should I test?": "auth.test.ts"}
    ack = command(peer, bridge.resolve_interaction(session_id, item["interactionId"], action="accept",
                                                   content={"answers": answers}))
    assert ack["status"] == "accepted"
    conversation.until(ended(conversation, 1), what="the turn's end")
    assert conversation.state.state["pendingInteractions"] == []
    assert 'Answers: {"Which file should I test?":"auth.test.ts"}' in conversation.rows("assistantText")[-1]["text"]


def test_switching_model_and_mode_changes_the_legacy_settings_and_back(v4) -> None:
    peer = v4()
    session_id, conversation = created(peer)
    config = conversation.state.state["config"]
    catalog = peer.result("session/resume", {"sessionId": session_id, "workspace": peer.workspace(WORKSPACE)})
    other = next(entry for entry in catalog["settings"]["model"]["available"]
                 if entry["ref"]["modelId"] != config["model"] and entry["reasoning"]["levels"])
    level = other["reasoning"]["levels"][0]["value"]
    ack = command(peer, bridge.switch_model_config(session_id, config["provider"], other["ref"]["modelId"], level),
                  base=conversation.base())
    assert ack["status"] == "accepted", ack
    conversation.until(lambda state: state.state["config"]["model"] == other["ref"]["modelId"], what="the new model")
    read = peer.result("session/read", {"sessionId": session_id})["settings"]
    assert read["model"]["current"]["modelId"] == other["ref"]["modelId"]
    assert read["thoughtLevel"]["current"] == level
    unknown = command(peer, bridge.switch_model_config(session_id, config["provider"], "no-such-model", "high"),
                      base=conversation.base())
    assert (unknown["status"], unknown["reasonCode"]) == ("rejected", "config.modelUnavailable")
    assert command(peer, bridge.switch_collaboration_mode(session_id, "plan"), base=conversation.base())[
        "status"] == "accepted"
    assert peer.result("session/read", {"sessionId": session_id})["settings"]["mode"]["current"] == "plan"
    peer.result("session/setMode", {"sessionId": session_id, "mode": "build"})  # the legacy way, seen on v4
    conversation.until(lambda state: state.state["config"]["mode"] == "build", what="the legacy mode change")
    markers = [row["marker"] for row in conversation.rows("timelineMarker")]
    assert [m["toModel"] for m in markers if m["type"] == "modelChange"] == [other["ref"]["modelId"]]


def test_compact_runs_the_engines_compaction_turn(v4) -> None:
    peer = v4({"ZCODE_SIM_COMPACT_SECONDS": "0.05"})
    session_id, conversation = created(peer)
    command(peer, bridge.send_text(session_id, "#sim stream count=2"))
    conversation.until(ended(conversation, 1), what="the first turn")
    assert command(peer, bridge.compact(session_id))["status"] == "accepted"
    done = peer.wait(lambda f: f.get("method") == "state.updated" and f["params"]["reason"] == "session_compacted")
    assert done["params"]["sessionId"] == session_id
    conversation.until(lambda state: any(row["kind"] == "timelineMarker" and row["marker"]["status"] == "success"
                                         for row in state.rows), what="the compaction marker")
    assert len(peer.result("session/messages", {"sessionId": session_id})["messages"]) == 2


def test_rename_and_delete_act_on_the_legacy_session(v4) -> None:
    peer = v4()
    session_id, conversation = created(peer)
    assert command(peer, bridge.rename_session(session_id, "My title"))["status"] == "accepted"
    renamed = peer.event(session_id, "session.titleUpdated")["payload"]
    assert (renamed["title"], renamed["source"]) == ("My title", "custom")
    listed = peer.result("session/list", {})["sessions"]
    assert [entry["title"] for entry in listed if entry["sessionId"] == session_id] == ["My title"]
    conversation.until(lambda state: state.state["meta"] == {"title": "My title", "titleSource": "custom"},
                       what="the new title")
    assert command(peer, bridge.delete_session(session_id))["status"] == "accepted"
    assert peer.error("session/read", {"sessionId": session_id})["code"] == -32004
    gone = command(peer, bridge.send_text(session_id, "hello"))
    assert (gone["status"], gone["reasonCode"]) == ("rejected", "proto.sessionNotFound")


def test_retry_and_edit_rerun_the_turn_on_the_legacy_history(v4) -> None:
    peer = v4()
    session_id, conversation = created(peer)
    command(peer, bridge.send_text(session_id, "#sim stream count=2 text=a"))
    conversation.until(ended(conversation, 1), what="the first turn")
    reply = conversation.rows("assistantText")[0]  # retry targets the latest reply (its actions say so)
    assert reply["actions"] == {"canRetry": True, "canFork": True}
    retried = command(peer, bridge.retry_turn(session_id, RowTarget(reply["rowId"], reply["entityId"])),
                      base=conversation.base())
    assert retried["status"] == "accepted", retried
    rerun = ended(conversation, 1)
    conversation.until(lambda state: rerun(state) and state.rows[0]["origin"] == "editRerun", what="the retried turn")
    assert legacy_history(peer, session_id) == v4_history(conversation) == [
        ("userInput", "#sim stream count=2 text=a"), ("assistantText", "aa")]
    user = conversation.rows("userInput")[0]
    edited = command(peer, bridge.edit_user_query(session_id, RowTarget(user["rowId"], user["entityId"]),
                                                  "#sim stream count=3 text=b"), base=conversation.base())
    assert edited["status"] == "accepted", edited
    conversation.until(lambda state: [row["text"] for row in state.rows if row["kind"] == "assistantText"] == ["bbb"]
                       and rerun(state), what="the edited turn")
    assert conversation.rows("turnHeader")[0]["origin"] == "editRerun"
    assert legacy_history(peer, session_id) == v4_history(conversation) == [
        ("userInput", "#sim stream count=3 text=b"), ("assistantText", "bbb")]


def test_fork_assistant_makes_a_legacy_session_with_the_history_up_to_the_row(v4) -> None:
    peer = v4()
    session_id, conversation = created(peer)
    command(peer, bridge.send_text(session_id, "#sim stream count=1 text=one"))
    conversation.until(ended(conversation, 1), what="the first turn")
    command(peer, bridge.send_text(session_id, "#sim stream count=1 text=two"))
    conversation.until(ended(conversation, 2), what="the second turn")
    first_answer = conversation.rows("assistantText")[0]
    ack = command(peer, bridge.fork_assistant(session_id, RowTarget(first_answer["rowId"], first_answer["entityId"])),
                  base=conversation.base())
    assert ack["status"] == "accepted", ack
    fork_id = ack["result"]["sessionId"]
    assert legacy_history(peer, fork_id) == [("userInput", "#sim stream count=1 text=one"), ("assistantText", "one")]
    fork = Conversation(peer, f"conversation/{fork_id}")
    fork.open()
    fork.until(lambda state: bool(state.rows), what="the fork's snapshot")
    assert v4_history(fork) == legacy_history(peer, fork_id)
    assert command(peer, bridge.send_text(fork_id, "#sim stream count=1 text=three"))["result"]["delivery"] == "startNow"
    fork.until(ended(fork, 2), what="the fork's own turn")
    assert legacy_history(peer, fork_id)[-1] == ("assistantText", "three")


def test_a_v4fault_step_drops_a_frame_and_the_client_recovers_by_resync(v4) -> None:
    peer = v4()
    session_id, conversation = created(peer)
    command(peer, bridge.send_text(session_id, "#sim v4fault fault=gap count=5"))
    conversation.until(ended(conversation, 1), what="the turn's end")
    assert conversation.client.resyncs >= 1
    assert v4_history(conversation) == legacy_history(peer, session_id)
    assert fresh_picture(peer, conversation.topic) == conversation.picture()


def test_cancel_background_work_cancels_the_legacy_task(v4) -> None:
    peer = v4()
    session_id, conversation = created(peer)
    command(peer, bridge.send_text(session_id, "#sim bg_bash interval=0.2 output=a|b|c|d|e|f|g|h|i|j"))
    conversation.until(lambda state: any(work["status"] == "running" for work in state.state["backgroundWorks"]),
                       what="the running background work")
    work = conversation.state.state["backgroundWorks"][0]
    ack = command(peer, bridge.cancel_background_work(session_id, work["workId"]))
    assert ack["status"] == "accepted", ack
    cancelled = peer.event(session_id, "session.updated", where=lambda e: e["payload"].get("status") == "cancelled")
    assert cancelled["payload"]["taskId"] == work["workId"]
    conversation.until(lambda state: state.state["backgroundWorks"][0]["status"] == "cancelled",
                       what="the cancelled work")
    again = command(peer, bridge.cancel_background_work(session_id, work["workId"]))
    assert (again["status"], again["reasonCode"]) == ("noop", "background.notRunning")


def test_an_uploaded_attachment_reaches_the_turn_the_send_text_starts(v4) -> None:
    peer = v4()
    session_id, conversation = created(peer)
    data = b"0123456789" * 70_000  # 700 kB: two chunks
    plan = bridge_attachments.upload_plan(data, connection_id="tests", upload_id="up-1", session_id=session_id,
                                          file_name="notes.txt", mime="text/plain")
    assert isinstance(plan, bridge_attachments.UploadPlan) and len(plan.chunks) == 2
    peer.result("v4/attachment/begin", plan.begin)
    for chunk in plan.chunks:
        peer.result("v4/attachment/chunk", chunk)
    ref = peer.result("v4/attachment/commit", plan.commit)["ref"]
    sent = plan.attachment_ref(ref)
    ack = command(peer, bridge.send_text(session_id, "#sim stream count=1 text=ok", attachments=[sent]))
    assert ack["status"] == "accepted", ack
    started = peer.event(session_id, "turn.started")["payload"]
    assert started["attachments"] == [{"fileName": "notes.txt", "mime": "text/plain", "bytes": len(data), "ref": ref}]
    conversation.until(ended(conversation, 1), what="the turn's end")
    assert conversation.rows("userInput")[0]["attachments"] == [sent]
    assert conversation.rows("assistantText")[0]["text"].startswith("[attachments: notes.txt (700000 bytes)]")


def test_a_question_nobody_answers_shows_its_countdown_and_goes_on_by_itself(v4) -> None:
    peer = v4({"ZCODE_SIM_AUTO_RESOLVE": "0.5"})
    # A host whose preferences leave auto-resolution on (omitted: the engine's default).
    peer.auto["session/requestRuntimePreferences"] = lambda frame: {"result": {
        "nativeSearchEnhancementsEnabled": False, "memoryEnabled": False}}
    session_id, conversation = created(peer)
    command(peer, bridge.send_text(session_id, "#sim questions"))
    conversation.until(lambda state: bool(state.state["pendingInteractions"]), what="the pending question")
    countdown = conversation.state.state["pendingInteractions"][0]["autoResolution"]
    assert countdown["state"] == "visibleCountdown" and countdown["deadlineAt"] - countdown["startedAt"] == 500
    conversation.until(ended(conversation, 1), what="the turn going on by itself")
    assert conversation.state.state["pendingInteractions"] == []
    assert conversation.rows("assistantText")[-1]["text"].endswith("Answers: {}")


def test_the_hosts_answer_to_the_legacy_request_wins_over_a_later_v4_answer(v4) -> None:
    peer = v4()
    session_id, conversation = created(peer)
    command(peer, bridge.send_text(session_id, "#sim permission"))
    conversation.until(lambda state: bool(state.state["pendingInteractions"]), what="the pending permission")
    item = conversation.state.state["pendingInteractions"][0]
    asked = peer.wait(lambda f: f.get("method") == "interaction/requestPermission")
    peer.send({"id": asked["id"], "result": {"decision": "deny", "reason": "not now"}})
    resolved = peer.event(session_id, "permission.resolved")["payload"]
    assert (resolved["decision"], resolved["reason"]) == ("deny", "not now")
    conversation.until(lambda state: not state.state["pendingInteractions"], what="the interaction's end")
    late = command(peer, bridge.resolve_interaction(session_id, item["interactionId"], option_id="allow_once"))
    assert (late["status"], late["reasonCode"]) == ("noop", "interaction.alreadyResolved")
    conversation.until(ended(conversation, 1), what="the turn's end")
    assert conversation.rows("assistantText")[-1]["text"].endswith("Permission denied (not now).")


def test_the_sessions_index_follows_legacy_turns_titles_and_a_v4_delete(v4) -> None:
    peer = v4()
    session_id = peer.create(WORKSPACE)
    index = Conversation(peer, f"sessions-index/{WORKSPACE}", applier=SessionsIndexState())
    index.open()
    index.until(lambda state: session_id in state.sessions, what="the session in the index")
    peer.turn(session_id, "#sim stream count=2 text=ok")
    title = peer.event(session_id, "session.titleUpdated")["payload"]["title"]
    index.until(lambda state: state.sessions[session_id]["title"] == title
                and state.sessions[session_id]["phase"] == "completedSuccess", what="the titled, finished session")
    assert index.state.sessions[session_id]["lastAssistantPreview"] == "okok"
    assert command(peer, bridge.rename_session(session_id, "Renamed"))["status"] == "accepted"
    index.until(lambda state: state.sessions[session_id]["titleSource"] == "custom", what="the new title")
    assert index.state.sessions[session_id]["title"] == "Renamed"
    assert command(peer, bridge.delete_session(session_id))["status"] == "accepted"
    index.until(lambda state: session_id not in state.sessions, what="the session's removal")


def test_update_interaction_preferences_turns_the_engines_default_countdown_off(v4) -> None:
    peer = v4({"ZCODE_SIM_AUTO_RESOLVE": "30"})
    # A host whose runtime preferences say nothing about questions: the server's setting decides.
    peer.auto["session/requestRuntimePreferences"] = lambda frame: {"result": {
        "nativeSearchEnhancementsEnabled": False, "memoryEnabled": False}}
    answer = peer.result("workspace/updateInteractionPreferences", {
        "workspace": peer.workspace(), "preferences": {"askUserQuestionAutoResolutionEnabled": False}})
    assert answer == {"workspace": peer.workspace(), "askUserQuestionAutoResolutionEnabled": False,
                      "snoozedInteractionCount": 0}
    session_id, conversation = created(peer)
    command(peer, bridge.send_text(session_id, "#sim questions"))
    conversation.until(lambda state: bool(state.state["pendingInteractions"]), what="the pending question")
    assert "autoResolution" not in conversation.state.state["pendingInteractions"][0]

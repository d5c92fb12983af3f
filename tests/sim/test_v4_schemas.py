"""sim/v4 frames against the engine's JSON Schemas (``schemas/engine/v4/``, written from its zod source).

A whole v4 conversation — create, subscribe, a turn with text, reasoning, a tool and a
permission, queue and guide, stop, resync, commands query, unsubscribe — recorded both
ways and checked frame by frame by ``tests/engine_schema.py``. Both come with the schema
work (branch ``schemas``); until it is merged this module is skipped, and the same
frames are checked by the pure parsers and the source's shapes (test_v4_topics.py,
test_v4_projection.py, test_v4_commands.py).
"""

from __future__ import annotations

import pytest

from tests.sim.v4_fakes import Engine, call, create_session, make_plane, subscribe
from zcode_acp.protocol.v4 import commands as bridge

engine_schema = pytest.importorskip("tests.engine_schema", reason="the engine's schemas (branch schemas) are not here")


def _send(plane, wire, command, base=None, command_id="x"):
    return call(plane, "v4/command", bridge.envelope(command, command_id=command_id, client_id="bridge", issued_at=1,
                                                     base=base), wire)


@pytest.mark.parametrize("fragment_bytes", [700, 1024 * 1024], ids=["fragments", "complete"])
def test_a_whole_v4_conversation_passes_the_engines_schemas(fragment_bytes: int) -> None:
    plane, port, wire, clock = make_plane(fragment_bytes=fragment_bytes)
    session_id = create_session(plane, wire)
    topic = f"conversation/{session_id}"
    client, _ = subscribe(plane, wire, topic)
    engine = Engine(plane, session_id, wire)
    _send(plane, wire, bridge.send_text(session_id, "fix the build"), command_id="c1")
    engine.start("fix the build")
    engine.text("thinking about it", "reasoning_delta")
    engine.text("Let me look")
    engine.event("model.streaming", {"kind": "tool_call", "toolCallId": "t1", "toolName": "Write", "input": {}})
    engine.event("permission.requested", {"requestId": "server-1", "toolCallId": "t1", "toolName": "Write",
                                          "autoResolveMs": 30_000})
    interaction = plane.sessions.get(session_id).state["pendingInteractions"][0]["interactionId"]
    _send(plane, wire, bridge.resolve_interaction(session_id, interaction, option_id="allow_once"), command_id="c2")
    engine.tool("t2", tails=("compiling\n", "compiling\nlinking\n"))
    _send(plane, wire, bridge.send_text(session_id, "and then lint"), command_id="c3")
    _send(plane, wire, bridge.send_text(session_id, "steer", requested_delivery="guide"), command_id="c4")
    plane.faults.arm("gap")
    _send(plane, wire, bridge.stop(session_id), command_id="c5")
    engine.complete("cancelled")
    engine.event("session.titleUpdated", {"previousTitle": "", "source": "first_input", "title": "Fix the build"})
    _more_of_everything(plane, wire, engine, session_id)
    call(plane, "v4/commands/query", bridge.query_params([(session_id, "c1"), (None, "never")]), wire)
    call(plane, "v4/conversation/unsubscribe", {"topic": topic, "connectionId": "bridge",
                                                "subscriptionId": client.sub.subscription_id}, wire)
    assert client.resyncs >= 1
    findings = engine_schema.check_conversation(wire.conversation, "cli016")
    assert not findings, "\n".join(str(f) for f in findings[:10])


def _more_of_everything(plane, wire, engine, session_id) -> None:
    """Background work, a subagent, a question, usage, a plan, a stream recovery, a failure, a compaction, a fork."""
    projection = plane.sessions.get(session_id)
    _send(plane, wire, bridge.set_auto_drain(session_id, False),
          base=bridge.Base(projection.revision, projection.log.log_epoch), command_id="d0")
    engine.start("more")
    engine.event("streamRecovery.updated", {"state": "recovering", "reason": "model_request_aborted"})
    engine.event("streamRecovery.updated", {"state": "recovered"})
    engine.tool("bg1", result="Command running in background with ID: exec_9")
    engine.event("session.updated", {"taskId": "exec_9", "toolCallId": "bg1", "toolName": "Bash",
                                     "description": "build", "status": "running"})
    engine.event("tool.updated", {"kind": "scheduled", "toolCallId": "a1", "toolName": "Task",
                                  "input": {"subagent_type": "explore"}})
    engine.event("tool.updated", {"kind": "result", "toolCallId": "a1", "result": "found it"})
    engine.event("userInput.requested", {"requestId": "server-2", "toolCallId": "q1", "questions": [
        {"question": "Which?", "header": "Pick", "options": [{"label": "a"}, {"label": "b"}]}]})
    engine.event("userInput.resolved", {"requestId": "server-2"})
    engine.event("session.updated", {"usage": {"inputTokens": 5000}, "contextWindow": 200000})
    engine.event("state.updated", {"patch": {"todos": [{"content": "x", "status": "in_progress"}],
                                             "model": {"current": {"providerId": "zhipu", "modelId": "glm-5-air"}}}})
    engine.text("an answer")
    engine.event("turn.failed", {"error": {"code": "PROVIDER", "message": "overloaded"}})
    engine.event("session.updated", {"taskId": "exec_9", "toolName": "Bash", "description": "build",
                                     "status": "completed", "outputTail": "done"})
    engine.start("compaction", source="compaction")
    engine.complete()
    rows = projection.rows.rows
    answer = next(r for r in reversed(rows) if r["kind"] == "assistantText")
    base = bridge.Base(projection.revision, projection.log.log_epoch)
    _send(plane, wire, bridge.fork_assistant(session_id, bridge.RowTarget(answer["rowId"], answer["entityId"])),
          base=base, command_id="d1")
    user = next(r for r in reversed(rows) if r["kind"] == "userInput")
    base = bridge.Base(projection.revision, projection.log.log_epoch)
    _send(plane, wire, bridge.edit_user_query(session_id, bridge.RowTarget(user["rowId"], user["entityId"]), "again"),
          base=base, command_id="d2")

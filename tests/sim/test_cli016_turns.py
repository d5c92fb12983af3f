"""The 0.16 engine, turn level: send, the end events, retries, stop acks (docs/simulator.md, items 5, 12 and 21–23).

Shapes checked against the official schemas' required keys
(``packages/shared/src/zcode-protocol/index.ts`` in the engine's public source).
"""

from __future__ import annotations

import uuid

import pytest

from tests.sim.peer import SimPeer

COMPLETED_REQUIRED = {"response", "tokenCount", "toolCallCount", "duration", "resultType"}


def stop(peer: SimPeer, sid: str, payload: dict) -> dict:
    return peer.result("v4/command", {"commandId": uuid.uuid4().hex, "clientId": "tests", "sessionId": sid,
                                      "type": "stop", "payload": payload, "issuedAt": 1})


def test_send_answers_after_prompt_started_and_the_input_id_is_echoed(today: SimPeer) -> None:
    sid = today.create()
    start = today.mark()
    send_id = today.request("session/send", {"sessionId": sid, "content": "hello", "inputId": "in-1"})
    answer = today.answer_to(send_id)
    notice = today.wait(lambda f: f.get("method") == "state.updated", start=start)
    assert today.index_of(notice) < today.index_of(answer)
    assert notice["params"]["reason"] == "prompt_started"
    result = answer["result"]
    assert result["accepted"] is True and result["sessionId"] == sid and isinstance(result["stateRevision"], int)
    started = today.event(sid, "turn.started", start)
    assert "turnId" not in started["payload"] and started["turnId"]
    assert started["payload"]["inputId"] == "in-1" and started["payload"]["foregroundExecutionId"]
    done = today.event(sid, "turn.completed", start)
    assert set(done["payload"]) >= COMPLETED_REQUIRED and done["payload"]["inputId"] == "in-1"
    assert done["payload"]["resultType"] == "success" and "hello" in done["payload"]["response"]


def test_a_send_while_a_turn_runs_is_refused_with_todays_words(today: SimPeer) -> None:
    sid = today.create()
    start, send_id = today.send_prompt(sid, "#sim hang")
    today.answer_to(send_id)
    error = today.error("session/send", {"sessionId": sid, "content": "again"})
    assert error == {"code": -32010, "message": "A prompt is already running for this session"}


@pytest.mark.parametrize("result_type", ["cancelled", "error_max_turns", "error_max_budget",
                                         "error_during_execution", "error_max_tool_calls"])
def test_every_result_type_ends_a_turn_with_every_required_field(today: SimPeer, result_type: str) -> None:
    sid = today.create()
    events = today.turn(sid, f"#sim end result={result_type}")
    done = events[-1]
    assert done["type"] == "turn.completed" and set(done["payload"]) >= COMPLETED_REQUIRED
    assert done["payload"]["resultType"] == result_type


def test_a_failed_turn_names_its_error_type_and_phase(today: SimPeer) -> None:
    sid = today.create()
    start, send_id = today.send_prompt(sid, "#sim fail code=context_overflow message=too-long")
    today.answer_to(send_id)
    failed = today.event(sid, "turn.failed", start)["payload"]
    assert failed["error"]["type"] and failed["error"]["message"] == "too-long" and failed["turnPhase"]


def test_the_engine_retries_a_model_request_itself_and_stores_the_message_once(today: SimPeer) -> None:
    sid = today.create()
    events = today.turn(sid, "#sim retry attempts=2")
    retries = [e["payload"]["_meta"]["zcode"]["apiRetry"] for e in events
               if e["type"] == "session.updated" and "_meta" in e["payload"]]
    assert [r and r["attempt"] for r in retries] == [1, 2, None]  # cleared once a request succeeds
    recovery = [e["payload"] for e in events if e["type"] == "streamRecovery.updated"]
    assert recovery[0]["retryNumber"] == 1 and recovery[-1]["streamMode"] == "sse"
    assert events[-1]["payload"]["resultType"] == "success"
    history = today.result("session/messages", {"sessionId": sid})["messages"]
    assert [m["info"]["role"] for m in history] == ["user", "assistant"]
    assert len([e for e in events if e["type"] == "message.upserted"]) == 1  # the user's message, once


def test_system_messages_and_checkpoints_are_announced(today: SimPeer) -> None:
    sid = today.create()
    events = today.turn(sid, "#sim system")
    kinds = [e["type"] for e in events]
    assert "checkpoint.created" in kinds
    assert {"content": "Context was summarized.", "type": "system"} in [e["payload"] for e in events
                                                                      if e["type"] == "message.upserted"]


def test_a_stop_for_an_execution_that_no_longer_runs_is_a_noop(today: SimPeer) -> None:
    sid = today.create()
    first = today.turn(sid, "#sim stream count=2")
    ended = first[0]["payload"]["foregroundExecutionId"]
    ack = stop(today, sid, {"expectedForegroundExecutionId": ended})
    assert (ack["status"], ack["reasonCode"]) == ("noop", "guard.stopTargetChanged")
    assert isinstance(ack["revisionAtDecision"], int)
    start, send_id = today.send_prompt(sid, "#sim hang")
    today.answer_to(send_id)
    today.event(sid, "turn.started", start)
    accepted = stop(today, sid, {})  # an empty payload stops whatever runs
    assert accepted["status"] == "accepted" and "reasonCode" not in accepted
    assert today.event(sid, "turn.completed", start)["payload"]["resultType"] == "cancelled"


def test_steer_events_name_the_target_turn(today: SimPeer) -> None:
    sid = today.create()
    start, send_id = today.send_prompt(sid, "#sim slow count=40 interval=0.02")
    today.answer_to(send_id)
    started = today.event(sid, "turn.started", start)
    today.result("v4/command", {"commandId": "g1", "clientId": "tests", "sessionId": sid, "type": "sendText",
                                "payload": {"text": "use tabs", "requestedDelivery": "guide"}, "issuedAt": 1})
    queued = today.event(sid, "turn.steerQueued", start)["payload"]
    assert queued["targetTurnId"] == started["turnId"]
    assert {"pendingInputId", "input", "inputPreview", "inputSize", "queueLength"} <= set(queued)
    drained = today.event(sid, "turn.steerDrained", start)["payload"]
    assert drained["targetTurnId"] == started["turnId"] and drained["drainedInputs"][0]["text"] == "use tabs"

"""A turn's end → the prompt's answer, and the engine's own retries → a card (protocol/turn_end.py, recovery.py).

Payloads shaped as the engine's strict schemas say (``zcodeTurnCompletedEventPayloadSchema``,
``zcodeTurnFailedEventPayloadSchema``, ``zcodeSessionApiRetryStatusSchema`` in its public source).
"""

import pytest

from zcode_acp.protocol import turn_end
from zcode_acp.protocol.recovery import RetryCard
from zcode_acp.protocol.translator import TurnTranslator


def completed(result_type: str, response: str = "partial answer") -> dict:
    return {"response": response, "tokenCount": 10, "toolCallCount": 0, "duration": 1.5, "resultType": result_type}


@pytest.mark.parametrize("result_type, stop", [
    ("success", "end_turn"), ("cancelled", "cancelled"), ("error_max_turns", "max_turn_requests"),
    ("error_max_tool_calls", "max_turn_requests"), ("error_max_budget", "max_tokens")])
def test_every_result_type_has_its_stop_reason(result_type, stop):
    ending = turn_end.completed(completed(result_type))
    assert ending.stop_reason == stop and ending.error is None
    assert bool(ending.notice) == result_type.startswith("error_")


def test_an_error_during_execution_is_an_error_in_the_engines_words():
    ending = turn_end.completed(completed("error_during_execution", "Tool runner crashed"))
    assert ending.stop_reason is None and ending.error is not None
    assert "Tool runner crashed" in ending.error.message and ending.error.data["resultType"] == "error_during_execution"


def test_an_unknown_result_type_is_an_ordinary_end():
    assert turn_end.completed(completed("something_new")).stop_reason == "end_turn"


def test_a_failed_turn_carries_type_phase_and_detail():
    error = turn_end.failed({"error": {"type": "ModelError", "message": "Rate limited", "detail": "try later",
                                       "retryable": True}, "turnPhase": "model_request"})
    assert error.message == "ZCode turn failed: Rate limited (ModelError): try later"
    assert error.data == {"backendCode": "ModelError", "backendMessage": "Rate limited", "errorType": "ModelError",
                          "turnPhase": "model_request", "retryable": True, "detail": "try later"}


def test_the_seeds_failed_shape_still_reads():
    error = turn_end.failed({"error": {"code": "context_overflow", "message": "too long"}})
    assert error.message == "ZCode turn failed: too long (context_overflow)"


def retrying(attempt: int, where: str = "meta") -> dict:
    status = {"kind": "api_retry", "attempt": attempt, "maxRetries": 10, "retryDelayMs": 2000, "errorStatus": 429,
              "error": "429 Too Many Requests"}
    return {"_meta": {"zcode": {"apiRetry": status}}} if where == "meta" else {"apiRetry": status}


def test_an_api_retry_opens_one_card_retitles_it_and_closes_it_when_cleared():
    card = RetryCard("m1")
    [opened] = card.session_updated(retrying(1))
    assert opened["sessionUpdate"] == "tool_call" and opened["status"] == "in_progress"
    assert opened["title"] == "Retrying the model request (1/10) in 2s: 429 Too Many Requests"
    [again] = card.session_updated(retrying(2, where="top"))
    assert again["toolCallId"] == opened["toolCallId"] and "(2/10)" in again["title"]
    assert card.session_updated({"usage": {"inputTokens": 5}}) == []  # no retry field: nothing to say
    assert card.session_updated({"_meta": {"zcode": {"apiRetry": None}}}) == [
        {"sessionUpdate": "tool_call_update", "toolCallId": opened["toolCallId"], "status": "completed",
         "title": "The model request went through after retrying"}]  # not the interim "(2/10)" (issue 32)
    assert not card.open


def test_stream_recovery_lasts_until_the_model_makes_progress():
    translator = TurnTranslator(message_id="m")
    started = translator.feed({"type": "streamRecovery.updated", "payload": {
        "attemptId": "a", "failureKind": "stream_interrupted", "message": "cut", "retryNumber": 1, "maxRetries": 3}})
    assert started[0]["title"] == "Recovering the interrupted model stream (1/3)"
    # A cleared API retry does not end a stream recovery; the model's next output does.
    assert translator.feed({"type": "session.updated", "payload": {"_meta": {"zcode": {"apiRetry": None}}}}) == []
    back = translator.feed({"type": "model.streaming", "payload": {"kind": "text_delta", "delta": "again"}})
    assert back[0] == {"sessionUpdate": "tool_call_update", "toolCallId": started[0]["toolCallId"],
                       "status": "completed", "title": "The interrupted model stream was recovered"}
    assert back[1]["sessionUpdate"] == "agent_message_chunk"


def test_a_blocked_recovery_fails_its_card_and_a_failed_turn_closes_an_open_one():
    card = RetryCard("m2")
    blocked = card.stream_recovery({"attemptId": "a", "reason": "running_side_effect", "message": "Bash still runs"})
    assert blocked[-1]["status"] == "failed" and "Bash still runs" in blocked[0]["title"]
    translator = TurnTranslator(message_id="m")
    translator.feed({"type": "session.updated", "payload": retrying(1)})
    assert translator.close_open_cards()[0]["status"] == "failed"

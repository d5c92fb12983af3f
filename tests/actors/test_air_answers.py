"""``_session/steering`` and ``_session/async_task/stop`` answer in the reference adapters' shapes
(actors/session/extensions/air.py; the outcomes are those of tests/protocol/golden/air/reference.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from zcode_acp.actors.session.extensions import air
from zcode_acp.protocol import extension_calls
from zcode_acp.protocol.errors import INVALID_PARAMS, METHOD_NOT_FOUND, RpcError

GOLDEN = json.loads((Path(__file__).parent.parent / "protocol" / "golden" / "air" / "reference.json").read_text())
OUTCOMES = GOLDEN["shapes"]["steering"]["outcomes"]


def run(call: extension_calls.Steer | None, result: Any = None, error: Any = None) -> tuple[list[Any], list[Any]]:
    """``call`` a steering's, or None for the task stop's answers."""
    results: list[Any] = []
    errors: list[Any] = []
    on_result, on_error = (air.steering_answers(call.prompt_required_when_idle, results.append, errors.append)
                           if call is not None else air.stop_answers(results.append, errors.append))
    on_result(result) if error is None else on_error(error)
    return results, errors


def steering(opt_in: bool = False) -> extension_calls.Steer:
    params: dict[str, Any] = {"sessionId": "s", "prompt": [{"type": "text", "text": "and tests"}]}
    if opt_in:
        params.update(GOLDEN["shapes"]["steering"]["idle_opt_in"])
    return extension_calls.steering(params)


IDLE = RpcError(INVALID_PARAMS, "no turn is running", {"reason": "noRunningTurn"})


def test_a_steer_the_turn_took_is_injected_and_keeps_todays_fields() -> None:
    [answer], _ = run(steering(), {"applied": True, "queued": False, "delivery": "steer"})
    assert answer["outcome"] == "injected" and answer["outcome"] in OUTCOMES and answer["applied"] is True


def test_a_steer_the_engine_queued_starts_a_new_turn() -> None:
    [answer], _ = run(steering(), {"applied": False, "queued": True, "delivery": "queue"})
    assert answer["outcome"] == "startedNewTurn"


def test_idle_with_the_opt_in_is_prompt_required_and_without_it_an_error() -> None:
    [answer], _ = run(steering(opt_in=True), error=IDLE)
    assert answer == GOLDEN["shapes"]["steering"]["prompt_required_result"]
    results, [error] = run(steering(), error=IDLE)
    assert results == [] and error is IDLE


def test_an_engine_refusal_is_failed_but_a_missing_method_stays_an_error() -> None:
    [answer], _ = run(steering(), error={"code": -32603, "message": "cannot steer"})
    assert answer == {"outcome": "failed"}
    _, [error] = run(steering(), error={"code": METHOD_NOT_FOUND, "message": "no"})
    assert error["code"] == METHOD_NOT_FOUND


def test_async_task_stop_answers_stopped() -> None:
    call = None  # the stop's answers
    assert run(call, {})[0] == [{"stopped": True}]
    assert run(call, {"cancelled": False})[0] == [{"stopped": False}]
    assert run(call, error={"code": -32602, "message": "no such task"})[0] == [{"stopped": False}]
    wrapped = RpcError(-32603, "ZCode backend error", {"backendCode": -32602, "backendMessage": "no such task"})
    assert run(call, error=wrapped)[0] == [{"stopped": False}]
    mine = RpcError(INVALID_PARAMS, "asyncTaskId must be a string")
    assert run(call, error=mine)[1] == [mine]

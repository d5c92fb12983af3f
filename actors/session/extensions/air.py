"""The answers of the AIR extension methods, in the reference adapters' shapes.

``_session/steering`` answers ``{outcome}`` (``injected``, ``startedNewTurn``,
``promptRequired``, ``failed``) and ``_session/async_task/stop`` answers ``{stopped}``
(protocol/air.py names the packages they are read from). Their handlers (steering.py,
tasks.py) run the same work as today's names; this only reshapes what it answers,
so a client of either name gets what it expects. Today's fields stay in the steering
answer (``applied``, ``queued``, ``delivery``): a client of the old name reads them.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

from zcode_acp.protocol import air
from zcode_acp.protocol.errors import INVALID_PARAMS, METHOD_NOT_FOUND, RpcError

Callback = Callable[[Any], None]


def _no_running_turn(error: Any) -> bool:
    return (isinstance(error, RpcError) and error.code == INVALID_PARAMS
            and isinstance(error.data, dict) and error.data.get("reason") == "noRunningTurn")


def _engine_refused(error: Any) -> bool:
    """An error the engine answered (its error object, or the bridge's wrap of it, which keeps
    ``backendCode``; a refused v4 command's ``reasonCode``), not one the bridge raised itself
    nor a method the engine lacks."""
    if isinstance(error, RpcError):
        return error.code != METHOD_NOT_FOUND and isinstance(error.data, dict) and bool(
            {"backendCode", "reasonCode"} & set(error.data))
    return isinstance(error, dict) and error.get("code") != METHOD_NOT_FOUND


def steering_answers(prompt_required_when_idle: bool, on_result: Callback,
                     on_error: Callback) -> tuple[Callback, Callback]:
    """``_session/steering``'s ``{outcome}`` from today's ``{applied, queued, delivery}`` or error."""
    def steered(result: Any) -> None:
        result = result if isinstance(result, dict) else {}
        # A text the engine queued runs as a turn of its own after the running one.
        outcome = air.INJECTED if result.get("applied", True) else air.STARTED_NEW_TURN
        on_result({**result, "outcome": outcome})

    def not_steered(error: Any) -> None:
        if _no_running_turn(error) and prompt_required_when_idle:
            on_result({"outcome": air.PROMPT_REQUIRED, "reason": "noRunningTurn"})
        elif _engine_refused(error):
            on_result({"outcome": air.FAILED})
        else:
            on_error(error)

    return steered, not_steered


def stop_answers(on_result: Callback, on_error: Callback) -> tuple[Callback, Callback]:
    """``_session/async_task/stop``'s ``{stopped}`` from the task cancel's answer or error."""
    def stopped(result: Any) -> None:
        on_result({"stopped": not (isinstance(result, dict) and result.get("cancelled") is False)})

    def not_stopped(error: Any) -> None:
        if _engine_refused(error):  # no such task, or one already over: nothing was stopped
            on_result({"stopped": False})
        else:
            on_error(error)

    return stopped, not_stopped

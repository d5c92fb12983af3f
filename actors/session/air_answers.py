"""The answers of the AIR extension methods, in the reference adapters' shapes.

``_session/steering`` answers ``{outcome}`` (``injected``, ``startedNewTurn``,
``promptRequired``, ``failed``) and ``_session/async_task/stop`` answers ``{stopped}``
(protocol/air.py names the packages they are read from). The Session (actor.py) hands
the work to its controls (extensions.py) or the v4 path as for today's names; this only
reshapes what they answer,
so a client of either name gets what it expects. Today's fields stay in the steering
answer (``applied``, ``queued``, ``delivery``): a client of the old name reads them.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

from zcode_acp.protocol import air
from zcode_acp.protocol.commands import ExtensionCall
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


def shaped(call: ExtensionCall, on_result: Callback, on_error: Callback) -> tuple[Callback, Callback]:
    if call.air_answer == "steering":
        def steered(result: Any) -> None:
            result = result if isinstance(result, dict) else {}
            # A text the engine queued runs as a turn of its own after the running one.
            outcome = air.INJECTED if result.get("applied", True) else air.STARTED_NEW_TURN
            on_result({**result, "outcome": outcome})

        def not_steered(error: Any) -> None:
            if _no_running_turn(error) and call.prompt_required_when_idle:
                on_result({"outcome": air.PROMPT_REQUIRED, "reason": "noRunningTurn"})
            elif _engine_refused(error):
                on_result({"outcome": air.FAILED})
            else:
                on_error(error)

        return steered, not_steered
    if call.air_answer == "async_task_stop":
        def stopped(result: Any) -> None:
            on_result({"stopped": not (isinstance(result, dict) and result.get("cancelled") is False)})

        def not_stopped(error: Any) -> None:
            if _engine_refused(error):  # no such task, or one already over: nothing was stopped
                on_result({"stopped": False})
            else:
                on_error(error)

        return stopped, not_stopped
    return on_result, on_error

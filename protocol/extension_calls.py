"""The params of the ACP extension methods, validated: one reader each, one typed call out.

Each reader raises ``-32602`` naming the field; what it returns is all the Session's handler
of that method needs (``actors/session/extensions/``: the one table of handlers, each calling
its reader once). Pure: dicts in, frozen records out.

The 0.16 engine checks its params with strict schemas (an unknown key fails the whole call),
so a client's extra keys never reach an ``EngineCall``: each reader keeps only the keys the
engine's method takes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

from . import air
from .commands import goal_params, session_title
from .errors import invalid_params
from .session_config import validate_mode


@dataclass(frozen=True, slots=True)
class EngineCall:
    """An engine method called for the session (``sessionId`` added when it is sent)."""

    method: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Steer:
    """Text for the running turn (``session/steer`` or v4 ``sendText``, whichever the engine has)."""

    text: str
    prompt_required_when_idle: bool = False  # _session/steering's _meta.steering.idleBehavior opt-in


@dataclass(frozen=True, slots=True)
class TaskStop:
    """A background task to stop; its card is cancelled when the engine says it stopped."""

    task_id: str


@dataclass(frozen=True, slots=True)
class Setting:
    """A settings change (config id, value), checked again against the session's own choices."""

    config_id: str
    value: Any


@dataclass(frozen=True, slots=True)
class Rename:
    title: str  # trimmed, one line, at most commands.TITLE_LIMIT characters


@dataclass(frozen=True, slots=True)
class RowCall:
    """A v4-only method's params: its required strings, and an optional integer ``rowId``."""

    params: dict[str, Any]


def _required_string(params: dict[str, Any], name: str) -> str:
    value = params.get(name)
    if not isinstance(value, str):
        raise invalid_params(name, "invalid.must_be_string")
    return value


def _kept(params: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {key: params[key] for key in keys if key in params}


def fork(params: dict[str, Any]) -> EngineCall:
    target = params.get("target")
    return EngineCall("session/fork", {"target": target if isinstance(target, dict) else {"kind": "latestCheckpoint"}})


def goal(params: dict[str, Any]) -> EngineCall:
    return EngineCall("session/goal", goal_params(params))


def compact(params: dict[str, Any]) -> EngineCall:
    return EngineCall("session/compact", _kept(params, "instructions"))


def rewind(params: dict[str, Any]) -> EngineCall:
    return EngineCall("session/rewind", _kept(params, "target", "checkpointId"))


def steer(params: dict[str, Any]) -> Steer:
    return Steer(_required_string(params, "content"))


def steering(params: dict[str, Any]) -> Steer:
    """``_session/steering {sessionId, prompt}`` (claude-agent-acp, codex-acp): text or ACP content blocks."""
    prompt = params.get("prompt")
    if isinstance(prompt, list):
        texts = [block.get("text") for block in prompt if isinstance(block, dict) and block.get("type") == "text"]
        prompt = "\n".join(text for text in texts if isinstance(text, str))
    if not isinstance(prompt, str) or not prompt.strip():
        raise invalid_params("prompt", "invalid.must_be_text")
    idle = air.steering_idle_behaviour(params)
    return Steer(prompt, prompt_required_when_idle=idle == air.PROMPT_REQUIRED_BEHAVIOUR)


def cancel_task(params: dict[str, Any]) -> TaskStop:
    return TaskStop(_required_string(params, "taskId"))


def async_task_stop(params: dict[str, Any]) -> TaskStop:
    """``_session/async_task/stop {sessionId, asyncTaskId}`` (the AIR set): the same stop."""
    task_id = _required_string(params, "asyncTaskId").strip()
    if not task_id:
        raise invalid_params("asyncTaskId", "invalid.must_be_nonempty_string")
    return TaskStop(task_id)


def set_mode(params: dict[str, Any]) -> Setting:
    return Setting("mode", validate_mode(params.get("mode")))


def set_thought_level(params: dict[str, Any]) -> Setting:
    return Setting("thought", params.get("thoughtLevel"))  # checked against the model's levels when applied


def rename(params: dict[str, Any]) -> Rename:
    """``_session/rename {sessionId, title}``: ACP has no method for it (schema v1.19: a title only
    travels agent → client in ``session_info_update``)."""
    return Rename(session_title(params.get("title")))


def row_call(*required: str) -> Callable[[dict[str, Any]], RowCall]:
    """The reader of a v4-only method: its required strings, and an optional integer ``rowId``."""
    def read(params: dict[str, Any]) -> RowCall:
        out: dict[str, Any] = {name: _required_string(params, name) for name in required}
        row_id = params.get("rowId")
        if row_id is not None:
            if not isinstance(row_id, int) or isinstance(row_id, bool):
                raise invalid_params("rowId", "invalid.row_id")
            out["rowId"] = row_id
        return RowCall(out)
    return read

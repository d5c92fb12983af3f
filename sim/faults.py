"""Fault steps and scenarios: the ways a backend process can go wrong.

The bridge's reliability tests (docs/reliability.md) need backends that fail
in ways a well-behaved scenario never does: a tool card left open when the turn
fails or the process dies, a child process that keeps the backend's stdout
open after the backend itself is killed, a backend that closes its stdout but
stays alive, and one that dies at start after printing to stderr. Each is a
step type (played by ``TurnRunner``) and a built-in scenario; docs/simulator.md
lists them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any, Protocol
from collections.abc import Callable

import gevent

from .model import SimSession
from .wire import Wire


class FaultHost(Protocol):
    """The server, as the fault steps touch it."""

    wire: Wire
    frozen: bool

    def agent_changed_mode(self, session: SimSession, reason: str) -> None: ...


class FaultRunner(Protocol):
    """The ``TurnRunner`` that plays a fault step, as the step uses it.

    Named here so this module, a layer below the runner (docs/simulator.md, Layers), never imports it.
    """

    server: FaultHost
    session: SimSession

    def emit(self, kind: str, payload: dict[str, Any], push: bool = True, flush: bool = True) -> None: ...

    def step_text(self, step: dict[str, Any]) -> None: ...

    def _declare(self, name: str, tool_input: dict[str, Any]) -> str: ...


def step_tool_open(runner: FaultRunner, step: dict[str, Any]) -> None:
    """Declare and start a tool, and never finish it: its card stays open."""
    name = step.get("name", "Bash")
    tool_input = step.get("input") or {"command": "make test"}
    tool_id = runner._declare(name, tool_input)
    runner.emit("tool.updated", {"kind": "scheduled", "toolCallId": tool_id, "toolName": name, "input": tool_input})
    runner.emit("tool.updated", {"kind": "started", "toolCallId": tool_id})


def step_spawn(runner: FaultRunner, step: dict[str, Any]) -> None:
    """Start a child (a Bash tool's command) that inherits the backend's stdout.

    The child's pid is streamed as text (``child <pid> ``) so a test can find it.
    """
    command = step.get("command") or ["sleep", "300"]
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL)  # stdout and stderr: inherited
    runner.step_text({"text": f"child {child.pid} "})


def step_close_stdout(runner: FaultRunner, step: dict[str, Any]) -> str:
    """Close stdout and stay alive, reading stdin and answering nothing.

    ``os.close`` is not used: gevent (25.8+, patched in) defers a pipe's close to
    a loop "check" callback, which only runs once the loop wakes for something
    else; a backend that then waits on nothing never closes. ``dup2`` of
    ``/dev/null`` over the descriptor drops the pipe's write end at once and
    leaves any later stray write harmless.
    """
    runner.server.wire.flush()
    runner.server.frozen = True
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, runner.server.wire.fd)
    os.closerange(null, null + 1)  # not os.close: see above
    while True:
        gevent.sleep(3600)


def step_burst(runner: FaultRunner, step: dict[str, Any]) -> None:
    """``count`` text deltas, then a mode change, all in one write to stdout.

    One write of less than PIPE_BUF bytes reaches the bridge in one read, so
    the order the bridge delivers them in is its own, not the pipe's timing.
    """
    for _ in range(int(step.get("count", 8))):
        runner.emit("model.streaming", {"kind": "text_delta", "delta": step.get("text", "x")}, flush=False)
    runner.session.mode = step.get("mode", "plan")
    runner.server.agent_changed_mode(runner.session, "tool_call")  # in the dialect's own state.updated shape


STEPS: dict[str, Callable[[FaultRunner, dict[str, Any]], Any]] = {
    "burst": step_burst,
    "tool_open": step_tool_open,
    "spawn": step_spawn,
    "close_stdout": step_close_stdout,
}


def _fail_mid_tool(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": "Running the tests. "}, {"type": "tool_open"},
            {"type": "fail", "code": params.get("code", "internal_error"),
             "message": params.get("message", "the model gave up")}]


def _die_mid_tool(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": "Running the tests. "}, {"type": "tool_open"},
            {"type": "sleep", "seconds": float(params.get("after", 0.05))}, {"type": "die"}]


def _spawn_child(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "tool_open"}, {"type": "spawn"}, {"type": "hang"}]


def _close_stdout(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": "Closing stdout. "}, {"type": "close_stdout"}]


def _text_then_mode(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "burst", "count": int(params.get("count", 8)), "mode": params.get("mode", "plan")}]


SCENARIOS: dict[str, Callable[[dict[str, str]], list[dict[str, Any]]]] = {
    "text_then_mode": _text_then_mode,
    "fail_mid_tool": _fail_mid_tool,
    "die_mid_tool": _die_mid_tool,
    "spawn_child": _spawn_child,
    "close_stdout": _close_stdout,
}


def die_at_start_if_asked() -> None:
    """``ZCODE_SIM_DIE_AT_START=<text>``: print the text on stderr and exit 3 at once.

    With ``ZCODE_SIM_TRACE`` set, each such start is recorded there first
    (``{"diedAtStart": pid}``) so a test can count the bridge's restarts.
    """
    text = os.environ.get("ZCODE_SIM_DIE_AT_START")
    if not text:
        return
    trace = os.environ.get("ZCODE_SIM_TRACE")
    if trace:
        with open(trace, "a", encoding="utf-8") as handle:
            handle.write(f'{{"diedAtStart": {os.getpid()}}}\n')
    sys.stderr.write(text + "\n")
    sys.stderr.flush()
    os._exit(3)

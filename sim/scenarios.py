"""Scenarios: what the simulated agent does with a prompt, as data.

A scenario is a list of steps (JSON objects with a ``type``). The prompt picks
one with a first line ``#sim <name> [key=value ...]``; otherwise the default
scenario runs (``demo``, or the ``default`` named in the file that
``ZCODE_SIM_SCENARIOS`` points to). Built-in scenarios take their parameters
from the ``key=value`` pairs. docs/simulator.md lists every step type.
"""

from __future__ import annotations

import json
import os
import shlex
from typing import Any

from . import faults


def _num(params: dict[str, str], key: str, default: float) -> float:
    try:
        return float(params.get(key, default))
    except ValueError:
        return default


def demo(params: dict[str, str]) -> list[dict[str, Any]]:
    delay = _num(params, "delay", 0.02)
    return [
        {"type": "reasoning", "text": "The user wants a tour. I should look at the README first, then list the files.",
         "delay": delay},
        {"type": "text", "text": "Let me look at the project.", "delay": delay},
        {"type": "tool", "name": "Read", "input": {"file_path": "README.md"},
         "result": "# Example project\n\nA small demo workspace.\n", "delay": delay},
        {"type": "tool", "name": "Bash", "input": {"command": "ls -la", "description": "List files"},
         "progress": ["total 8\n", "total 8\ndrwxr-xr-x  src\n", "total 8\ndrwxr-xr-x  src\n-rw-r--r--  README.md\n"],
         "result": {"content": "total 8\ndrwxr-xr-x  src\n-rw-r--r--  README.md\n", "success": True,
                    "perf": {"exitCode": 0}},
         "delay": delay},
        {"type": "todos", "todos": [
            {"content": "Read the README", "status": "completed", "priority": "high"},
            {"content": "Explore src/", "status": "pending", "priority": "medium"}]},
        {"type": "text", "text": "This is a small project: a README and a `src/` folder. "
                                 "Ask me to open anything in it.", "delay": delay},
    ]


def stream(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "stream", "count": int(_num(params, "count", 1000)), "text": params.get("text", "x"),
             "stamp": bool(params.get("stamp"))}]


def slow(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "stream", "count": int(_num(params, "count", 50)), "text": params.get("text", "tick "),
             "interval": _num(params, "interval", 0.1), "stamp": bool(params.get("stamp"))}]


def history(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "history", "count": int(_num(params, "count", 10000))}, {"type": "text", "text": "ok"}]


def fail(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": "Working on it…"},
            {"type": "fail", "code": params.get("code", "internal_error"),
             "message": params.get("message", "the model gave up"), "times": int(_num(params, "times", 1_000_000))},
            {"type": "text", "text": "Recovered."}]


def die(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": "About to crash…"}, {"type": "sleep", "seconds": _num(params, "after", 0.05)},
            {"type": "die"}]


def hang(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": "Thinking very hard…"}, {"type": "hang"}]


def freeze(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": "…"}, {"type": "freeze"}]


def gap(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": "one "}, {"type": "gap", "text": "two "}, {"type": "text", "text": "three "},
            {"type": "duplicate"}, {"type": "text", "text": "four"}]


def edit(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "tool", "name": "Edit",
             "input": {"file_path": "/tmp/example.py", "old_string": "x = 1", "new_string": "x = 2"},
             "result": "edited"},
            {"type": "text", "text": "Changed x."}]


def plan_mode(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": "Switching to plan mode."}, {"type": "mode", "mode": params.get("mode", "plan")}]


def evict(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": "Done; the backend will forget this session now."}, {"type": "evict"}]


def permission(params: dict[str, str]) -> list[dict[str, Any]]:
    step: dict[str, Any] = {"type": "permission", "tool": params.get("tool", "Bash")}
    if "kinds" in params:
        step["kinds"] = params["kinds"].split(",")
    return [{"type": "text", "text": "I need to run a command. "}, step]


def plan(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": "Here is my plan. "},
            {"type": "plan", "plan": params.get("plan", "1. Write the tests\n2. Make them pass")}]


def questions(params: dict[str, str]) -> list[dict[str, Any]]:
    asked = [{"question": "Which file should I test?", "header": "File",
              "options": [{"label": "auth.test.ts"}, {"label": "user.test.ts"}]}]
    if params.get("multi"):
        asked.append({"question": "Which checks should run?", "header": "Checks", "multiSelect": True,
                      "options": [{"label": "lint"}, {"label": "types"}, {"label": "unit"}]})
    return [{"type": "questions", "questions": asked}]


def ask_streaming(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "stream", "count": 10, "text": "tick ", "interval": 0.01},
            {"type": "permission", "tool": "Bash"},
            {"type": "text", "text": "and after it."}]


def bg_bash(params: dict[str, str]) -> list[dict[str, Any]]:
    lines = params.get("output", "compiling|linking|done").split("|")
    return [{"type": "text", "text": "Starting the build in the background."},
            {"type": "background", "tool": "Bash", "command": params.get("command", "make build"),
             "status": params.get("status", "completed"), "interval": _num(params, "interval", 0.02),
             "after": _num(params, "after", 0.05), "output": [line + "\n" for line in lines]}]


def bg_agent(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": "Dispatching a sub-agent."},
            {"type": "background", "tool": "Agent", "description": params.get("description", "Read README heading"),
             "status": params.get("status", "completed"), "output": [], "after": _num(params, "after", 0.05)}]


def subagent(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "tool", "name": "Agent", "input": {"description": "Find the config loader", "prompt": "..."},
             "result": "Found it in config.py.\nagentId: agent_73c7c63d\n"
                       "<usage>subagent_tokens: 40904 tool_uses: 1 duration_ms: 10559</usage>"},
            {"type": "text", "text": "The sub-agent found it."}]


BUILTIN = {
    "demo": demo, "stream": stream, "slow": slow, "fail": fail, "die": die, "hang": hang,
    "freeze": freeze, "gap": gap, "edit": edit, "plan_mode": plan_mode, "evict": evict,
    "permission": permission, "plan": plan, "questions": questions, "ask_streaming": ask_streaming,
    "bg_bash": bg_bash, "bg_agent": bg_agent, "subagent": subagent, "history": history,
}
BUILTIN.update(faults.SCENARIOS)  # fail_mid_tool, die_mid_tool, spawn_child, close_stdout


class ScenarioBook:
    """Built-in scenarios plus those of an optional JSON file."""

    def __init__(self, path: str | None = None) -> None:
        self.named: dict[str, list[dict[str, Any]]] = {}
        self.default = "demo"
        path = path or os.environ.get("ZCODE_SIM_SCENARIOS")
        if path:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
            for name, scenario in (data.get("scenarios") or {}).items():
                self.named[name] = scenario["steps"] if isinstance(scenario, dict) else scenario
            self.default = data.get("default", self.default)

    def pick(self, prompt: str) -> tuple[str, list[dict[str, Any]]]:
        first = prompt.split("\n", 1)[0].strip()
        name, params = self.default, {}
        if first.startswith("#sim "):
            words = shlex.split(first[5:])
            if words:
                name = words[0]
                params = dict(word.split("=", 1) for word in words[1:] if "=" in word)
        if name in self.named:
            return name, self.named[name]
        if name in BUILTIN:
            return name, BUILTIN[name](params)
        return "unknown", [{"type": "text", "text": f"(zcode-sim: no scenario named {name!r})"}]

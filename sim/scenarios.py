"""Scenarios: what the simulated agent does with a prompt, as data.

A scenario is a list of steps (JSON objects with a ``type``). The prompt picks
one with a first line ``#sim <name> [key=value ...]``; otherwise the default
scenario runs (``reply``, which answers the prompt itself, or the ``default``
named in the file that ``ZCODE_SIM_SCENARIOS`` points to). Built-in scenarios
take their parameters from the ``key=value`` pairs. docs/simulator.md lists
every step type; ``list_scenarios()`` names every scenario with one line each.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from typing import Any

from . import faults, provider_limits

# The prompt itself, handed to the scenarios that answer it (never a user's key=value).
PROMPT = "_prompt"


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


def end(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": params.get("text", "Working on it… ")},
            {"type": "end", "result": params.get("result", "success")}]


def retry(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": "Let me think. "},
            {"type": "retry", "attempts": int(_num(params, "attempts", 2)), "wait": _num(params, "wait", 0.05),
             "stream": params.get("stream", "1") != "0"},
            {"type": "text", "text": "Recovered and done."}]


def system(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": "Noting something. "},
            {"type": "system", "text": params.get("text", "Context was summarized.")},
            {"type": "text", "text": "Done."}]


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
    if "command" in params:
        step["input"] = {"command": params["command"]}
    for key in ("reason", "risk"):
        if key in params:
            step[key] = params[key]
    return [{"type": "text", "text": "I need to run a command. "}, step]


def plan(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": "Here is my plan. "},
            {"type": "plan", "plan": params.get("plan", "1. Write the tests\n2. Make them pass")}]


def questions(params: dict[str, str]) -> list[dict[str, Any]]:
    asked: list[dict[str, Any]] = [{"question": "Which file should I test?", "header": "File",
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


def subagent_tools(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "subagent_tools", "reads": params.get("reads", "README.md|setup.cfg").split("|"),
             "ask": params.get("ask") == "1"},
            {"type": "text", "text": "The sub-agent looked."}]


def official_mcp(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "official_mcp"}]


def tool_error(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "tool", "name": "Bash", "input": {"command": params.get("command", "cat missing.txt")},
             "error": params.get("error", "cat: missing.txt: No such file or directory")},
            {"type": "text", "text": "That failed."}]


def stubborn(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": "Waiting for a sub-agent that will not stop…"},
            {"type": "stubborn", "seconds": _num(params, "seconds", 0)}, {"type": "text", "text": " It finished."}]


def steer_fk(params: dict[str, str]) -> list[dict[str, Any]]:
    return [{"type": "fk_once"},
            {"type": "stream", "count": int(_num(params, "count", 50)), "text": params.get("text", "tick "),
             "interval": _num(params, "interval", 0.1)}]


# A prompt that asks for a look around gets the demo tour.
TOUR = re.compile(r"\b(show me around|tour|demo|overview|look around|explore)\b", re.IGNORECASE)
GREETING = re.compile(r"^\s*(hi|hello|hey|hallo|good (morning|afternoon|evening))\b", re.IGNORECASE)
# A word that looks like a file: has a slash, or a name with a short extension.
PATH = re.compile(r"(?<![\w@])(?:[\w.-]*/[\w./-]+|[\w-]+\.[A-Za-z][A-Za-z0-9]{0,5})(?![\w/])")


def v4fault(params: dict[str, str]) -> list[dict[str, Any]]:
    """Arm a v4 data-plane fault, then stream: the fault lands on one of the frames that follow."""
    return [{"type": "v4fault", "fault": params.get("fault", "gap"), "times": int(_num(params, "times", 1))},
            {"type": "stream", "count": int(_num(params, "count", 5)), "text": params.get("text", "tick "),
             "interval": _num(params, "interval", 0.01)}]


def _quote(prompt: str, limit: int = 80) -> str:
    first = " ".join(prompt.split())
    return first if len(first) <= limit else first[: limit - 1] + "…"


def reply(params: dict[str, str]) -> list[dict[str, Any]]:
    """Answer any prompt: mention what was asked, think a little, read a file it names."""
    prompt = params.get(PROMPT, "").strip()
    asked = _quote(prompt)
    if not prompt:
        return [{"type": "text", "text": "The prompt was empty: ask me something, or try `#sim help`."}]
    if TOUR.search(prompt):
        return demo(params)
    if GREETING.match(prompt):
        return [{"type": "reasoning", "text": f"The user greets me (“{asked}”). A short hello and a hint will do."},
                {"type": "text", "text": f"Hello! You said “{asked}”. I am zcode-sim, a simulated ZCode agent: "
                                         "ask me about a file, ask for a tour, or type `#sim help` for my scenarios."}]
    match = PATH.search(prompt)
    if match:
        path = match.group(0).rstrip(".,;:")
        return [{"type": "reasoning", "text": f"The user asked: “{asked}”. I should read {path} first."},
                {"type": "tool", "name": "Read", "input": {"file_path": path},
                 "result": f"(zcode-sim: simulated contents of {path})\n"},
                {"type": "text", "text": f"I read `{path}` (simulated). You asked: “{asked}”. A real agent would "
                                         "answer from its contents; this canned answer only shows the flow."}]
    return [{"type": "reasoning", "text": f"The user asked: “{asked}”. I am a simulator, so I answer briefly "
                                          "and say what a real agent would do."},
            {"type": "text", "text": f"You asked: “{asked}”. I am zcode-sim, a simulated ZCode agent, so this "
                                     "answer is canned: a real agent would now look at the workspace and work on it. "
                                     "Type `#sim help` to see what I can act out."}]


def help_text(params: dict[str, str]) -> list[dict[str, Any]]:
    lines = [f"- `{name}`: {line}" for name, line in list_scenarios()]
    return [{"type": "text", "text": "Scenarios (first line `#sim <name> [key=value ...]`):\n" + "\n".join(lines)}]


BUILTIN = {
    "demo": demo, "stream": stream, "slow": slow, "fail": fail, "die": die, "hang": hang,
    "freeze": freeze, "gap": gap, "edit": edit, "plan_mode": plan_mode, "evict": evict,
    "permission": permission, "plan": plan, "questions": questions, "ask_streaming": ask_streaming,
    "bg_bash": bg_bash, "bg_agent": bg_agent, "subagent": subagent, "history": history,
    "reply": reply, "help": help_text, "stubborn": stubborn, "steer_fk": steer_fk,
    "subagent_tools": subagent_tools, "official_mcp": official_mcp, "tool_error": tool_error,
    "end": end, "retry": retry, "system": system, "v4fault": v4fault, "quota": provider_limits.quota,
}
BUILTIN.update(faults.SCENARIOS)  # fail_mid_tool, die_mid_tool, spawn_child, close_stdout

# One line per built-in scenario, for `#sim help` and the demo's --help.
DESCRIPTIONS = {
    "reply": "the default: answers the prompt itself (quotes it, thinks, reads a file it names; a tour for "
             "'show me around')",
    "demo": "a tour: reasoning, text, a Read and a Bash tool with output, a plan, more text",
    "help": "lists these scenarios",
    "stream": "many text deltas as fast as possible (count=1000 text=x)",
    "slow": "text deltas with a pause between them (count=50 interval=0.1)",
    "history": "adds many messages to the history at once (count=10000)",
    "fail": "the turn fails (code= message= times=)",
    "quota": "the GLM Coding Plan's limit stops the turn with the provider's code (code=1308|1309|1113 "
             "window='5 hour' lang=en|zh until=EPOCH: served again from then on)",
    "end": "the turn ends with turn.completed of a resultType (result=error_max_turns|error_max_budget|"
           "error_during_execution|error_max_tool_calls|cancelled)",
    "retry": "the engine retries a model request itself, then recovers the stream (attempts=2 wait=0.05 stream=1)",
    "system": "a system message (message.upserted) and a checkpoint (checkpoint.created) mid-turn",
    "die": "the backend process exits mid-turn (after=0.05)",
    "hang": "the turn never ends until it is stopped",
    "stubborn": "the turn ignores every stop; only session/close (or death) ends it, or itself after seconds=",
    "freeze": "the whole backend stops answering",
    "gap": "skips an event sequence number and repeats an event",
    "edit": "an Edit tool call with a diff",
    "plan_mode": "the agent switches its own mode (mode=plan)",
    "evict": "the backend forgets the session after this turn",
    "permission": "asks permission before a tool (tool=Bash kinds=allow_once,deny)",
    "plan": "asks to approve a plan (ExitPlanMode)",
    "questions": "asks the user questions (multi=1 adds a multi-select one)",
    "ask_streaming": "streams, asks a permission, streams on",
    "bg_bash": "a background Bash task, then a notification turn",
    "bg_agent": "a background sub-agent, then a notification turn",
    "subagent": "a synchronous sub-agent call with its usage markers",
    "steer_fk": "the 0.16 engine: a running turn whose first steer fails once with a foreign-key error",
    "subagent_tools": "a sub-agent whose own tool calls name their parent (reads=a|b; ask=1: the first asks first)",
    "official_mcp": "the 0.16 engine: an official plugin's MCP server asks for the user's identity headers",
    "tool_error": "a Bash tool that fails with an error text (error=)",
    "v4fault": "the 0.16 engine: a v4 data-plane fault on a frame that follows (fault=gap|checksum|"
               "stale_subscription|duplicate|fragment times=1), then a stream (count=5)",
    # fault scenarios (sim/faults.py)
    "text_then_mode": "text deltas and a mode change written in one burst (ordering)",
    "fail_mid_tool": "a tool starts, then the turn fails (cards must not spin)",
    "die_mid_tool": "a tool starts, then the backend process dies",
    "spawn_child": "a tool's child process keeps the backend's stdout open, then the backend is killed",
    "close_stdout": "the backend closes its stdout but keeps running",
}


def list_scenarios(path: str | None = None) -> list[tuple[str, str]]:
    """Every scenario a prompt can pick: (name, one-line description), built-ins first."""
    listed = [(name, DESCRIPTIONS.get(name, "")) for name in BUILTIN]
    book = ScenarioBook(path)
    listed += [(name, f"from {book.path}") for name in book.named if name not in BUILTIN]
    return listed


class ScenarioBook:
    """Built-in scenarios plus those of an optional JSON file."""

    def __init__(self, path: str | None = None) -> None:
        self.named: dict[str, list[dict[str, Any]]] = {}
        self.default = "reply"
        path = path or os.environ.get("ZCODE_SIM_SCENARIOS")
        self.path = path
        if path:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
            for name, scenario in (data.get("scenarios") or {}).items():
                self.named[name] = scenario["steps"] if isinstance(scenario, dict) else scenario
            self.default = data.get("default", self.default)

    def options(self, prompt: str) -> tuple[str | None, dict[str, str]]:
        """The scenario a ``#sim`` first line names (None without one) and its key=value pairs."""
        first = prompt.split("\n", 1)[0].strip()
        if not first.startswith("#sim "):
            return None, {}
        try:
            words = shlex.split(first[5:])
        except ValueError:
            words = first[5:].split()
        if not words:
            return None, {}
        return words[0], dict(word.split("=", 1) for word in words[1:] if "=" in word)

    def title(self, prompt: str) -> str:
        """The title an engine gives a session from its first input: the user's words, not the
        ``#sim`` line, which only the simulator reads (the real engine never sees one)."""
        name, _ = self.options(prompt)
        words = prompt if name is None else prompt.partition("\n")[2]
        return " ".join(words.split()[:6]) or "Untitled"

    def pick(self, prompt: str) -> tuple[str, list[dict[str, Any]]]:
        name, params = self.options(prompt)
        if name is None:
            name = self.default
            params = {PROMPT: prompt}
        else:
            params = {**params, PROMPT: prompt.split("\n", 1)[1] if "\n" in prompt else ""}
        if name in self.named:
            return name, self.named[name]
        if name in BUILTIN:
            return name, BUILTIN[name](params)
        return "unknown", [{"type": "text", "text": f"(zcode-sim: no scenario named {name!r})"}]

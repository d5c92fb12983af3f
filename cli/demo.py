"""``zcode-acp demo``: the bridge on the simulated backend, driven by a tiny client.

It starts the real bridge process (exactly what an editor would launch) with
``ZCODE_BIN`` pointing at ``zcode-sim`` (always: an exported ``ZCODE_BIN`` is
ignored, and the demo says so), in a temporary ``ZCODE_HOME`` that is removed
afterwards, speaks ACP to it over pipes, and prints the conversation
readably: text, thoughts, tool cards with their status, terminal output, the
plan, permission dialogs (answered automatically, and shown) and the stop
reason. With no prompt it plays a short tour; a prompt whose first line is
``#sim <name>`` picks a simulator scenario (docs/simulator.md).
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
from typing import Any
from collections.abc import Iterator

from zcode_acp.protocol import framing
from zcode_acp.protocol.i18n import EN, language_from_env, t

# The tour: what the simulator does with a prompt is chosen by its first line.
def tour(lang: str = EN) -> tuple[str, ...]:
    return tuple(f"#sim {name}\n{t(lang, f'demo.tour.{name}')}" for name in ("demo", "permission", "plan"))


TOUR = tour(language_from_env(os.environ))  # the demo speaks the language the bridge it starts will speak
# The bridge reads the todo list after a turn that ran tools and sends the plan
# (only when it changed) just after the prompt's answer: the demo shows what
# arrives until the plan does or the bridge is quiet this long. A later plan
# is still shown, just further down.
PLAN_WAIT = 0.5
REQUEST_TIMEOUT = 60.0


def find_simulator() -> str:
    """``zcode-sim`` next to this interpreter (the install the demo belongs to), else on PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), "zcode-sim")
    if os.path.exists(beside):
        return beside
    return shutil.which("zcode-sim") or beside


def simulator_scenarios() -> list[str]:
    """Every scenario name the simulator answers to: its built-ins and ``ZCODE_SIM_SCENARIOS``.

    Read from the simulator's own scenario table, so the list follows it.
    """
    from zcode_acp.sim import scenarios

    names = list(scenarios.BUILTIN)
    try:
        book = scenarios.ScenarioBook()
    except (OSError, ValueError, KeyError, TypeError):  # a broken scenario file: the built-ins still work
        return sorted(names)
    return sorted(set(names) | set(book.named))


class Style:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.enabled else text


class DemoClient:
    """A minimal ACP client: requests, one reader thread, readable output."""

    def __init__(self, proc: Any, out: Any, lang: str = EN) -> None:
        self.lang = lang
        self.proc = proc
        self.out = out
        self.next_id = 0
        self.style = Style(bool(getattr(out, "isatty", lambda: False)()))
        self.at_line_start = True
        self.last_shown = ""
        self.titles: dict[str, str] = {}
        self.session_title = ""
        # The context meter's last figures (used, size): shown once, on the turn's closing line.
        self.context: tuple[Any, Any] | None = None
        self.tools_this_turn = 0
        self.frames: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, name="demo-reader", daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                self.frames.put(json.loads(line))
            except ValueError:
                self.frames.put({"method": "_demo/garbage", "params": {"line": line[:200]}})
        self.frames.put(None)

    def _incoming(self, timeout: float) -> Iterator[dict[str, Any]]:
        """Frames as they come; stops quietly after ``timeout`` seconds without one."""
        while True:
            try:
                frame = self.frames.get(timeout=timeout)
            except queue.Empty:
                return
            if frame is None:
                raise RuntimeError(t(self.lang, "demo.closed"))
            yield frame

    def send(self, frame: dict[str, Any]) -> None:
        try:
            self.proc.stdin.write(framing.encode({"jsonrpc": "2.0", **frame}))
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise RuntimeError(t(self.lang, "demo.exited")) from None

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        request_id = self.next_id
        self.send({"id": request_id, "method": method, "params": params})
        for frame in self._incoming(REQUEST_TIMEOUT):
            if frame.get("id") == request_id and "method" not in frame:
                if "error" in frame:
                    raise RuntimeError(t(self.lang, "demo.request_failed", method=method,
                                         message=frame["error"].get("message")))
                return frame["result"]
            self.handle(frame)
        raise RuntimeError(t(self.lang, "demo.no_answer", method=method, seconds=f"{REQUEST_TIMEOUT:.0f}"))

    def wait_for_plan(self) -> None:
        """Show what arrives until the plan does, or until ``PLAN_WAIT`` seconds without a frame."""
        for frame in self._incoming(PLAN_WAIT):
            self.handle(frame)
            if frame.get("method") == "session/update" and frame["params"]["update"].get("sessionUpdate") == "plan":
                return

    def handle(self, frame: dict[str, Any]) -> None:
        if frame.get("method") == "session/update":
            self.show(frame["params"]["update"])
        elif "method" in frame and "id" in frame:
            self.answer(frame)

    def answer(self, frame: dict[str, Any]) -> None:
        """Say yes to whatever the agent asks, and show it."""
        params = frame.get("params") or {}
        if frame["method"] == "session/request_permission":
            options = params.get("options") or []
            choice = next((o for o in options if str(o.get("kind", "")).startswith("allow")),
                          options[0] if options else None)
            tool_call = params.get("toolCall") or {}
            title = tool_call.get("title") or t(self.lang, "demo.agent_asks")
            self.print_block(self.style("33", t(self.lang, "demo.permission", title=title)))
            for block in tool_call.get("content") or []:
                text = (block.get("content") or {}).get("text") if block.get("type") == "content" else None
                for line in (text or "").splitlines():
                    self.print_block(self.style("33", f"  │ {line}"))
            for option in options:
                mark = "→" if option is choice else " "
                self.print_block(self.style("33", f"  {mark} {option.get('name')} ({option.get('kind')})"))
            self.print_block(self.style("2", t(self.lang, "demo.answered")))
            outcome = {"outcome": "selected", "optionId": choice["optionId"]} if choice else {"outcome": "cancelled"}
            self.send({"id": frame["id"], "result": {"outcome": outcome}})
        elif frame["method"] == "elicitation/create":
            self.print_block(self.style("33", t(self.lang, "demo.question", message=params.get("message", ""))))
            self.print_block(self.style("2", t(self.lang, "demo.accepted")))
            self.send({"id": frame["id"], "result": {"action": "accept", "content": {}}})
        else:
            self.send({"id": frame["id"], "error": {"code": -32601, "message": "not supported by the demo"}})

    def write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()
        if text:
            self.at_line_start = text.endswith("\n")

    def print_block(self, text: str) -> None:
        if not self.at_line_start:
            self.write("\n")
        self.write(text + "\n")

    def show(self, update: dict[str, Any]) -> None:
        kind = update.get("sessionUpdate")
        if kind in ("agent_message_chunk", "agent_thought_chunk"):
            text = update.get("content", {}).get("text", "")
            if kind != self.last_shown:
                self.print_block(self.style("2", t(self.lang, "demo.thinking")) if kind == "agent_thought_chunk"
                                 else self.style("1", "ZCode:"))
            self.write(self.style("2;3", text) if kind == "agent_thought_chunk" else text)
        elif kind == "tool_call":
            self.tools_this_turn += 1
            self.titles[update["toolCallId"]] = update.get("title", "tool")
            self.print_block(self.style("36", f"[{update.get('kind')}] {update.get('title')} ({update.get('status')})"))
        elif kind == "tool_call_update":
            title = self.titles.get(update["toolCallId"], "tool")
            meta = update.get("_meta") or {}
            if "terminal_output" in meta:
                for line in meta["terminal_output"]["data"].splitlines():
                    self.print_block(self.style("2", f"    │ {line}"))
            if update.get("status") in ("completed", "failed"):
                mark = "✓" if update["status"] == "completed" else "✗"
                self.print_block(self.style("36", f"  {mark} {title}: {update['status']}"))
        elif kind == "plan":
            self.print_block(self.style("35", t(self.lang, "demo.plan")))
            for entry in update.get("entries", []):
                box = {"completed": "[x]", "in_progress": "[~]"}.get(entry.get("status"), "[ ]")
                self.print_block(self.style("35", f"  {box} {entry.get('content')}"))
        elif kind == "usage_update":
            self.context = (update.get("used"), update.get("size"))
            return  # shown with the stop reason: one token figure per turn
        elif kind == "session_info_update" and update.get("title") and update["title"] != self.session_title:
            self.session_title = update["title"]  # the engine names the session; the demo only shows it
            self.print_block(self.style("2", t(self.lang, "demo.session_title", title=self.session_title)))
            return
        else:
            return  # not shown: the last shown kind stays, so a message goes on under one heading
        self.last_shown = kind


def demo_environment(home: str) -> tuple[dict[str, str], str | None]:
    """The bridge's environment for the demo, and the ``ZCODE_BIN`` it overrides (if any)."""
    env = dict(os.environ)
    exported = env.get("ZCODE_BIN") or None
    simulator = find_simulator()
    env["ZCODE_BIN"] = simulator
    env["ZCODE_HOME"] = os.path.join(home, "zcode-home")
    env["ZCODE_SIM_DATA"] = os.path.join(home, "sim-data")
    overridden = exported if exported and exported not in ("zcode-sim", simulator) else None
    return env, overridden


def run_demo(prompts: list[str] | None = None, cwd: str | None = None, out: Any = None) -> int:
    out = out or sys.stdout
    with tempfile.TemporaryDirectory(prefix="zcode-acp-demo-") as home:
        env, overridden = demo_environment(home)
        bridge = subprocess.Popen(
            [sys.executable, "-m", "zcode_acp", "--log-level", "warning"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
        )
        lang = language_from_env(env)  # the bridge's own language: its notices and the narration agree
        client = DemoClient(bridge, out, lang)
        try:
            return _converse(client, env, overridden, list(prompts or tour(lang)), cwd)
        except RuntimeError as exc:
            client.print_block(t(lang, "demo.failed", error=exc))
            return 1
        finally:
            try:
                if bridge.stdin is not None:
                    bridge.stdin.close()
            except BrokenPipeError:
                pass
            try:
                bridge.wait(timeout=5)
            except subprocess.TimeoutExpired:
                bridge.kill()
                bridge.wait()


def _converse(client: DemoClient, env: dict[str, str], overridden: str | None, prompts: list[str],
              cwd: str | None) -> int:
    dim = client.style
    if overridden:
        client.print_block(dim("33", t(client.lang, "demo.ignoring_bin", bin=overridden)))
    init = client.request("initialize", {
        "protocolVersion": 1,
        "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False,
                               "_meta": {"terminal_output": True}},
        "clientInfo": {"name": "zcode-acp-demo", "version": "1"},
    })
    info = init["agentInfo"]
    client.print_block(dim("2", t(client.lang, "demo.connected", title=info["title"], name=info["name"],
                                  version=info["version"], backend=env["ZCODE_BIN"], home=env["ZCODE_HOME"])))
    session = client.request("session/new", {"cwd": os.path.abspath(cwd or os.getcwd()), "mcpServers": []})
    for prompt in prompts:
        tag, _, rest = prompt.partition("\n")
        shown = f"{rest.strip()}  {dim('2', '[' + tag + ']')}" if tag.startswith("#sim ") and rest.strip() else prompt
        client.print_block(dim("1", t(client.lang, "demo.you")) + f" {shown}")
        client.tools_this_turn = 0
        result = client.request("session/prompt", {
            "sessionId": session["sessionId"], "prompt": [{"type": "text", "text": prompt}]})
        client.print_block(dim("2", t(client.lang, "demo.stop_reason", reason=result["stopReason"],
                                      tokens=_tokens(client, result))))
        if client.tools_this_turn:
            client.wait_for_plan()
    return 0


def _tokens(client: DemoClient, result: dict[str, Any]) -> str:
    """The turn's one token figure: how full the context is (the meter), else the turn's own total."""
    if client.context is not None:
        used, size = client.context
        return t(client.lang, "demo.context", used=used, size=size)
    usage = result.get("usage") or {}
    return t(client.lang, "demo.tokens", total=usage["totalTokens"]) if usage.get("totalTokens") is not None else ""

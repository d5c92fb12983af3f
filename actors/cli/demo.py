"""``zcode-acp demo``: the bridge on the simulated backend, driven by a tiny client.

It starts the real bridge process (exactly what an editor would launch) with
``ZCODE_BIN`` pointing at ``zcode-sim``, speaks ACP to it over pipes, and
prints the conversation readably: text, thoughts, tool cards with their
status, terminal output, the plan, and the stop reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from typing import Any

from zcode_acp.protocol import framing


class Style:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.enabled else text


def find_simulator() -> str:
    beside = os.path.join(os.path.dirname(sys.executable), "zcode-sim")
    return shutil.which("zcode-sim") or beside


class DemoClient:
    def __init__(self, proc: Any, out: Any) -> None:
        self.proc = proc
        self.out = out
        self.next_id = 0
        self.style = Style(out.isatty())
        self.at_line_start = True
        self.last_kind: Any = ""
        self.titles: dict[str, str] = {}

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        request_id = self.next_id
        self.proc.stdin.write(framing.encode({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the bridge closed its output")
            frame = json.loads(line)
            if frame.get("id") == request_id and "method" not in frame:
                if "error" in frame:
                    raise RuntimeError(f"{method} failed: {frame['error'].get('message')}")
                return frame["result"]
            if frame.get("method") == "session/update":
                self.show(frame["params"]["update"])
            elif "method" in frame and "id" in frame:
                self.answer(frame)

    def answer(self, frame: dict[str, Any]) -> None:
        """Say yes to whatever the agent asks, and say so."""
        params = frame.get("params") or {}
        if frame["method"] == "session/request_permission":
            options = params.get("options") or []
            choice = next((o for o in options if o.get("kind", "").startswith("allow")), options[0] if options else None)
            self.print_block(self.style("33", f"? {params.get('toolCall', {}).get('title', 'permission')} → "
                                              f"{choice.get('name') if choice else 'cancel'}"))
            outcome = {"outcome": "selected", "optionId": choice["optionId"]} if choice else {"outcome": "cancelled"}
            result: Any = {"outcome": outcome}
        elif frame["method"] == "elicitation/create":
            result = {"action": "accept", "content": {}}
        else:
            self.proc.stdin.write(framing.encode({"jsonrpc": "2.0", "id": frame["id"],
                                                  "error": {"code": -32601, "message": "not supported by the demo"}}))
            self.proc.stdin.flush()
            return
        self.proc.stdin.write(framing.encode({"jsonrpc": "2.0", "id": frame["id"], "result": result}))
        self.proc.stdin.flush()

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
            if kind != self.last_kind:
                self.print_block(self.style("2", "thinking:") if kind == "agent_thought_chunk"
                                 else self.style("1", "ZCode:"))
            self.write(self.style("2;3", text) if kind == "agent_thought_chunk" else text)
        elif kind == "tool_call":
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
            self.print_block(self.style("35", "plan:"))
            for entry in update.get("entries", []):
                box = {"completed": "[x]", "in_progress": "[~]"}.get(entry.get("status"), "[ ]")
                self.print_block(self.style("35", f"  {box} {entry.get('content')}"))
        elif kind == "usage_update":
            self.print_block(self.style("2", f"(context: {update.get('used')} of {update.get('size')} tokens)"))
        self.last_kind = kind


def run_demo(prompt: str, cwd: str | None = None, out: Any = None) -> int:
    out = out or sys.stdout
    env = dict(os.environ)
    env.setdefault("ZCODE_BIN", find_simulator())
    bridge = subprocess.Popen(
        [sys.executable, "-m", "zcode_acp", "--log-level", "warning"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
    )
    client = DemoClient(bridge, out)
    try:
        init = client.request("initialize", {
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False,
                                   "_meta": {"terminal_output": True}},
            "clientInfo": {"name": "zcode-acp-demo", "version": "1"},
        })
        info = init["agentInfo"]
        client.print_block(client.style("2", f"connected to {info['title']} ({info['name']} {info['version']}), "
                                             f"backend: {env['ZCODE_BIN']}"))
        session = client.request("session/new", {"cwd": os.path.abspath(cwd or os.getcwd()), "mcpServers": []})
        client.print_block(client.style("1", "you:") + f" {prompt}")
        result = client.request("session/prompt", {
            "sessionId": session["sessionId"], "prompt": [{"type": "text", "text": prompt}]})
        usage = result.get("usage") or {}
        client.print_block(client.style("2", f"— stop reason: {result['stopReason']}"
                                             + (f", {usage.get('totalTokens')} tokens" if usage else "")))
        return 0
    except RuntimeError as exc:
        client.print_block(f"demo failed: {exc}")
        return 1
    finally:
        if bridge.stdin is not None:
            bridge.stdin.close()
        bridge.wait(timeout=5)

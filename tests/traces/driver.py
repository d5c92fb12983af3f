"""Recording traces from the simulator: a raw ACP client and the corpus scenarios.

``python -m tests.traces.driver [NAME ...]`` (re)records the corpus in this
folder; the tests use the same scenarios for round trips. Each scenario is a
function of a ``Client`` that talks to ``zcode-acp --trace FILE`` on
``zcode-sim``; waits are on frames, with timeouts.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from collections.abc import Callable

HERE = Path(__file__).resolve().parent
SIM = str(Path(sys.executable).parent / "zcode-sim")
TIMEOUT = 15.0
FORMS = {"elicitation": {"form": {}}, "_meta": {"terminal_output": True}}
REMOTE_TOKEN = "trace-remote-token-0123456789"  # a secret-named variable: the trace never holds it
REMOTE_ENV = {"ZCODE_ACP_REMOTE": "1", "ZCODE_ACP_REMOTE_TOKEN": REMOTE_TOKEN, "ZCODE_ACP_HUB_AUTOSTART": "0",
              "ZCODE_ACP_HUB_PORT": "9"}  # nothing listens on the discard port: no hub


class Client:
    """A line-level ACP client that answers the bridge's dialogs by policy."""

    def __init__(self, trace: Path | None, scratch: Path, env: dict[str, str] | None = None,
                 args: tuple[str, ...] = ()) -> None:
        environment = {k: v for k, v in os.environ.items() if not k.startswith(("ZCODE_ACP_", "ZCODE_SIM_"))}
        environment.update(ZCODE_BIN=SIM, ZCODE_HOME=str(scratch / "home"), ZCODE_SIM_DATA=str(scratch / "sim"))
        environment.update(env or {})
        self.scratch = scratch
        self.log = open(scratch / "bridge.log", "ab")
        flag = ("--trace", str(trace)) if trace is not None else ()  # None: ZCODE_ACP_TRACE in env
        self.proc = subprocess.Popen([sys.executable, "-m", "zcode_acp", "--log-level", "debug", *flag, *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                     env=environment)
        self.frames: list[dict[str, Any]] = []
        self.changed = threading.Condition()
        self.next_id = 0
        self.on_permission: Callable[[dict[str, Any]], dict[str, Any]] | None = allow_first  # None: leave it open
        self.on_form: Callable[[dict[str, Any]], dict[str, Any]] = accept_first
        self.remotes: list[Remote] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _lines(self) -> Any:
        return self.proc.stdout

    def _read(self) -> None:
        for line in self._lines():
            frame = json.loads(line)
            with self.changed:
                self.frames.append(frame)
                self.changed.notify_all()
            if "method" in frame and "id" in frame:
                self._answer(frame)
        with self.changed:
            self.changed.notify_all()

    def _answer(self, frame: dict[str, Any]) -> None:
        if frame["method"] == "session/request_permission":
            if self.on_permission is not None:
                self.write({"jsonrpc": "2.0", "id": frame["id"], "result": self.on_permission(frame["params"])})
        elif frame["method"] == "elicitation/create":
            self.write({"jsonrpc": "2.0", "id": frame["id"], "result": self.on_form(frame["params"])})
        else:
            self.write({"jsonrpc": "2.0", "id": frame["id"],
                        "error": {"code": -32601, "message": f"Method not found: {frame['method']}"}})

    def write(self, frame: dict[str, Any]) -> None:
        self.proc.stdin.write(json.dumps(frame).encode() + b"\n")
        self.proc.stdin.flush()

    def send(self, method: str, params: dict[str, Any]) -> int:
        self.next_id += 1
        self.write({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.write({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_for(self, predicate: Callable[[list[dict[str, Any]]], Any], timeout: float = TIMEOUT) -> Any:
        with self.changed:
            result = self.changed.wait_for(lambda: predicate(self.frames), timeout)
        assert result, f"timed out waiting; {len(self.frames)} frames so far"
        return result

    def answer(self, request_id: int) -> dict[str, Any]:
        return self.wait_for(lambda frames: next((f for f in frames if f.get("id") == request_id
                                                 and "method" not in f), None))

    def call(self, method: str, params: dict[str, Any]) -> Any:
        frame = self.answer(self.send(method, params))
        assert "error" not in frame, frame
        return frame["result"]

    def updates(self, session_id: str, kind: str | None = None) -> list[dict[str, Any]]:
        return [f["params"]["update"] for f in self.frames if f.get("method") == "session/update"
                and f["params"]["sessionId"] == session_id
                and (kind is None or f["params"]["update"]["sessionUpdate"] == kind)]

    def text(self, session_id: str) -> str:
        return "".join(u["content"]["text"] for u in self.updates(session_id, "agent_message_chunk"))

    def initialize(self, capabilities: dict[str, Any] | None = None) -> None:
        self.call("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities or {}})

    def new_session(self, **extra: Any) -> str:
        return self.call("session/new", {"cwd": "/tmp", "mcpServers": [], **extra})["sessionId"]

    def prompt(self, session_id: str, text: str) -> int:
        return self.send("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]})

    def remote(self) -> Remote:
        """A second client on the bridge's remote endpoint (the bridge runs with REMOTE_ENV)."""
        deadline = time.monotonic() + TIMEOUT
        match = None
        while match is None and time.monotonic() < deadline:  # the bridge logs its address once listening
            match = re.search(r"remote ACP clients: (ws://\S+)", (self.scratch / "bridge.log").read_text())
            if match is None:
                time.sleep(0.02)
        assert match, "the bridge did not log its remote address"
        remote = Remote(match.group(1), REMOTE_TOKEN)
        self.remotes.append(remote)
        return remote

    def close(self) -> int:
        for remote in self.remotes:
            remote.close()
        self.proc.stdin.close()
        code = self.proc.wait(timeout=TIMEOUT)
        self.reader.join(TIMEOUT)
        self.log.close()
        return code


class Remote(Client):
    """A remote ACP client over the WebSocket endpoint: the same policies, one message per frame."""

    def __init__(self, url: str, token: str) -> None:  # not Client's: the bridge process is the editor's, not ours
        from websockets.sync.client import connect

        # The token in a header, never in the URL (docs/security.md).
        self.socket = connect(url, max_size=None, additional_headers={"Authorization": f"Bearer {token}"}).__enter__()
        self.frames = []
        self.changed = threading.Condition()
        self.next_id = 0
        self.on_permission = allow_first
        self.on_form = accept_first
        self.remotes = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _lines(self) -> Any:
        from websockets.exceptions import ConnectionClosed

        while True:
            try:
                yield self.socket.recv()
            except ConnectionClosed:  # closed: the frames so far are what it saw
                return

    def write(self, frame: dict[str, Any]) -> None:
        self.socket.send(json.dumps(frame))

    def close(self) -> int:
        self.socket.close()
        self.reader.join(TIMEOUT)
        return 0


def allow_first(params: dict[str, Any]) -> dict[str, Any]:
    option = next(o for o in params["options"] if o["kind"].startswith("allow"))
    return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}


def accept_first(params: dict[str, Any]) -> dict[str, Any]:
    content: dict[str, Any] = {}
    for name, prop in params["requestedSchema"]["properties"].items():
        if "oneOf" in prop:
            content[name] = prop["oneOf"][0]["const"]
        elif prop.get("type") == "array":
            content[name] = [prop["items"]["anyOf"][0]["const"]]
    return {"action": "accept", "content": content}


# -- the scenarios ---------------------------------------------------------------------------

def streaming(c: Client) -> None:
    c.initialize()
    sid = c.new_session()
    c.answer(c.prompt(sid, "#sim slow count=30 interval=0.005 text=tick"))


def tools_terminal(c: Client) -> None:
    c.initialize({"_meta": {"terminal_output": True}})
    sid = c.new_session()
    c.answer(c.prompt(sid, "Show me around this project."))


def permission(c: Client) -> None:
    c.initialize({"_meta": {"terminal_output": True}})
    sid = c.new_session()
    c.answer(c.prompt(sid, "#sim permission"))


def plan(c: Client) -> None:
    c.initialize(FORMS)
    sid = c.new_session()
    c.answer(c.prompt(sid, "#sim plan"))


def questions(c: Client) -> None:
    c.initialize(FORMS)
    sid = c.new_session()
    c.answer(c.prompt(sid, "#sim questions multi=1"))


def cancel(c: Client) -> None:
    c.initialize()
    sid = c.new_session()
    running = c.prompt(sid, "#sim hang")
    c.wait_for(lambda frames: c.updates(sid, "agent_message_chunk"))
    c.notify("session/cancel", {"sessionId": sid})
    assert c.answer(running)["result"]["stopReason"] == "cancelled"


def preempt(c: Client) -> None:
    c.initialize()
    sid = c.new_session()
    first = c.prompt(sid, "#sim slow count=100 interval=0.01 text=old")
    c.wait_for(lambda frames: "old" in c.text(sid))
    second = c.prompt(sid, "#sim stream count=3 text=new")
    assert c.answer(first)["result"]["stopReason"] == "cancelled"
    assert c.answer(second)["result"]["stopReason"] == "end_turn"


def background(c: Client) -> None:
    c.initialize({"_meta": {"terminal_output": True}})
    sid = c.new_session()
    c.answer(c.prompt(sid, "#sim bg_bash"))
    c.wait_for(lambda frames: c.text(sid).endswith("completed."))


def load_history(c: Client) -> None:
    c.initialize()
    sid = c.new_session()
    c.answer(c.prompt(sid, "Show me around this project."))
    c.answer(c.prompt(sid, "#sim stream count=5 text=more"))
    c.call("session/load", {"sessionId": sid, "cwd": "/tmp", "mcpServers": []})


def streaming_titled(c: Client) -> None:
    # The 0.16 engine names the session with an event at the start of the first turn; that turn
    # is one burst (the title's place in it is the bridge's batch order), the stream is the second.
    c.initialize()
    sid = c.new_session()
    c.answer(c.prompt(sid, "#sim stream count=3 text=hello"))
    c.answer(c.prompt(sid, "#sim slow count=30 interval=0.005 text=tick"))


def two_clients(c: Client) -> None:
    """The editor prompts; a remote client that loaded the session sees it; the remote wins a dialog."""
    c.initialize({"_meta": {"terminal_output": True}})
    sid = c.new_session()
    r = c.remote()
    r.initialize({"_meta": {"terminal_output": True}})
    r.call("session/load", {"sessionId": sid, "cwd": "/tmp", "mcpServers": []})
    c.answer(c.prompt(sid, "#sim stream count=3 text=echo"))
    r.wait_for(lambda frames: r.text(sid) == "echoechoecho")
    c.on_permission = None  # the editor leaves the dialog open: the remote client answers it first
    running = c.prompt(sid, "#sim permission")
    c.wait_for(lambda frames: any(f.get("method") == "$/cancel_request" for f in frames))
    c.answer(running)
    r.wait_for(lambda frames: any(f.get("method") == "session/request_permission" for f in frames))


def backend_restart(c: Client) -> None:
    c.initialize()
    sid = c.new_session()
    c.answer(c.prompt(sid, "#sim die after=0.05"))
    c.answer(c.prompt(sid, "#sim stream count=3 text=again"))


SCENARIOS: dict[str, Callable[[Client], None]] = {
    "streaming": streaming, "tools-terminal": tools_terminal, "permission": permission, "plan": plan,
    "questions": questions, "cancel": cancel, "preempt": preempt, "background": background,
    "load-history": load_history, "backend-restart": backend_restart,
}
TODAY = {"ZCODE_SIM_DIALECT": "cli016"}
REDACT_CONTENT = {"ZCODE_ACP_TRACE_REDACT_CONTENT": "1"}
# The corpus: file name → (scenario, environment of the recording). Most run on the simulator's
# default dialect; the ``-cli016`` ones on the 0.16 engine (string server-request ids, v4/command).
CORPUS: dict[str, tuple[Callable[[Client], None], dict[str, str]]] = {
    **{name: (scenario, {}) for name, scenario in SCENARIOS.items()},
    "streaming-cli016": (streaming_titled, TODAY), "cancel-cli016": (cancel, TODAY),
    "permission-cli016": (permission, TODAY), "two-clients": (two_clients, REMOTE_ENV),
    # Recorded with --trace-redact-content (its variable form): texts are lengths and hashes.
    "questions-redacted": (questions, REDACT_CONTENT), "load-history-redacted": (load_history, REDACT_CONTENT),
}


def record(scenario: Callable[[Client], None], trace: Path | None, env: dict[str, str] | None = None,
           args: tuple[str, ...] = ()) -> Client:
    with tempfile.TemporaryDirectory(prefix="zcode-trace-") as scratch:
        client = Client(trace, Path(scratch), env, args)
        try:
            scenario(client)
        finally:
            assert client.close() == 0
    return client


def main(names: list[str]) -> None:
    for name in names or list(CORPUS):
        path = HERE / f"{name}.jsonl"
        scenario, env = CORPUS[name]
        record(scenario, path, env)
        for rotated in HERE.glob(f"{name}.jsonl.*"):
            rotated.unlink()  # re-recording keeps no older part
        print(f"recorded {path.name}: {sum(1 for _ in path.open())} lines")


if __name__ == "__main__":
    main(sys.argv[1:])

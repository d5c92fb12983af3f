"""The minimal relay: the smallest correct program for the bridge's streaming job.

    ZCODE_BIN=... python bench/relay.py

ACP on stdin/stdout, the backend (``$ZCODE_BIN app-server --stdio``) as a child,
no actors, no greenlets, and no code shared with the bridge (not its
translator, framing or GC settings: ujson with its defaults for the
separators, the interpreter's default GC). What it does:

* ``initialize`` → answered here; ``session/new`` → ``session/create`` (answering
  ``session/requestRuntimePreferences`` if asked), ``session/subscribe``, then
  the answer with the backend's session id as the ACP one;
* ``session/prompt`` → ``session/send``; every ``model.streaming`` text delta of
  that session → one ``session/update`` ``agent_message_chunk``; the prompt is
  answered on ``turn.completed`` (or ``turn.failed``, or a refused send);
* per read of the backend's pipe: split lines, parse each, build and encode
  each notification, one ``write`` for all of them.

It is the limit the bridge is compared with (``python -m bench``), so it
leaves out what a bridge needs and a benchmark does not: sequencing, tool
cards, cancellation, several clients, flow control.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import uuid
from typing import Any
from collections.abc import Callable

import ujson


def encode(frame: Any) -> bytes:
    return ujson.dumps(frame, ensure_ascii=False, escape_forward_slashes=False).encode() + b"\n"


class Relay:
    def __init__(self, backend_argv: list[str]) -> None:
        self.backend = subprocess.Popen(backend_argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.to_backend = self.backend.stdin.fileno()
        self.from_backend = self.backend.stdout.fileno()
        self.next_id = 0
        self.waiting: dict[int, Callable[[dict[str, Any]], None]] = {}  # backend request id → continuation
        self.prompts: dict[str, tuple[Any, str]] = {}  # session id → (ACP request id, message id)
        self.out: list[bytes] = []

    # -- the two directions --------------------------------------------------------------

    def call(self, method: str, params: dict[str, Any], then: Callable[[dict[str, Any]], None]) -> None:
        self.next_id += 1
        self.waiting[self.next_id] = then
        os.write(self.to_backend, encode({"id": self.next_id, "method": method, "params": params}))

    def answer(self, request_id: Any, result: Any = None, error: Any = None) -> None:
        frame = {"jsonrpc": "2.0", "id": request_id}
        if error is not None:
            frame["error"] = error
        else:
            frame["result"] = result
        self.out.append(encode(frame))

    # -- from the client ---------------------------------------------------------------------

    def client_frame(self, frame: dict[str, Any]) -> None:
        method, request_id, params = frame.get("method"), frame.get("id"), frame.get("params") or {}
        if method == "initialize":
            self.answer(request_id, {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []})
        elif method == "session/new":
            def subscribed(session_id: str) -> Callable[[dict[str, Any]], None]:
                return lambda reply: self.answer(request_id, {"sessionId": session_id})

            def created(reply: dict[str, Any]) -> None:
                if "error" in reply:
                    self.answer(request_id, error=reply["error"])
                    return
                session_id = reply["result"]["session"]["sessionId"]
                self.call("session/subscribe", {"sessionId": session_id, "deliveryKind": "desktop-continuous",
                                                "includeSnapshot": False}, subscribed(session_id))

            cwd = params.get("cwd")
            self.call("session/create", {"workspace": {"workspacePath": cwd, "workspaceKey": cwd}}, created)
        elif method == "session/prompt":
            session_id = params.get("sessionId")
            text = "".join(block.get("text", "") for block in params.get("prompt") or [] if isinstance(block, dict))

            def sent(reply: dict[str, Any]) -> None:
                if "error" in reply:
                    self.prompts.pop(session_id, None)
                    self.answer(request_id, error={"code": -32603, "message": str(reply["error"].get("message"))})

            self.prompts[session_id] = (request_id, uuid.uuid4().hex)
            self.call("session/send", {"sessionId": session_id, "content": text}, sent)
        elif request_id is not None:
            self.answer(request_id, error={"code": -32601, "message": f"Method not found: {method}"})

    # -- from the backend ------------------------------------------------------------------------

    def backend_frame(self, frame: dict[str, Any]) -> None:
        method = frame.get("method")
        if method == "session/event":
            event = frame["params"]
            kind = event.get("type")
            session_id = event.get("sessionId")
            prompt = self.prompts.get(session_id)
            if prompt is None:
                return
            if kind == "model.streaming":
                payload = event.get("payload") or {}
                if payload.get("kind") == "text_delta":
                    self.out.append(encode({"jsonrpc": "2.0", "method": "session/update", "params": {
                        "sessionId": session_id,
                        "update": {"sessionUpdate": "agent_message_chunk",
                                   "content": {"type": "text", "text": payload.get("delta", "")},
                                   "messageId": prompt[1]}}}))
            elif kind in ("turn.completed", "turn.failed"):
                del self.prompts[session_id]
                if kind == "turn.completed":
                    self.answer(prompt[0], {"stopReason": "end_turn"})
                else:
                    self.answer(prompt[0], error={"code": -32603, "message": "turn failed"})
        elif method == "session/requestRuntimePreferences":
            os.write(self.to_backend, encode({"id": frame["id"], "result": {}}))
        elif method is None:
            then = self.waiting.pop(frame.get("id"), None)
            if then is not None:
                then(frame)
        elif "id" in frame:
            os.write(self.to_backend, encode({"id": frame["id"], "error": {"code": -32601, "message": "no"}}))

    # -- the loop ---------------------------------------------------------------------------------

    def run(self) -> int:
        tails = {0: b"", self.from_backend: b""}
        handlers = {0: self.client_frame, self.from_backend: self.backend_frame}
        while True:
            readable, _, _ = select.select([0, self.from_backend], [], [])
            for fd in readable:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return 0
                lines = (tails[fd] + chunk).split(b"\n")
                tails[fd] = lines.pop()
                handle = handlers[fd]
                for line in lines:
                    if line:
                        handle(ujson.loads(line))
            if self.out:
                data = b"".join(self.out)
                self.out = []
                view = memoryview(data)
                while view:
                    view = view[os.write(1, view):]


def main() -> int:
    backend = os.environ.get("ZCODE_BIN", "zcode")
    try:
        return Relay([backend, "app-server", "--stdio"]).run()
    finally:
        sys.stderr.flush()


if __name__ == "__main__":
    sys.exit(main())

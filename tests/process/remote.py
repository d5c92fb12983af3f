"""A remote ACP client over a real WebSocket (the ``websockets`` library), for the
multi-client tests: it records updates per session, answers dialogs by policy,
and validates every frame it receives against the ACP schema."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from pathlib import Path
from typing import Any
from collections.abc import Callable

import websockets

from tests.process.harness import TIMEOUT, file_contains
from tests.schema import assert_valid_frame

TOKEN = "s3cret-token-for-tests"
REMOTE_ENV = {"ZCODE_ACP_REMOTE": "1", "ZCODE_ACP_REMOTE_TOKEN": TOKEN, "ZCODE_ACP_HUB_AUTOSTART": "0",
              "ZCODE_ACP_HUB_PORT": "9"}  # nothing listens on the discard port: no hub


async def remote_url(log: Path) -> str:
    text = await file_contains(log, "remote ACP clients: ws://")
    match = re.search(r"remote ACP clients: (ws://\S+)", text)
    assert match, "the bridge did not log its remote address"
    return match.group(1)


class RemoteClient:
    def __init__(self, socket: Any) -> None:
        self.socket = socket
        self.ids = itertools.count(1)
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.methods: dict[Any, str] = {}
        self.updates: dict[str, list[dict[str, Any]]] = {}
        self.frames: list[dict[str, Any]] = []
        self.dialogs: list[dict[str, Any]] = []
        self.changed = asyncio.Condition()
        self.on_dialog: Callable[[dict[str, Any]], Any] | None = None  # None: leave it open
        self.closed: Any = None
        self.close_code: int | None = None
        self.reader = asyncio.ensure_future(self._read())

    @classmethod
    async def connect(cls, url: str, token: str = TOKEN, **kwargs: Any) -> RemoteClient:
        # The token in a header, never in the URL (docs/security.md).
        socket = await websockets.connect(url, max_size=None, additional_headers={"Authorization": f"Bearer {token}"},
                                          **kwargs)
        return cls(socket)

    async def _read(self) -> None:
        try:
            async for text in self.socket:
                frame = json.loads(text)
                assert_valid_frame(frame, self.methods)
                async with self.changed:
                    self.frames.append(frame)
                    if "id" in frame and "method" not in frame:
                        future = self.waiting.pop(frame["id"], None)
                        if future is not None and not future.done():
                            future.set_result(frame)
                    elif frame.get("method") == "session/update":
                        params = frame["params"]
                        self.updates.setdefault(params["sessionId"], []).append(params["update"])
                    elif "id" in frame:
                        self.dialogs.append(frame)
                        if self.on_dialog is not None:
                            result = self.on_dialog(frame)
                            if result is not None:
                                await self.socket.send(json.dumps({"jsonrpc": "2.0", "id": frame["id"],
                                                                   "result": result}))
                    self.changed.notify_all()
        except websockets.ConnectionClosed as exc:
            self.closed = exc
        finally:
            self.closed = self.closed or True
            self.close_code = self.socket.close_code
            async with self.changed:
                self.changed.notify_all()

    async def request(self, method: str, params: dict[str, Any], timeout: float = TIMEOUT) -> dict[str, Any]:
        request_id = next(self.ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[request_id] = future
        self.methods[request_id] = method
        await self.socket.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
        return await asyncio.wait_for(future, timeout)

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        await self.socket.send(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}))

    async def initialize(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.request("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities or {}})

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = TIMEOUT) -> None:
        async with self.changed:
            await asyncio.wait_for(self.changed.wait_for(predicate), timeout)

    def of_kind(self, session_id: str, kind: str) -> list[dict[str, Any]]:
        return [u for u in self.updates.get(session_id, []) if u["sessionUpdate"] == kind]

    def texts(self, session_id: str, kind: str = "agent_message_chunk") -> str:
        return "".join(u["content"]["text"] for u in self.of_kind(session_id, kind))

    async def close(self) -> None:
        await self.socket.close()
        await asyncio.wait_for(self.reader, TIMEOUT)

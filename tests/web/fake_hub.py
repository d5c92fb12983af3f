"""A scripted stand-in for the hub and a bridge behind it, for the browser test.

It serves ``hub/web/`` with the hub's Content-Security-Policy, answers
``GET``/``POST /api/instances`` (bearer token checked) and accepts WebSockets on
``/acp?instance=<id>`` (the token in the ``zcode-acp.token.`` subprotocol). It has no ACP logic of its own: the
scenario reads what the page sends (``Connection.expect``) and writes what a
bridge would (``Connection.send`` / ``request``), step by step. Every frame in
both directions is logged for schema validation afterwards.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from aiohttp import WSMsgType, web

from zcode_acp.net.tokens import SUBPROTOCOL, request_token
from zcode_acp.hub.static import CONTENT_SECURITY_POLICY

CSP = CONTENT_SECURITY_POLICY  # the real hub's
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".json": "application/json",
}


class Connection:
    """One accepted WebSocket: the page's frames arrive in ``inbox``, in order."""

    def __init__(self, hub: FakeHub, number: int, request: web.Request, ws: web.WebSocketResponse) -> None:
        self.hub = hub
        self.number = number
        self.http_request = request
        self.ws = ws
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.closed = asyncio.Event()
        self.next_id = 1000

    async def expect(self, method: str | None = None, *, response_to: Any = None, timeout: float = 10.0) -> dict[str, Any]:
        """The page's next frame, which must be ``method`` (or the answer to ``response_to``)."""
        try:
            frame = await asyncio.wait_for(self.inbox.get(), timeout)
        except TimeoutError:
            raise AssertionError(f"connection {self.number}: no frame from the page within {timeout} s "
                                 f"(expected {method or f'the answer to {response_to}'})") from None
        if method is not None:
            assert frame.get("method") == method, f"expected {method}, the page sent {frame}"
        else:
            assert "method" not in frame and frame.get("id") == response_to, \
                f"expected the answer to request {response_to}, the page sent {frame}"
        return frame

    async def expect_nothing(self, within: float) -> None:
        """No frame at all for a while (only where the page must stay silent)."""
        try:
            frame = await asyncio.wait_for(self.inbox.get(), within)
        except TimeoutError:
            return
        raise AssertionError(f"the page sent an unexpected frame: {frame}")

    async def send(self, frame: dict[str, Any]) -> None:
        frame = {"jsonrpc": "2.0", **frame}
        self.hub.log.append({"from": "server", "connection": self.number, "frame": frame})
        await self.ws.send_str(json.dumps(frame))

    async def respond(self, request: dict[str, Any], result: Any) -> None:
        await self.send({"id": request["id"], "result": result})

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        await self.send({"method": method, "params": params})

    async def update(self, session_id: str, update: dict[str, Any]) -> None:
        await self.notify("session/update", {"sessionId": session_id, "update": update})

    async def request(self, method: str, params: dict[str, Any]) -> int:
        """Send a request to the page; returns its id (the answer comes through ``expect``)."""
        self.next_id += 1
        await self.send({"id": self.next_id, "method": method, "params": params})
        return self.next_id

    def drop(self) -> None:
        """A network drop: the TCP connection goes away without a close frame."""
        transport = self.http_request.transport
        assert transport is not None
        transport.abort()


class FakeHub:
    def __init__(self, web_root: Path, token: str, instances: list[dict[str, Any]]) -> None:
        self.web_root = web_root.resolve()
        self.token = token
        self.instances = instances
        self.log: list[dict[str, Any]] = []  # every WebSocket frame, both ways
        self.http: list[tuple[str, str, int]] = []  # (method, path, status) of API calls
        self.connections: asyncio.Queue[Connection] = asyncio.Queue()
        self.refuse_next_sockets = 0  # answer this many upgrades with 502 (bridge unreachable)
        self.refused_sockets = 0
        self.started_projects: list[str] = []
        self._count = 0
        self._runner: web.AppRunner | None = None

    async def start(self) -> int:
        app = web.Application(middlewares=[self._headers])
        app.router.add_get("/api/instances", self._list)
        app.router.add_post("/api/instances", self._start_instance)
        app.router.add_get("/acp", self._socket)
        app.router.add_get("/", self._static)
        app.router.add_get("/{path:.+}", self._static)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        return site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        if self._runner:
            await self._runner.cleanup()

    async def next_connection(self, timeout: float = 15.0) -> Connection:
        try:
            return await asyncio.wait_for(self.connections.get(), timeout)
        except TimeoutError:
            raise AssertionError(f"the page opened no WebSocket within {timeout} s") from None

    @web.middleware
    async def _headers(self, request: web.Request, handler: Any) -> web.StreamResponse:
        response = await handler(request)
        if not response.prepared:
            response.headers["Content-Security-Policy"] = CSP
            response.headers["X-Content-Type-Options"] = "nosniff"
            response.headers["Cache-Control"] = "no-store"
        return response

    def _authorized(self, request: web.Request) -> bool:
        return request.headers.get("Authorization") == f"Bearer {self.token}"

    async def _list(self, request: web.Request) -> web.Response:
        status = 200 if self._authorized(request) else 401
        self.http.append(("GET", request.path, status))
        if status == 401:
            return web.json_response({"error": "wrong or missing token"}, status=401)
        return web.json_response(self.instances)  # a bare array, as the real hub answers (docs/hub.md)

    async def _start_instance(self, request: web.Request) -> web.Response:
        status = 200 if self._authorized(request) else 401
        self.http.append(("POST", request.path, status))
        if status == 401:
            return web.json_response({"error": "wrong or missing token"}, status=401)
        body = await request.json()
        cwd = body["cwd"]
        self.started_projects.append(cwd)
        instance = {"id": f"inst-{len(self.instances) + 1}", "pid": 4000 + len(self.instances), "port": 8400,
                    "origin": "serve", "workspace": cwd, "startedAt": "2025-01-01T00:00:00Z",
                    "version": "0.1.0", "sessions": []}
        self.instances.append(instance)
        return web.json_response(instance)

    async def _static(self, request: web.Request) -> web.StreamResponse:
        relative = request.match_info.get("path", "index.html")
        path = (self.web_root / relative).resolve()
        if not path.is_relative_to(self.web_root) or not path.is_file():
            return web.Response(status=404, text="not found")
        return web.Response(body=path.read_bytes(), content_type=None,
                            headers={"Content-Type": CONTENT_TYPES.get(path.suffix, "application/octet-stream")})

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        # As the real hub: the token in the subprotocol list (or a header), never in the URL.
        offered = {"sec-websocket-protocol": request.headers.get("Sec-WebSocket-Protocol", "")}
        if "token" in request.query or request_token(offered) != self.token:
            return web.json_response({"error": "wrong or missing token"}, status=401)
        if not any(i["id"] == request.query.get("instance") for i in self.instances):
            return web.json_response({"error": "unknown instance"}, status=404)
        if self.refuse_next_sockets:
            self.refuse_next_sockets -= 1
            self.refused_sockets += 1
            return web.json_response({"error": "bridge unreachable"}, status=502)
        ws = web.WebSocketResponse(heartbeat=None, protocols=(SUBPROTOCOL,))
        await ws.prepare(request)
        self._count += 1
        connection = Connection(self, self._count, request, ws)
        await self.connections.put(connection)
        try:
            async for message in ws:
                if message.type == WSMsgType.TEXT:
                    frame = json.loads(message.data)
                    self.log.append({"from": "page", "connection": connection.number, "frame": frame})
                    await connection.inbox.put(frame)
                elif message.type == WSMsgType.BINARY:
                    self.log.append({"from": "page", "connection": connection.number, "binary": True})
                    await ws.close(code=1003)
        finally:
            connection.closed.set()
        return ws

"""MCP servers from real editor configurations reach the engine in its strict shape (engine-today row 4).

Sent at the line level (the SDK would tidy the entries up first); both
dialects, because the strict shapes are what the seed's engine takes too.
"""

import json

from tests.process.raw import RawBridge

ZED_STDIO = {"name": "filesystem", "command": "npx", "args": ["-y", "server-filesystem", "/tmp"],
             "env": [{"name": "DEBUG", "value": "1"}], "_meta": {"zed": {"source": "settings"}}}
TYPED_STDIO = {"type": "stdio", "name": "git", "command": "uvx", "args": ["mcp-server-git"],
               "env": {"GIT_DIR": "/tmp/.git"}}
REMOTE = {"type": "http", "name": "github", "url": "https://mcp.example.test/", "headers": [], "_meta": {}}
STRICT = [
    {"name": "filesystem", "command": "npx", "args": ["-y", "server-filesystem", "/tmp"],
     "env": [{"name": "DEBUG", "value": "1"}]},
    {"name": "git", "command": "uvx", "args": ["mcp-server-git"], "env": [{"name": "GIT_DIR", "value": "/tmp/.git"}]},
    {"name": "github", "type": "http", "url": "https://mcp.example.test/", "headers": []},
]


def traced(tmp_path, method):
    path = tmp_path / "trace.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [entry["params"] for entry in map(json.loads, lines) if entry.get("method") == method]


def test_editor_entries_are_normalised_and_a_bad_one_is_refused_before_the_backend(tmp_path):
    bridge = RawBridge(tmp_path)
    try:
        bridge.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
        bridge.until(lambda f: f.get("id") == 1)
        bad = {"name": "socket", "type": "ws", "url": "ws://localhost:1"}
        bridge.send({"jsonrpc": "2.0", "id": 2, "method": "session/new",
                     "params": {"cwd": "/tmp", "mcpServers": [ZED_STDIO, bad]}})
        error = bridge.until(lambda f: f.get("id") == 2)["error"]
        assert error["code"] == -32602 and "mcpServers[1] ('socket')" in error["message"]
        bridge.send({"jsonrpc": "2.0", "id": 3, "method": "session/new",
                     "params": {"cwd": "/tmp", "mcpServers": [ZED_STDIO, TYPED_STDIO, REMOTE]}})
        sid = bridge.until(lambda f: f.get("id") == 3)["result"]["sessionId"]
        bridge.send({"jsonrpc": "2.0", "id": 4, "method": "session/prompt",
                     "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "hello"}]}})
        answer = bridge.until(lambda f: f.get("id") == 4)
        assert answer["result"]["stopReason"] == "end_turn", answer
        # The refused session never reached the backend; on the v4 path (docs/v4.md) the session is
        # made by the engine's createSession command, whose payload carries the same strict entries.
        creates = traced(tmp_path, "session/create") + [
            call["payload"] for call in traced(tmp_path, "v4/command") if call["type"] == "createSession"]
        [create] = creates
        assert create["mcpServers"] == STRICT
    finally:
        bridge.close()

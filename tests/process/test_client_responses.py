"""Issue 21: a Response from the client is never answered, on every transport.

Toad answers some notifications with ``{"jsonrpc":"2.0","id":null,"error":...}``;
other clients send answers to ids nobody waits for, or malformed ones. JSON-RPC
never answers a response, so the bridge writes nothing back (it logs at debug).
Each test sends the responses and then one request: the bridge handles a
connection's frames in order, so the first frame back must be that request's
answer (nothing written in between) — no waiting on silence.
"""

from __future__ import annotations

import json

import pytest

from tests.process.harness import bridge, run
from tests.process.reliability import running
from tests.process.remote import REMOTE_ENV, RemoteClient, remote_url

RESPONSES = [
    {"jsonrpc": "2.0", "id": None, "error": {"code": -32601, "message": "Method not found"}},  # Toad's
    {"jsonrpc": "2.0", "id": 4242, "result": {}},  # an answer to an id the bridge never used
    {"jsonrpc": "2.0", "id": "nobody", "error": {"code": -32603, "message": "late"}},
    {"jsonrpc": "2.0", "id": 7, "result": {}, "error": {"code": 1, "message": "both"}},  # malformed
    {"id": 8, "result": {}},  # no "jsonrpc"
]


@pytest.mark.parametrize("response", RESPONSES, ids=["toad-null-id", "unknown-id", "unknown-string-id",
                                                     "result-and-error", "no-jsonrpc"])
def test_a_response_over_stdio_gets_nothing_back(tmp_path, response):
    with running(tmp_path) as b:
        b.raw.write(json.dumps(response).encode() + b"\n")
        b.request("after", "session/new", {"cwd": "/tmp", "mcpServers": []})
        first = b.until(lambda frame: "method" not in frame)
        assert first["id"] == "after" and "result" in first, first
        assert "dropping a" in b.log()  # logged at debug, not silently lost


@run
async def test_responses_over_the_remote_websocket_get_nothing_back(tmp_path):
    async with bridge(tmp_path, env=REMOTE_ENV) as b:
        remote = await RemoteClient.connect(await remote_url(b.log))
        await remote.initialize()
        for response in RESPONSES:
            await remote.socket.send(json.dumps(response))
        before = len(remote.frames)
        await remote.request("session/new", {"cwd": "/tmp", "mcpServers": []})
        answers = [frame for frame in remote.frames[before:] if "method" not in frame]
        assert len(answers) == 1 and "result" in answers[0], remote.frames[before:]
        await remote.close()

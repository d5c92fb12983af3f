"""tests/clients/check_trace.py: what it holds to the schemas, and what it leaves alone."""

from __future__ import annotations

import json

from tests.clients.check_trace import check_trace, main

HEADER = {"trace": "zcode-acp", "version": 1, "bridge": "0.1.0", "started": "2026-12-02T00:00:00.000Z",
          "redacted": ["secrets"], "env": {}}


def write(tmp_path, *records):
    path = tmp_path / "trace.jsonl"
    path.write_text("\n".join(json.dumps(record) for record in (HEADER, *records)) + "\n")
    return path


def frame(direction, body, conn="stdio"):
    return {"t": 0.0, "dir": direction, "conn": conn, "frame": {"jsonrpc": "2.0", **body}}


def test_a_response_is_held_to_its_own_requests_schema(tmp_path, capsys):
    path = write(tmp_path,
                 frame("client>bridge", {"id": 1, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}}),
                 frame("bridge>client", {"id": 1, "result": {"sessionId": 7}}),  # an id must be a string
                 frame("client>bridge", {"id": 2, "method": "session/prompt", "params": {}}),
                 frame("bridge>client", {"id": 2, "result": {"stopReason": "end_turn"}}))
    result = check_trace(path)
    assert result.frames == 2
    assert result.findings and all("session/new result" in finding for finding in result.findings)
    assert main([str(path)]) == 1 and "1 frames" not in capsys.readouterr().out


def test_only_what_the_bridge_wrote_to_its_editor_is_checked(tmp_path):
    path = write(tmp_path,
                 frame("client>bridge", {"id": 1, "method": "initialize", "params": {"protocolVersion": "1"}}),
                 frame("bridge>backend", {"id": 5, "method": "session/send", "params": {"anything": True}}, "backend-1"),
                 frame("bridge>client", {"id": 1, "error": {"code": -32602, "message": "Invalid params"}}),
                 {"t": 0.1, "dir": "client>bridge", "conn": "stdio", "closed": True})
    result = check_trace(path)
    assert (result.frames, result.findings) == (1, [])
    assert main([str(path)]) == 0

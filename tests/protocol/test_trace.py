"""The trace format's pure parts: redaction, normalisation, the diff, reading."""

from __future__ import annotations

import pytest
import ujson

from zcode_acp.protocol import trace as fmt

from zcode_acp.protocol import trace_compare as compare

from zcode_acp.protocol import trace_redaction as redaction


def redact(frame, **kwargs):
    return redaction.Redactor(**kwargs).redact(frame)


def test_secret_keys_lose_their_string_values_but_counts_stay():
    frame = {"apiKey": "sk-1", "x-api-key": "sk-2", "Authorization": "Bearer b", "password": "p", "cookie": "c=1",
             "accessToken": "t", "client_secret": "s", "usage": {"inputTokens": 12, "outputTokens": 3},
             "credentials": {"user": "me", "pass": "pw", "port": 22}, "workspaceKey": "/tmp/w", "text": "a token"}
    out = redact(frame)
    for key in ("apiKey", "x-api-key", "Authorization", "password", "cookie", "accessToken", "client_secret"):
        assert out[key] == fmt.REDACTED, key
    assert out["usage"] == {"inputTokens": 12, "outputTokens": 3}
    assert out["credentials"] == {"user": fmt.REDACTED, "pass": fmt.REDACTED, "port": 22}
    assert out["workspaceKey"] == "/tmp/w" and out["text"] == "a token"


def test_mcp_env_and_headers_keep_names_and_lose_values():
    servers = [{"name": "gh", "command": "gh", "args": ["--token=abc123", "--api-key", "plain", "serve"],
                "env": [{"name": "GITHUB_TOKEN", "value": "ghp_x"}, {"name": "DEBUG", "value": "1"}]},
               {"type": "http", "name": "w", "url": "https://u:pw@x.example/mcp?token=qq&a=1",
                "headers": {"Authorization": "Bearer z", "X-Trace": "t"}}]
    out = redact({"params": {"mcpServers": servers}})["params"]["mcpServers"]
    assert out[0]["env"] == [{"name": "GITHUB_TOKEN", "value": fmt.REDACTED}, {"name": "DEBUG", "value": fmt.REDACTED}]
    assert out[0]["args"][0] == "--token=[redacted]"
    assert out[1]["headers"] == {"Authorization": fmt.REDACTED, "X-Trace": fmt.REDACTED}
    assert out[1]["url"] == "https://u:[redacted]@x.example/mcp?token=[redacted]&a=1"


def test_a_name_value_pair_with_a_secret_name_loses_its_value():
    assert redact({"name": "OPENAI_API_KEY", "value": "sk-123"})["value"] == fmt.REDACTED
    assert redact({"name": "color", "value": "blue"})["value"] == "blue"


def test_known_and_learned_secret_values_go_wherever_they_appear():
    redactor = redaction.Redactor(literals=["remote-token-123456"])
    assert redactor.redact({"text": "use remote-token-123456 now"}) == {"text": "use [redacted] now"}
    redactor.redact({"password": "hunter2-but-longer"})
    assert redactor.redact({"output": "echo hunter2-but-longer"}) == {"output": "echo [redacted]"}
    assert redactor.has_literal(b'{"x":"hunter2-but-longer"}')


def test_the_screen_passes_plain_streaming_lines_and_catches_secret_keys():
    redactor = redaction.Redactor()
    plain = b'{"method":"session/event","params":{"sessionId":"s","seq":1,"payload":{"kind":"text_delta","delta":"x"}}}'
    assert not redactor.needs_look(plain)
    for line in (b'{"apiKey":"x"}', b'{"X-API-KEY":"x"}', b'{"env":{}}', b'{"headers":[]}', b'{"Authorization":1}'):
        assert redactor.needs_look(line), line
    # Whatever the key rule would redact, the screen must see.
    for key in ("token", "myToken", "secret", "password", "passwd", "cookie", "credentials", "authorization",
                "auth", "apiKey", "private_key", "access-key", "client_key", "session_key"):
        assert redaction.SECRET_KEY.search(key) and redactor.needs_look(ujson.dumps({key: "v"}).encode()), key


def test_content_redaction_keeps_structure_and_replaces_text_by_length_and_hash():
    redactor = redaction.Redactor(content=True, salt=b"s")
    frame = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "abc", "update": {
        "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hello"}, "messageId": "m1"}}}
    out = redactor.redact(frame)
    update = out["params"]["update"]
    assert update["sessionUpdate"] == "agent_message_chunk" and update["messageId"] == "m1"
    assert out["params"]["sessionId"] == "abc" and update["content"]["type"] == "text"
    assert update["content"]["text"].startswith("<5 chars, hash ")
    assert redactor.redact({"text": "hello"}) == {"text": update["content"]["text"]}  # same text, same hash
    assert redactor.raw(b"not json").startswith(b"<8 chars, hash ")


def test_normalisation_names_generated_ids_consistently():
    first, second = compare.Normaliser(), compare.Normaliser()
    a = {"sessionId": "2b0f6a4e-3c1d-4c2e-9f0a-1b2c3d4e5f60", "messageId": "0123456789abcdef0123456789abcdef-thought",
         "other": "2b0f6a4e-3c1d-4c2e-9f0a-1b2c3d4e5f60", "updatedAt": "2026-11-30T12:00:00.123Z"}
    b = {"sessionId": "11111111-2222-4333-8444-555555555555", "messageId": "fedcba9876543210fedcba9876543210-thought",
         "other": "11111111-2222-4333-8444-555555555555", "updatedAt": "2025-01-01T00:00:00Z"}
    assert first.value(a) == second.value(b) == {"sessionId": "<id-1>", "messageId": "<id-2>-thought",
                                                  "other": "<id-1>", "updatedAt": "<time>"}
    request = first.frame({"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": {}})
    cancel = first.frame({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 7}})
    assert request["id"] == cancel["params"]["requestId"] == "<req-1>"


def test_the_diff_names_the_changed_field_and_the_frames_only_one_side_has():
    update = {"method": "session/update", "params": {"update": {"sessionUpdate": "agent_message_chunk",
                                                                "content": {"text": "tick"}}}}
    changed = {"method": "session/update", "params": {"update": {"sessionUpdate": "agent_message_chunk",
                                                                 "content": {"text": "tock"}}}}
    extra = {"id": 3, "result": {}}
    assert compare.diff_frames([update], [update]) == []
    lines = compare.diff_frames([update, update], [update, changed, extra], "session 1")
    assert lines[0].startswith("--- session 1")
    assert "~ frame 2 (session/update agent_message_chunk) changed:" in lines
    assert '    params.update.content.text: "tick" → "tock"' in lines
    assert any(line.startswith("+ frame 3 (answer to 3)") for line in lines)
    assert compare.diff_frames([update, extra], [update])[-1].startswith("- frame 2 (answer to 3)")


def test_reading_checks_the_header_and_version_and_skips_later_parts_headers():
    head = fmt.header("1.0", "now", False, {}).decode()
    body = '{"t":0.1,"dir":"client>bridge","conn":"stdio","frame":{"id":1}}\n{"t":0.2,"dir":"cl\n'
    trace = fmt.parse(head + body + fmt.header("1.0", "now", False, {}, part=2).decode())
    assert trace.header["version"] == 1 and len(trace.records) == 1 and trace.corrupt == [3]
    assert trace.frames(fmt.CLIENT_IN)[0]["frame"] == {"id": 1}
    with pytest.raises(fmt.TraceError, match="version 2"):
        fmt.parse('{"trace":"zcode-acp","version":2}\n')
    with pytest.raises(fmt.TraceError, match="not a zcode-acp trace"):
        fmt.parse('{"t":0}\n')


def test_frame_records_splice_lines_that_are_objects():
    prefix = fmt.record_prefix(1.5, fmt.BACKEND_IN, "backend-1")
    out = fmt.frame_records(prefix, [b'{"a":1}', b'{"b":2}'])
    assert [ujson.loads(line) for line in out.splitlines()] == [
        {"t": 1.5, "dir": "backend>bridge", "conn": "backend-1", "frame": {"a": 1}},
        {"t": 1.5, "dir": "backend>bridge", "conn": "backend-1", "frame": {"b": 2}}]
    assert fmt.all_objects(b'{"a":1}\n{"b":2}', 2) and not fmt.all_objects(b'{"a":1}\nnope}', 2)


def test_the_environment_gives_literals_and_the_replay_settings():
    env = {"ZCODE_ACP_REMOTE_TOKEN": "abcdefgh1234", "OPENAI_API_KEY": "sk-abcdefgh", "SHORT_TOKEN": "abc",
           "ZCODE_ACP_MODE": "plan", "ZCODE_ACP_TRACE": "/x", "HOME": "/root"}
    assert sorted(compare.literals_from_env(env)) == ["abcdefgh1234", "sk-abcdefgh"]
    assert compare.replay_env(env) == {"ZCODE_ACP_MODE": "plan"}

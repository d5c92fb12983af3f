"""What a recording contains: no secrets, private file modes, content redaction on request."""

from __future__ import annotations

import json
import os

from tests.traces.driver import Client, record

TOKEN = "remote-token-7f3a9c2e5b1d"  # stands in for the remote-access token (a secret-named variable)
PROVIDER_KEY = "sk-provider-0123456789abcdef"
MCP_TOKEN = "ghp_mcpsecret0123456789"
HEADER_VALUE = "Bearer hdr-9876543210fedcba"
ARG_SECRET = "argsecret-55aa77bb"
SECRETS = (TOKEN, PROVIDER_KEY, MCP_TOKEN, HEADER_VALUE, "hdr-9876543210fedcba", ARG_SECRET)
MCP_SERVERS = [
    {"name": "github", "command": "github-mcp", "args": [f"--api-key={ARG_SECRET}"],
     "env": [{"name": "GITHUB_TOKEN", "value": MCP_TOKEN}]},
    {"type": "http", "name": "docs", "url": "https://docs.example/mcp",
     "headers": [{"name": "Authorization", "value": HEADER_VALUE}]},
]


def session_with_secrets(c: Client) -> None:
    c.initialize({"_meta": {"provider": {"headers": {"x-api-key": PROVIDER_KEY}}}})
    sid = c.new_session(mcpServers=MCP_SERVERS)
    c.answer(c.prompt(sid, f"Remember {TOKEN} for later.\n\nShow me around this project."))


def test_a_trace_holds_none_of_the_secrets_but_keeps_their_names(tmp_path):
    trace = tmp_path / "traces" / "secret.jsonl"
    record(session_with_secrets, trace, env={"ZCODE_ACP_REMOTE_TOKEN": TOKEN})
    text = trace.read_text()
    for secret in SECRETS:
        assert secret not in text, secret
    assert "GITHUB_TOKEN" in text and "Authorization" in text and "[redacted]" in text
    assert "Remember [redacted] for later." in text  # the token is gone even from the prompt
    assert "Show me around this project." in text  # prompts are kept unless asked otherwise
    sent = [json.loads(line) for line in text.splitlines()[1:]]
    create = next(r for r in sent if r.get("frame", {}).get("method") == "session/create")
    assert create["frame"]["params"]["mcpServers"][0]["env"] == [{"name": "GITHUB_TOKEN", "value": "[redacted]"}]


def test_the_trace_file_is_private_and_its_folder_too(tmp_path):
    trace = tmp_path / "new-folder" / "t.jsonl"
    record(lambda c: c.initialize(), trace)
    assert (trace.stat().st_mode & 0o777) == 0o600
    assert (trace.parent.stat().st_mode & 0o777) == 0o700


def test_the_environment_variable_records_and_an_older_trace_is_kept(tmp_path):
    trace = tmp_path / "t.jsonl"
    older = '{"trace":"zcode-acp","version":1,"bridge":"older"}\n'  # a trace the bridge wrote: only those move
    trace.write_text(older)
    os.chmod(trace, 0o644)
    record(lambda c: c.initialize(), None, env={"ZCODE_ACP_TRACE": str(trace)})
    assert (tmp_path / "t.jsonl.1").read_text() == older
    header = json.loads(trace.read_text().splitlines()[0])
    assert header["trace"] == "zcode-acp" and header["version"] == 1
    assert (trace.stat().st_mode & 0o777) == 0o600


def test_content_redaction_keeps_lengths_and_hashes_only(tmp_path):
    trace = tmp_path / "t.jsonl"

    def prompt(c: Client) -> None:
        c.initialize()
        sid = c.new_session()
        c.answer(c.prompt(sid, "#sim stream count=3 text=confidential"))

    record(prompt, trace, args=("--trace-redact-content",))
    text = trace.read_text()
    assert "confidential" not in text
    assert '"redacted":["secrets","content"]' in text.splitlines()[0]
    assert "<37 chars, hash " in text  # the prompt, as its length and a hash
    assert '"sessionUpdate":"agent_message_chunk"' in text  # structure stays readable


def test_content_redaction_removes_question_texts_even_where_they_are_keys(tmp_path):
    from tests.traces.driver import CORPUS

    trace = tmp_path / "t.jsonl"
    record(CORPUS["questions"][0], trace, args=("--trace-redact-content",))
    text = trace.read_text()
    assert "Which file should I test?" not in text  # the answers to the engine are keyed by question
    assert '"interaction":"questions"' in text or '"toolName":"AskUserQuestion"' in text  # structure stays

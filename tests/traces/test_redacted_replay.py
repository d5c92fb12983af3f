"""A trace recorded with --trace-redact-content replays: stand-ins of the recorded lengths are
sent where texts were, and texts are compared by length (docs/traces.md, "content-redacted")."""

from __future__ import annotations

from tests.traces.driver import CORPUS, Client, record
from tests.traces.test_corpus import replay
from tests.traces.test_round_trip import records, rewrite

from zcode_acp.protocol import trace_compare as compare

from zcode_acp.protocol import trace_redaction as redaction

REDACT = ("--trace-redact-content",)


def streaming_in_a_folder(c: Client) -> None:
    c.initialize()
    sid = c.new_session()
    c.answer(c.prompt(sid, "#sim stream count=4 text=private"))


def test_a_content_redacted_session_replays_and_a_changed_length_is_named(tmp_path):
    trace = tmp_path / "redacted.jsonl"
    record(streaming_in_a_folder, trace, args=REDACT)
    assert "private" not in trace.read_text()
    done = replay(trace, "--fast")
    assert done.returncode == 0, done.stdout + done.stderr

    lines = records(trace)
    delta = next(r for r in lines if r.get("dir") == "backend>bridge"
                 and r["frame"].get("params", {}).get("payload", {}).get("kind") == "text_delta")
    assert redaction.CONTENT.fullmatch(delta["frame"]["params"]["payload"]["delta"])
    delta["frame"]["params"]["payload"]["delta"] = "<9 chars, hash 0123456789ab>"  # "private" was 7
    rewrite(trace, lines)
    done = replay(trace, "--fast")
    assert done.returncode == 1
    assert 'params.update.content.text: "<7 chars>" → "<9 chars>"' in done.stdout, done.stdout


def test_update_keeps_a_redacted_trace_redacted(tmp_path):
    trace = tmp_path / "redacted.jsonl"
    record(streaming_in_a_folder, trace, args=REDACT)
    done = replay(trace, "--fast", "--update")
    assert done.returncode == 0, done.stdout + done.stderr
    out = [r["frame"] for r in records(trace) if r.get("dir") == "bridge>client"]
    texts = [f["params"]["update"]["content"]["text"] for f in out if f.get("method") == "session/update"
             and f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"]
    assert texts and all(redaction.CONTENT.fullmatch(t) and t.startswith("<7 chars") for t in texts), texts
    assert replay(trace, "--fast").returncode == 0


def test_what_cannot_replay_streamed_terminal_output_is_named_and_nothing_else(tmp_path):
    # The bridge sends a terminal the new end of the command's output so far: computed from the
    # texts themselves, which stand-ins do not reproduce (docs/traces.md). That, and only that, differs.
    trace = tmp_path / "terminal.jsonl"
    record(CORPUS["tools-terminal"][0], trace, args=REDACT)
    done = replay(trace, "--fast")
    assert done.returncode == 1
    changed = [line.strip() for line in done.stdout.splitlines() if line.startswith("    ")]
    assert changed, done.stdout
    assert all(line.startswith("params.update._meta.terminal_output.data:") for line in changed), done.stdout
    assert not any(line.startswith("backend: ") for line in done.stdout.splitlines()), done.stdout


def test_stand_ins_keep_length_and_hash_and_look_like_nothing_the_normaliser_renames():
    text = redaction.stand_in(40, "0123456789ab")
    assert len(text) == 40 and text == redaction.stand_in(40, "0123456789ab") != redaction.stand_in(40, "0123456789ac")
    assert not compare.GENERATED.search(text) and not compare.TIMESTAMP.search(text)
    assert redaction.stand_in(4, "0123456789ab", "cwd").startswith("/")
    filled = redaction.fill_content({"cwd": "<4 chars, hash 0123456789ab>", "text": "<3 chars, hash 0123456789ab>"},
                              known={"ffffffffffff": "/elsewhere"})
    assert filled == {"cwd": "/hij", "text": "ghi"}
    left, right = compare.Normaliser(content=True), compare.Normaliser(content=True)
    assert left.value({"text": "<5 chars, hash 0123456789ab>", "kind": "x"}) == \
        right.value({"text": "hello", "kind": "x"}) == {"text": "<5 chars>", "kind": "x"}

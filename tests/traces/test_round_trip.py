"""Record a session with --trace, replay it; change the recording and the replay names the change."""

from __future__ import annotations

import json
from pathlib import Path

from tests.traces.driver import SCENARIOS, record
from tests.traces.test_corpus import replay


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def rewrite(path: Path, lines: list[dict]) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def backend_deltas(lines: list[dict]) -> list[dict]:
    return [r for r in lines if r.get("dir") == "backend>bridge" and r.get("frame", {}).get("method") == "session/event"
            and r["frame"]["params"]["payload"].get("kind") == "text_delta"]


def test_a_recorded_session_replays_cleanly_and_a_changed_backend_event_is_named(tmp_path):
    trace = tmp_path / "session.jsonl"
    record(SCENARIOS["streaming"], trace)
    done = replay(trace)
    assert done.returncode == 0, done.stdout + done.stderr

    lines = records(trace)
    changed = backend_deltas(lines)[4]
    changed["frame"]["params"]["payload"]["delta"] = "tock"
    rewrite(trace, lines)
    done = replay(trace)
    assert done.returncode == 1
    assert 'params.update.content.text: "tick" → "tock"' in done.stdout, done.stdout


def test_a_request_the_bridge_sends_differently_is_a_backend_divergence(tmp_path):
    trace = tmp_path / "session.jsonl"
    record(SCENARIOS["streaming"], trace)
    lines = records(trace)
    send = next(r for r in lines if r.get("dir") == "bridge>backend" and r["frame"].get("method") == "session/send")
    send["frame"]["params"]["content"] = "something the client never typed"
    rewrite(trace, lines)
    done = replay(trace)
    assert done.returncode == 1
    assert "backend: params: session/send" in done.stdout and "something the client never typed" in done.stdout


def test_update_rewrites_the_expected_side(tmp_path):
    trace = tmp_path / "session.jsonl"
    record(SCENARIOS["permission"], trace)
    lines = records(trace)
    out = [r for r in lines if r.get("dir") == "bridge>client" and r["frame"].get("method") == "session/update"
           and r["frame"]["params"]["update"]["sessionUpdate"] == "agent_message_chunk"]
    original = out[0]["frame"]["params"]["update"]["content"]["text"]
    out[0]["frame"]["params"]["update"]["content"]["text"] = "an old behaviour"
    rewrite(trace, lines)
    assert replay(trace).returncode == 1
    done = replay(trace, "--update")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (trace.stat().st_mode & 0o777) == 0o600
    texts = [r["frame"]["params"]["update"]["content"]["text"] for r in records(trace)
             if r.get("dir") == "bridge>client" and r["frame"].get("method") == "session/update"
             and r["frame"]["params"]["update"]["sessionUpdate"] == "agent_message_chunk"]
    assert texts[0] == original and "an old behaviour" not in texts
    done = replay(trace)
    assert done.returncode == 0, done.stdout + done.stderr

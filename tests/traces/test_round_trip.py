"""Record a session with --trace, replay it; change the recording and the replay names the change."""

from __future__ import annotations

import json
from pathlib import Path

from tests.traces.driver import CORPUS, REMOTE_TOKEN, SCENARIOS, record
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


def test_two_clients_replay_each_on_its_own_connection_and_a_change_names_the_connection(tmp_path):
    trace = tmp_path / "two.jsonl"
    record(CORPUS["two-clients"][0], trace, CORPUS["two-clients"][1])
    lines = records(trace)
    assert {r.get("conn") for r in lines if r.get("dir") == "client>bridge"} == {"stdio", "ws-1"}
    assert REMOTE_TOKEN not in trace.read_text()
    done = replay(trace)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "to 2 clients" in done.stdout

    # The remote client's copy of the editor's prompt, altered: only ws-1's comparison names it.
    echo = next(r for r in lines if r.get("conn") == "ws-1" and r.get("dir") == "bridge>client"
                and r["frame"].get("params", {}).get("update", {}).get("sessionUpdate") == "user_message_chunk")
    echo["frame"]["params"]["update"]["content"]["text"] = "not what the editor typed"
    rewrite(trace, lines)
    done = replay(trace, "--fast")
    assert done.returncode == 1
    assert "--- ws-1: session 1" in done.stdout and '"not what the editor typed" → "#sim stream' in done.stdout
    assert "--- stdio:" not in done.stdout, done.stdout


def test_a_remote_clients_other_answer_to_a_dialog_reaches_the_engine_as_a_divergence(tmp_path):
    # The permission answer comes from ws-1 in the recording (it won the race); replayed with
    # another outcome, the engine side sees a decision the trace does not have.
    trace = tmp_path / "two.jsonl"
    record(CORPUS["two-clients"][0], trace, CORPUS["two-clients"][1])
    lines = records(trace)
    answer = next(r for r in lines if r.get("conn") == "ws-1" and r.get("dir") == "client>bridge"
                  and "result" in r.get("frame", {}))
    answer["frame"]["result"]["outcome"] = {"outcome": "cancelled"}
    rewrite(trace, lines)
    done = replay(trace, "--fast")
    assert done.returncode == 1, done.stdout
    assert "backend: answer:" in done.stdout  # the engine got another decision than the recorded one

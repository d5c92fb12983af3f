"""The TraceWriter: private files, rotation, lines across chunks, drops, the idle drain."""

from __future__ import annotations

import json
import os
from pathlib import Path

import gevent

from zcode_acp.actors.transport import trace
from zcode_acp.protocol import trace as fmt
from zcode_acp.protocol import trace_redaction as redaction

LINE = b'{"method":"session/event","params":{"sessionId":"s","seq":1,"payload":{"kind":"text_delta","delta":"x"}}}\n'


def writer(path: Path, **limits) -> trace.TraceWriter:
    return trace.TraceWriter(str(path), redaction.Redactor(), "test", {}, **limits)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_files_are_private_and_an_existing_trace_is_rotated_away(tmp_path):
    path = tmp_path / "made" / "deeper" / "t.jsonl"
    w = writer(path)
    w.close()
    assert (path.stat().st_mode & 0o777) == 0o600
    assert (path.parent.stat().st_mode & 0o777) == 0o700
    os.chmod(path, 0o644)
    w = writer(path)
    w.close()
    assert (path.stat().st_mode & 0o777) == 0o600
    assert lines(path.with_name("t.jsonl.1"))[0]["trace"] == "zcode-acp"


def test_the_live_file_rotates_at_its_cap_and_keeps_that_many_parts(tmp_path):
    path = tmp_path / "t.jsonl"
    w = writer(path, max_bytes=4096, keep=2)
    for _ in range(200):
        w.record(fmt.BACKEND_IN, "backend-1", LINE)
    w.close()
    parts = sorted(p.name for p in tmp_path.iterdir())
    assert parts == ["t.jsonl", "t.jsonl.1", "t.jsonl.2"]
    for name in parts:
        part = lines(tmp_path / name)
        assert part[0]["trace"] == "zcode-acp" and part[0]["part"] > 1
        assert os.path.getsize(tmp_path / name) <= 4096 + len(LINE) + 200
    assert lines(path)[-1]["end"] == {"droppedChunks": 0, "droppedBytes": 0}


def test_lines_cut_across_reads_are_joined_and_what_is_not_json_is_kept_raw(tmp_path):
    path = tmp_path / "t.jsonl"
    w = writer(path)
    w.record(fmt.CLIENT_IN, "stdio", b'{"jsonrpc":"2.0","id":1,"me')
    w.record(fmt.CLIENT_IN, "stdio", b'thod":"initialize"}\nthis is not json\n{"api')
    w.record(fmt.CLIENT_IN, "stdio", b'Key":"sk-secret-value"}\n')
    w.record(fmt.CLIENT_IN, "stdio", b"")
    w.close()
    records = lines(path)[1:]
    assert records[0]["frame"] == {"jsonrpc": "2.0", "id": 1, "method": "initialize"}
    assert records[1]["raw"] == "this is not json"
    assert records[2]["frame"] == {"apiKey": fmt.REDACTED}  # the key's name was cut in two
    assert records[3]["closed"] is True
    assert "sk-secret-value" not in path.read_text()


def test_when_it_cannot_keep_up_it_drops_counts_and_marks_the_gap(tmp_path):
    path = tmp_path / "t.jsonl"
    w = writer(path, max_queued=len(LINE) * 3)
    for _ in range(10):
        w.record(fmt.BACKEND_IN, "backend-1", LINE)  # no chance to drain in between: the queue fills
    w.record(fmt.BACKEND_OUT, "backend-1", LINE)
    w.close()
    parsed = fmt.parse(path.read_bytes())
    frames = [r for r in parsed.records if "frame" in r]
    dropped = [r for r in parsed.records if "dropped" in r]
    assert len(frames) == 4 and parsed.corrupt == []  # the queued four; the rest is counted
    assert dropped == [{"t": dropped[0]["t"], "dir": "backend>bridge", "conn": "backend-1",
                        "dropped": {"chunks": 6, "bytes": 6 * len(LINE)}},
                       {"t": dropped[1]["t"], "dir": "bridge>backend", "conn": "backend-1",
                        "dropped": {"chunks": 1, "bytes": len(LINE)}}]
    assert parsed.records[-1]["end"] == {"droppedChunks": 7, "droppedBytes": 7 * len(LINE)}


def test_the_drain_runs_by_itself_when_the_loop_is_idle(tmp_path):
    path = tmp_path / "t.jsonl"
    w = writer(path)
    w.record(fmt.CLIENT_OUT, "stdio", LINE)
    w.exited("backend-1", 3)
    with gevent.Timeout(5):
        while len(path.read_text().splitlines()) < 3:
            gevent.sleep(0.01)
    records = lines(path)
    assert records[1]["frame"]["method"] == "session/event" and records[1]["dir"] == "bridge>client"
    assert records[2] == {"t": records[2]["t"], "dir": "backend>bridge", "conn": "backend-1", "exit": 3}
    w.close()


def test_start_and_stop_swap_the_global_tracer(tmp_path):
    assert not trace.TRACER.enabled
    started = trace.start(str(tmp_path / "t.jsonl"), literals=["literal-secret-1"])
    try:
        assert trace.TRACER is started
        trace.TRACER.record(fmt.CLIENT_IN, "stdio", b'{"text":"literal-secret-1"}\n')
    finally:
        trace.stop()
    assert not trace.TRACER.enabled
    assert "literal-secret-1" not in (tmp_path / "t.jsonl").read_text()


def test_after_a_gap_a_cut_line_is_skipped_and_a_whole_one_kept(tmp_path):
    path = tmp_path / "t.jsonl"
    w = writer(path)

    def dropping(direction, conn, data):
        w.max_queued = -1  # as if the queue were over its bound
        w.record(direction, conn, data)
        w.max_queued = trace.MAX_QUEUED

    w.record(fmt.BACKEND_IN, "backend-1", LINE)
    dropping(fmt.BACKEND_IN, "backend-1", LINE[:20])
    w.record(fmt.BACKEND_IN, "backend-1", LINE[20:] + LINE)  # the rest of the cut line, then a whole one
    w.record(fmt.BACKEND_IN, "backend-1", b"")
    dropping(fmt.CLIENT_OUT, "stdio", LINE)
    w.record(fmt.CLIENT_OUT, "stdio", LINE)  # a whole line right after the gap
    w.close()
    parsed = fmt.parse(path.read_bytes())
    kinds = [next(k for k in ("frame", "dropped", "closed") if k in r) for r in parsed.records if "end" not in r]
    assert kinds == ["frame", "dropped", "frame", "closed", "dropped", "frame"] and parsed.corrupt == []


def test_a_folder_or_a_file_the_bridge_did_not_write_is_refused_and_left_where_it_is(tmp_path):
    """Issue 29: ``--trace ~/proj`` moved the project to ``proj.1``; only traces are ever moved."""
    import pytest

    project = tmp_path / "proj"
    project.mkdir()
    (project / "main.py").write_text("print('mine')\n")
    with pytest.raises(trace.TracePathError, match="is a folder"):
        writer(project)
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    with pytest.raises(trace.TracePathError, match="not a trace"):
        writer(notes)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "proj"]
    assert (project / "main.py").read_text() == "print('mine')\n" and notes.read_text() == "my notes\n"


def test_a_rotation_that_would_replace_a_foreign_part_moves_nothing(tmp_path):
    import pytest

    path = tmp_path / "t.jsonl"
    writer(path).close()
    (tmp_path / "t.jsonl.1").mkdir()  # someone's folder where the first part would go
    with pytest.raises(trace.TracePathError, match="is a folder"):
        writer(path)
    assert lines(path)[0]["trace"] == "zcode-acp" and (tmp_path / "t.jsonl.1").is_dir()


def test_a_trace_path_that_cannot_be_created_is_refused(tmp_path):
    import pytest

    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(trace.TracePathError, match="cannot create its folder"):
        writer(blocker / "t.jsonl")

"""The lazy-session file: atomic writes, shared by processes, corrupt files, pruning."""

import json
import os
import stat
import subprocess
import sys
import time

import pytest

from zcode_acp.actors import lazy_store
from zcode_acp.actors.lazy_store import LazySessionStore
from zcode_acp.protocol import lazy_sessions


def test_entries_round_trip_with_user_only_permissions(tmp_path):
    store = LazySessionStore(tmp_path)
    store.record("p1", "/w")
    store.record("p1", "/w", "sess_1")
    store.flush(5)
    data = json.loads(store.path.read_text())
    assert data["p1"]["cwd"] == "/w" and data["p1"]["zcodeSid"] == "sess_1"
    assert isinstance(data["p1"]["createdAt"], int)
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert LazySessionStore(tmp_path).get("p1")["zcodeSid"] == "sess_1"


def test_a_failed_rename_leaves_the_old_file_whole_and_no_temporary(tmp_path, monkeypatch, caplog):
    store = LazySessionStore(tmp_path)
    store.record("p1", "/w", "sess_1")
    store.flush(5)
    before = store.path.read_bytes()

    def crash(temporary):
        raise OSError("disk vanished mid-rename")

    monkeypatch.setattr(store, "_replace", crash)
    store.record("p2", "/w")  # logged, not raised: the session still works
    store.flush(5)
    assert store.path.read_bytes() == before
    assert [p.name for p in store.folder.iterdir() if p.name.endswith(".tmp")] == []
    assert "could not save" in caplog.text


def test_a_corrupt_file_reads_as_empty_with_one_warning_and_is_kept_aside(tmp_path, caplog):
    store = LazySessionStore(tmp_path)
    store.folder.mkdir(parents=True)
    store.path.write_text('{"p0": {"cwd": "/w", "zcodeSid": "sess_0"')  # truncated
    assert store.load() == {}
    assert store.get("p0") is None
    assert len([r for r in caplog.records if r.levelname == "WARNING"]) == 1
    store.record("p1", "/w")
    store.flush(5)
    assert json.loads(store.path.read_text()) == {"p1": store.ours["p1"]}
    assert store.path.with_suffix(".json.corrupt").read_text().startswith('{"p0"')


WRITER = """
import sys
from pathlib import Path
from zcode_acp.actors import lazy_store
from zcode_acp.actors.lazy_store import LazySessionStore
store = LazySessionStore(Path(sys.argv[1]))
for i in range(40):
    store.record(f"{sys.argv[2]}-{i}", "/w", f"sess-{sys.argv[2]}-{i}" if i % 2 else None)
    assert store.flush(30)  # one write per record: the two processes contend for the lock
"""


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), name], cwd=root)
               for name in ("a", "b")]
    assert [w.wait(timeout=60) for w in writers] == [0, 0]
    data = json.loads((tmp_path / "v2" / "acp-lazy-sessions.json").read_text())
    assert len(data) == 80
    assert data["a-3"]["zcodeSid"] == "sess-a-3" and "zcodeSid" not in data["b-2"]


def test_unused_entries_expire_after_30_days_used_ones_never():
    now = time.time() * 1000
    old = now - lazy_sessions.MAX_UNUSED_AGE_MS - 1
    entries = {"old-unused": {"cwd": "/w", "createdAt": old},
               "old-used": {"cwd": "/w", "createdAt": old, "zcodeSid": "s"},
               "new": {"cwd": "/w", "createdAt": now}}
    assert set(lazy_sessions.prune(entries, now)) == {"old-used", "new"}


def test_merge_never_loses_a_backend_id_already_on_disk():
    merged = lazy_sessions.merge({"p": {"cwd": "/w", "zcodeSid": "s"}}, {"p": {"cwd": "/w", "createdAt": 1}})
    assert merged["p"]["zcodeSid"] == "s"


@pytest.mark.parametrize("text", [b"[]", b"not json", b'"x"'])
def test_parse_rejects_what_is_not_a_map(text):
    with pytest.raises(lazy_sessions.CorruptStore):
        lazy_sessions.parse(text)


def test_delete_persists_a_tombstone_other_bridges_honour(tmp_path):
    store = LazySessionStore(tmp_path)
    store.record("p1", "/w", "sess_1")
    store.record("p2", "/w", "sess_2")
    store.delete("p1")
    store.delete("sess_9")  # a backend id this bridge never opened
    store.flush(5)
    assert store.get("p1") is None and store.get("p2")["zcodeSid"] == "sess_2"
    other = LazySessionStore(tmp_path)
    assert other.get("p1") is None and other.is_deleted("p1") and other.is_deleted("sess_1")
    assert other.is_deleted("sess_9") and not other.is_deleted("p2")
    assert other.deleted_backend_ids() == {"sess_1", "sess_9"}
    # A bridge that still holds the old entry in memory cannot bring it back.
    other.ours["p1"] = {"cwd": "/w", "createdAt": 1, "zcodeSid": "sess_1"}
    other.record("p3", "/w")
    other.flush(5)
    assert json.loads(store.path.read_text())["p1"]["deleted"] is True


def _big_store(tmp_path, entries=3000):
    """A file past SMALL, so changes go to the journal."""
    store = LazySessionStore(tmp_path)
    store.folder.mkdir(parents=True)
    now = int(time.time() * 1000)
    data = {f"old-{i}": {"cwd": "/w" * 40, "createdAt": now, "zcodeSid": f"s{i}"} for i in range(entries)}
    store.path.write_bytes(lazy_sessions.dumps(data))
    assert store.path.stat().st_size >= lazy_store.SMALL
    return store


def test_a_big_file_takes_changes_in_its_journal_and_readers_see_them(tmp_path):
    store = _big_store(tmp_path)
    before = store.path.read_bytes()
    store.record("p1", "/w")
    store.flush(5)
    store.record("p1", "/w", "sess_1")
    store.flush(5)
    assert store.path.read_bytes() == before  # not rewritten
    assert stat.S_IMODE(store.journal_path.stat().st_mode) == 0o600
    assert len(store.journal_path.read_bytes().splitlines()) == 2
    other = LazySessionStore(tmp_path)  # another process (nothing in memory)
    assert other.get("p1")["zcodeSid"] == "sess_1"
    assert other.get("old-7")["zcodeSid"] == "s7"
    assert len(other.load()) == 3001


def test_a_torn_journal_line_is_skipped_and_the_next_line_stays_whole(tmp_path):
    store = _big_store(tmp_path)
    store.journal_path.write_bytes(b'{"torn": {"cwd": "/w", "zcodeS')  # a writer killed mid-append
    store.record("p2", "/w", "sess_2")
    store.flush(5)
    other = LazySessionStore(tmp_path)
    assert other.get("p2")["zcodeSid"] == "sess_2" and other.get("torn") is None


def test_the_journal_is_folded_into_the_file_at_half_its_size(tmp_path, monkeypatch):
    store = _big_store(tmp_path)
    monkeypatch.setattr(lazy_store, "SMALL", 1)
    size = store.path.stat().st_size
    store.journal_path.write_bytes(b"x" * (size // 2) + b"\n")  # junk lines: skipped, then dropped
    store.record("p3", "/w", "sess_3")
    store.flush(5)
    assert store.journal_path.read_bytes() == b""
    data = json.loads(store.path.read_text())
    assert data["p3"]["zcodeSid"] == "sess_3" and len(data) == 3001


def test_two_processes_appending_to_one_journal_lose_nothing(tmp_path):
    _big_store(tmp_path)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), name], cwd=root)
               for name in ("a", "b")]
    assert [w.wait(timeout=60) for w in writers] == [0, 0]
    entries = LazySessionStore(tmp_path).load()
    assert len(entries) == 3080
    assert entries["a-3"]["zcodeSid"] == "sess-a-3" and "zcodeSid" not in entries["b-2"]


def test_a_home_that_cannot_be_made_is_one_warning_line_and_no_traceback(tmp_path, capfd, caplog):
    (tmp_path / "a-file").write_text("")
    store = LazySessionStore(tmp_path / "a-file" / "zcode-home")
    store.record("p1", "/w")  # logged, not raised: the session still works
    store.flush(5)
    assert any("cannot create" in record.getMessage() for record in caplog.records)
    assert "Traceback" not in capfd.readouterr().err  # gevent's pool printed one per failed call (issue 21)

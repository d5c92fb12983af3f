"""The remembered model catalog's file (actors/model_catalog.py): saves that overlap in one process
(issue 32: two saves shared one temporary name; the second's rename found it gone and a raw
``FileNotFoundError`` traceback reached stderr)."""

import json
import os

import gevent
from gevent import monkey

from zcode_acp.actors import model_catalog as catalog_module
from zcode_acp.actors.model_catalog import CatalogFile
from zcode_acp.protocol import model_catalog


def catalog(model_id: str) -> dict:
    return {"available": [{"ref": {"providerId": "zhipu", "modelId": model_id}, "label": model_id}]}


def record_writers(monkeypatch) -> list:
    """The greenlets the file's saves start (joined by the test: every write has ended)."""
    spawned: list = []
    real_spawn = gevent.spawn

    def spawn(*args, **kwargs):
        spawned.append(real_spawn(*args, **kwargs))
        return spawned[-1]

    monkeypatch.setattr(gevent, "spawn", spawn)
    return spawned


def join(writers: list) -> None:
    gevent.joinall(writers, timeout=10)
    assert writers and all(writer.ready() for writer in writers), "a catalog write never ended"


def stored_model(path) -> str | None:
    try:
        return json.loads(path.read_text())["available"][0]["ref"]["modelId"]
    except (OSError, ValueError):
        return None


def test_two_saves_at_once_leave_the_last_catalog_and_no_error(tmp_path, monkeypatch, caplog, capfd):
    # The pool threads are native: a native lock (not the patched one) holds the first write in
    # fsync until a second write reaches fsync too (bounded: a single writer never sends one).
    second_arrived = monkey.get_original("_thread", "allocate_lock")()
    second_arrived.acquire()
    written: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        written.append(os.readlink(f"/proc/self/fd/{fd}"))
        if len(written) == 1:
            second_arrived.acquire(timeout=1.0)
        elif len(written) == 2:
            second_arrived.release()
        real_fsync(fd)

    monkeypatch.setattr(catalog_module.os, "fsync", fsync)
    writers = record_writers(monkeypatch)
    file = CatalogFile(tmp_path)
    file.save(catalog("glm-5"))
    file.save(catalog("glm-5-air"))
    join(writers)

    assert not [r for r in caplog.records if "cannot remember" in r.getMessage()]
    assert "Traceback" not in capfd.readouterr().err
    assert len(set(written)) == len(written)  # never one temporary name for two writes
    assert [p.name for p in file.folder.iterdir()] == [model_catalog.FILE_NAME]  # no temporary left
    assert stored_model(file.path) == "glm-5-air"


def test_a_failed_write_is_one_warning_and_no_traceback(tmp_path, monkeypatch, caplog, capfd):
    def refuse(source, target):
        raise OSError("disk vanished mid-rename")

    monkeypatch.setattr(catalog_module.os, "replace", refuse)
    writers = record_writers(monkeypatch)
    file = CatalogFile(tmp_path)
    file.save(catalog("glm-5"))
    join(writers)
    assert len([r for r in caplog.records if "cannot remember" in r.getMessage()]) == 1
    assert "Traceback" not in capfd.readouterr().err
    assert list(file.folder.iterdir()) == []  # the temporary went with the failure

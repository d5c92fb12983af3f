"""The phone's file browser, attacked (actors/project_files.py): nothing outside the roots (symlinks
resolved first), no device or special file, a size cap, binaries refused; the git changes bounded."""

from __future__ import annotations

import os
import shutil
import subprocess

import gevent
import gevent.event
import pytest

from zcode_acp.actors.project_files import LIST_LIMIT, READ_LIMIT, changes, list_folder, read_text, serve
from zcode_acp.protocol.errors import RpcError


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "README.md").write_text("# demo\n")
    (tmp_path / "secret.txt").write_text("SECRET")
    return root


def refused(outcome, key_words: str) -> None:
    assert isinstance(outcome, RpcError) and outcome.code == -32602, outcome
    assert key_words in outcome.message, outcome.message


def test_a_folder_lists_folders_first_and_a_file_reads_as_text(project):
    listing = list_folder(None, (str(project),))
    assert [(e["name"], e["kind"]) for e in listing["entries"]] == [("src", "dir"), ("README.md", "file")]
    assert listing["entries"][1]["size"] == 7 and listing["truncated"] is False
    assert list_folder("src", (str(project),))["entries"] == [{"name": "app.py", "kind": "file", "size": 12}]
    assert read_text("src/app.py", (str(project),))["text"] == "print('hi')\n"


@pytest.mark.parametrize("path", ["../secret.txt", "src/../../secret.txt", "/etc/passwd", "/proc/self/environ",
                                  "/dev/stdin", "/"])
def test_nothing_outside_the_roots_is_read_or_listed(project, path):
    refused(read_text(path, (str(project),)), "outside")
    refused(list_folder(path, (str(project),)), "outside")


def test_a_symlink_out_of_the_roots_is_resolved_first_and_refused(project, tmp_path):
    (project / "escape").symlink_to(tmp_path / "secret.txt")
    (project / "up").symlink_to(tmp_path)
    (project / "proc").symlink_to("/proc/self")
    for path in ("escape", "up/secret.txt", "proc/environ"):
        refused(read_text(path, (str(project),)), "outside")
    kinds = {e["name"]: e["kind"] for e in list_folder(None, (str(project),))["entries"]}
    assert kinds["escape"] == kinds["up"] == kinds["proc"] == "other"  # shown, never opened


def test_a_symlink_inside_the_roots_opens_as_its_target(project):
    (project / "main.py").symlink_to(project / "src" / "app.py")
    assert {e["name"]: e["kind"] for e in list_folder(None, (str(project),))["entries"]}["main.py"] == "link"
    assert read_text("main.py", (str(project),))["text"] == "print('hi')\n"


def test_a_fifo_a_device_and_a_socket_are_refused_without_waiting(project):
    os.mkfifo(project / "pipe")  # nobody writes: an open that waited would hang this test
    (project / "zero").symlink_to("/dev/zero")
    refused(read_text("pipe", (str(project),)), "not a regular file")
    refused(read_text("zero", (str(project),)), "outside")  # /dev is no root
    refused(read_text("zero", (str(project), "/dev")), "not a regular file")
    assert {e["name"]: e["kind"] for e in list_folder(None, (str(project),))["entries"]}["pipe"] == "other"


def test_a_large_file_and_a_binary_are_refused(project):
    (project / "big.log").write_bytes(b"x" * (READ_LIMIT + 1))
    (project / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    refused(read_text("big.log", (str(project),)), "more than")
    refused(read_text("image.png", (str(project),)), "binary")


def test_a_huge_folder_is_cut(project):
    folder = project / "many"
    folder.mkdir()
    for index in range(LIST_LIMIT + 5):
        (folder / f"f{index}").touch()
    listing = list_folder("many", (str(project),))
    assert len(listing["entries"]) == LIST_LIMIT and listing["truncated"] is True


def test_a_configured_root_is_a_root_too(project, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("notes")
    assert read_text(str(other / "notes.txt"), (str(project), str(other)))["text"] == "notes"
    refused(read_text(str(other / "notes.txt"), (str(project),)), "outside")


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_working_trees_changes_are_a_diff_and_the_untracked_names(project):
    assert changes(str(project))["git"] is False
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
        subprocess.run(["git", "-C", str(project), *args], check=True, env=env, capture_output=True)
    (project / "src" / "app.py").write_text("print('hello')\n")
    (project / "new.txt").write_text("new\n")
    found = changes(str(project))
    assert found["git"] is True and found["truncated"] is False
    assert "-print('hi')" in found["diff"] and "+print('hello')" in found["diff"]
    assert found["untracked"] == ["new.txt"]


def test_each_request_is_answered_once_off_the_loop(project):
    answers: list = []
    done = gevent.event.Event()

    def answer(result, error):
        answers.append((result, error))
        done.set()
    serve("zcode/files/read", {"path": "../secret.txt"}, str(project), answer, project_roots=tuple)
    ticked = gevent.event.Event()
    gevent.spawn(ticked.set)
    assert ticked.wait(2) and done.wait(5)
    [(result, error)] = answers
    assert result is None and error.code == -32602

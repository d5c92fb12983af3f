"""The project's files, read-only, for the phone's file browser (docs/web-client.md, "Files").

Three requests, each naming a session (its folder is the first root):

* ``_zcode/files/list {sessionId, path?}`` → ``{roots, path, entries: [{name, kind, size?}], truncated}``:
  a folder under the roots (the session's folder when ``path`` is absent), folders first, at most
  ``LIST_LIMIT`` entries. ``kind`` is ``dir``, ``file``, ``link`` (a symbolic link whose target is
  under the roots: open it by its name) or ``other`` (a link out of the roots, a FIFO, a device,
  a socket: shown, never opened).
* ``_zcode/files/read {sessionId, path}`` → ``{path, size, text}``: a regular text file under the
  roots, at most ``READ_LIMIT`` bytes, UTF-8 (invalid bytes replaced). A NUL byte in its first
  ``BINARY_PROBE`` bytes makes it binary: refused.
* ``_zcode/files/changes {sessionId}`` → ``{git, diff, untracked, truncated}``: the working tree's
  changes against ``HEAD`` (``git diff``, staged ones too) and the untracked files, when the
  session's folder is in a git work tree (``git: false`` otherwise). The diff is cut at
  ``DIFF_LIMIT`` bytes, and git is given ``DIFF_DEADLINE`` seconds.

Every path goes through actors/local_files.py's rules: its real path under a root, opened without
following a last link and without waiting, ``fstat`` deciding what it is. The reads run in gevent's
thread pool and git as a cooperative child, from a greenlet of their own: the Supervisor passes the
request on and the answer is written when it is ready (exactly once, with ``-32602`` and the reason
for a refusal).
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Callable, Sequence
from typing import Any

import gevent

from zcode_acp.actors.local_files import OPEN_FLAGS, Roots, configured_project_roots, inside, opened_path, roots_with
from zcode_acp.config.child_env import scrubbed_environment
from zcode_acp.protocol.errors import INTERNAL_ERROR, RpcError, invalid_params, worded

LIST_LIMIT = 2000
READ_LIMIT = 512 * 1024
BINARY_PROBE = 8192
DIFF_LIMIT = 1024 * 1024
DIFF_DEADLINE = 10.0
UNTRACKED_LIMIT = 500
METHODS = ("zcode/files/list", "zcode/files/read", "zcode/files/changes")

Answer = Callable[[Any, RpcError | None], None]


def _target(path: Any, roots: Sequence[str]) -> str | RpcError:
    """The real path ``path`` names (relative: to the first root), if it is under the roots."""
    if path is None:
        path = ""
    if not isinstance(path, str) or "\0" in path:
        return invalid_params("path", "invalid.must_be_string")
    joined = path if os.path.isabs(path) else os.path.join(roots[0], path)
    real = os.path.realpath(joined)
    if not inside(real, roots):
        return invalid_params("path", "invalid.files.outside_roots", path=path)
    return real


def _kind(entry: os.DirEntry[str], roots: Sequence[str]) -> str:
    try:
        if entry.is_symlink():
            target = os.path.realpath(entry.path)
            return "link" if inside(target, roots) and (os.path.isdir(target) or os.path.isfile(target)) else "other"
        if entry.is_dir(follow_symlinks=False):
            return "dir"
        if entry.is_file(follow_symlinks=False):
            return "file"
    except OSError:
        pass
    return "other"


def list_folder(path: Any, roots: Sequence[str]) -> dict[str, Any] | RpcError:
    real = _target(path, roots)
    if isinstance(real, RpcError):
        return real
    if not os.path.isdir(real):
        return invalid_params("path", "invalid.files.not_a_folder", path=path or ".", reason="not a folder")
    entries: list[dict[str, Any]] = []
    truncated = False
    try:
        with os.scandir(real) as listing:
            for entry in listing:
                if len(entries) >= LIST_LIMIT:
                    truncated = True
                    break
                kind = _kind(entry, roots)
                item: dict[str, Any] = {"name": entry.name, "kind": kind}
                if kind == "file":
                    try:
                        item["size"] = entry.stat(follow_symlinks=False).st_size
                    except OSError:
                        pass
                entries.append(item)
    except OSError as exc:
        return invalid_params("path", "invalid.files.not_a_folder", path=path or ".", reason=exc.strerror)
    entries.sort(key=lambda item: (item["kind"] != "dir", item["name"].lower()))
    return {"roots": list(roots), "path": real, "entries": entries, "truncated": truncated}


def read_text(path: Any, roots: Sequence[str]) -> dict[str, Any] | RpcError:
    if not path:
        return invalid_params("path", "invalid.must_be_nonempty_string")
    real = _target(path, roots)
    if isinstance(real, RpcError):
        return real
    try:
        fd = os.open(real, OPEN_FLAGS)
    except OSError as exc:
        return invalid_params("path", "invalid.files.unreadable", path=path, reason=exc.strerror)
    try:
        if not inside(opened_path(fd, real), roots):  # swapped for a link since the check
            return invalid_params("path", "invalid.files.outside_roots", path=path)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return invalid_params("path", "invalid.files.not_a_file", path=path)
        if info.st_size > READ_LIMIT:
            return invalid_params("path", "invalid.files.too_large", path=path, size=info.st_size, limit=READ_LIMIT)
        data = os.read(fd, READ_LIMIT + 1)[:READ_LIMIT]  # never more than the bound, whatever fstat said
    except OSError as exc:
        return invalid_params("path", "invalid.files.unreadable", path=path, reason=exc.strerror)
    finally:
        os.close(fd)
    if b"\0" in data[:BINARY_PROBE]:
        return invalid_params("path", "invalid.files.binary", path=path)
    return {"path": real, "size": len(data), "text": data.decode("utf-8", "replace")}


def _git(cwd: str, *args: str, limit: int) -> tuple[bytes, bool] | None:
    """git's output (cut at ``limit``; True when cut), or None when git is missing, fails or is too slow."""
    try:
        child = subprocess.Popen(["git", "-C", cwd, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, env={**scrubbed_environment(os.environ),
                                                                 "GIT_OPTIONAL_LOCKS": "0", "GIT_PAGER": "cat"})
    except OSError:
        return None
    assert child.stdout is not None
    try:
        with gevent.Timeout(DIFF_DEADLINE):
            output = child.stdout.read(limit + 1)
            cut = len(output) > limit
            if cut:
                child.kill()
            child.wait()
    except gevent.Timeout:
        child.kill()
        child.wait()
        return None
    finally:
        child.stdout.close()
    if child.returncode != 0 and not cut:
        return None
    return output[:limit], cut


def changes(cwd: str) -> dict[str, Any]:
    inside_tree = _git(cwd, "rev-parse", "--is-inside-work-tree", limit=64)
    if inside_tree is None or inside_tree[0].strip() != b"true":
        return {"git": False, "diff": "", "untracked": [], "truncated": False}
    diff = _git(cwd, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "HEAD", "--", limit=DIFF_LIMIT)
    if diff is None:  # no HEAD yet (a new repository): what is staged
        diff = _git(cwd, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--cached", "--", limit=DIFF_LIMIT)
    untracked = _git(cwd, "ls-files", "--others", "--exclude-standard", "-z", limit=64 * 1024)
    names = [name.decode("utf-8", "replace") for name in (untracked[0] if untracked else b"").split(b"\0") if name]
    text, cut = diff if diff is not None else (b"", False)
    return {"git": True, "diff": text.decode("utf-8", "replace"), "untracked": names[:UNTRACKED_LIMIT],
            "truncated": cut or len(names) > UNTRACKED_LIMIT}


def serve(method: str, params: dict[str, Any], folder: str, answer: Answer,
          project_roots: Roots = configured_project_roots) -> None:
    """Answer ``method`` (one of ``METHODS``, without its ``_``) from a greenlet of its own, exactly once."""

    def run() -> None:
        try:
            if method == "zcode/files/changes":
                outcome: dict[str, Any] | RpcError = changes(folder)
            else:
                job = list_folder if method == "zcode/files/list" else read_text
                path = params.get("path")

                def in_pool() -> dict[str, Any] | RpcError:
                    return job(path, roots_with(folder, project_roots))
                outcome = gevent.get_hub().threadpool.apply(in_pool)
        except Exception as exc:  # a bug: still one answer
            answer(None, worded(INTERNAL_ERROR, "error.internal_in", method=f"_{method}", detail=type(exc).__name__))
            return
        if isinstance(outcome, RpcError):
            answer(None, outcome)
        else:
            answer(outcome, None)

    gevent.spawn(run)

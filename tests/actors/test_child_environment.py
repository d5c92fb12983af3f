"""Every child of the bridge (the engine, the watchdog) gets an environment without its secrets (issue 29)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from zcode_acp.actors.transport import backend_process

TOKEN = "remote-token-0123456789abcdef"
HOOK = "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=robot-key-5f1c"
SECRETS = {"ZCODE_ACP_REMOTE_TOKEN": TOKEN, "ZCODE_ACP_REMOTE": "1", "ZCODE_ACP_NOTIFY_URL": HOOK,
           "MY_COPY": f"x{TOKEN}x", "HOOK_COPY": HOOK, "KEEP_ME": "still here"}


def environ_of(pid: int) -> dict[bytes, bytes]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)


def leaks(names: dict[bytes, bytes]) -> list[bytes]:
    return [name for name, value in names.items()
            if name.startswith((b"ZCODE_ACP_REMOTE", b"ZCODE_ACP_NOTIFY_URL"))
            or TOKEN.encode() in value or b"robot-key-5f1c" in value]


def test_the_watchdog_inherits_no_secret(monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    child = subprocess.Popen(["sleep", "30"], start_new_session=True)
    watchdog = backend_process.guard_group(child)  # type: ignore[arg-type]
    try:
        assert watchdog is not None
        names = environ_of(watchdog.pid)
        assert leaks(names) == [] and names[b"KEEP_ME"] == b"still here"
    finally:
        child.kill()
        child.wait(10)
        backend_process.release_guard(watchdog)
        if watchdog is not None:
            watchdog.wait(10)


def test_the_engine_gets_neither_the_token_nor_the_webhook(monkeypatch, tmp_path):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    env = backend_process.child_environment(["zcode"], tmp_path)
    assert leaks({k.encode(): v.encode() for k, v in env.items()}) == [] and env["KEEP_ME"] == "still here"

"""Processes for the hub tests: the real hub, fake bridges, and HTTP helpers.

Output lines are collected by a greenlet per pipe; waits are on those lines
(or on HTTP answers) with deadlines, never fixed sleeps.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from collections.abc import Callable, Mapping

import gevent
import gevent.event

FAKE_BRIDGE = str(Path(__file__).with_name("fake_bridge.py"))
REPO = str(Path(__file__).resolve().parents[2])
TOKEN = "test-token-0123456789"


class Process:
    """A child whose stdout and stderr lines are recorded as they arrive."""

    def __init__(self, argv: list[str], env: Mapping[str, str]) -> None:
        self.argv = argv
        self.lines: list[str] = []
        self._changed = gevent.event.Event()
        self.proc = subprocess.Popen(argv, env=dict(env), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
        self._readers = [gevent.spawn(self._pump, self.proc.stdout),
                         gevent.spawn(self._pump, self.proc.stderr)]

    def _pump(self, stream: Any) -> None:
        for raw in iter(stream.readline, b""):
            self.lines.append(raw.decode("utf-8", "replace").rstrip("\n"))
            self._changed.set()
        self._changed.set()

    def wait_line(self, pattern: str, timeout: float = 10.0) -> re.Match[str]:
        regex = re.compile(pattern)
        with gevent.Timeout(timeout, AssertionError(
                f"no line matching {pattern!r} in {timeout}s; got:\n" + "\n".join(self.lines))):
            seen = 0
            while True:
                for line in self.lines[seen:]:
                    match = regex.search(line)
                    if match:
                        return match
                seen = len(self.lines)
                if self.proc.poll() is not None and all(r.dead for r in self._readers):
                    raise AssertionError(f"process exited ({self.proc.returncode}) without "
                                         f"{pattern!r}:\n" + "\n".join(self.lines))
                self._changed.clear()
                self._changed.wait(0.5)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 5.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(timeout)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(5)


def base_env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZCODE_ACP_")}
    env.update(XDG_CONFIG_HOME=str(tmp / "config"), XDG_STATE_HOME=str(tmp / "state"),
               ZCODE_ACP_REMOTE_TOKEN=TOKEN,
               PYTHONPATH=REPO, PYTHONUNBUFFERED="1")
    env.update(extra)
    return env


class HubProcess(Process):
    def __init__(self, tmp: Path, *args: str, **env: str) -> None:
        super().__init__([sys.executable, "-m", "zcode_acp", "hub", "--port", "0", *args],
                         base_env(tmp, **env))
        match = self.wait_line(r"listening on http://[^:]+:(\d+)")
        self.port = int(match.group(1))
        self.url = f"http://127.0.0.1:{self.port}"


class FakeBridge(Process):
    def __init__(self, tmp: Path, hub_port: int, *args: str, **env: str) -> None:
        super().__init__([sys.executable, FAKE_BRIDGE, *args],
                         base_env(tmp, ZCODE_ACP_HUB_PORT=str(hub_port), **env))
        match = self.wait_line(r"^READY (\d+) (\S+)")
        self.port = int(match.group(1))
        self.instance_id = match.group(2)


def http(method: str, url: str, body: object | bytes | None = None, *,
         token: str | None = TOKEN, headers: Mapping[str, str] | None = None,
         timeout: float = 10.0) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) from a real HTTP request; errors are answers too."""
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, \
                response.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def get_json(url: str, **kwargs: Any) -> Any:
    status, _, body = http("GET", url, **kwargs)
    assert status == 200, (status, body)
    return json.loads(body)


def wait_until(condition: Callable[[], Any], timeout: float = 10.0, what: str = "") -> Any:
    """Re-check ``condition`` after each short yield until it is truthy (HTTP state polls)."""
    with gevent.Timeout(timeout, AssertionError(f"timed out waiting for {what or condition}")):
        while True:
            value = condition()
            if value:
                return value
            gevent.sleep(0.05)

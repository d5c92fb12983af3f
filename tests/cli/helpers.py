"""Running the installed commands as an editor or a user would (subprocesses, no shell)."""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent
ZCODE_ACP = str(BIN / "zcode-acp")
ZCODE_SIM = str(BIN / "zcode-sim")
ROOT = Path(__file__).resolve().parents[2]
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"  # no venv on it: what an editor launched from a desktop has


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """An environment without the developer's ZCODE_* settings, with a private ZCODE_HOME."""
    # Nor their locale: the bridge speaks the locale's language (issue 24); a test asks for Chinese itself.
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("ZCODE_") and key not in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE")}
    env["LANG"] = "C.UTF-8"
    home = tmp_path / "zcode-home"
    home.mkdir(mode=0o700, exist_ok=True)
    env.update({"ZCODE_HOME": str(home), "ZCODE_SIM_DATA": str(tmp_path / "sim-data"), "PATH": SYSTEM_PATH})
    env.update(extra)
    return env


def run(args: list[str], env: dict[str, str], timeout: float = 60, **kwargs: Any) -> subprocess.CompletedProcess:
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, **kwargs)


def wheel_venv(tmp_path: Path, name: str) -> Path:
    """A fresh virtual environment with the checkout installed from a wheel built now (not editable)."""
    wheels = tmp_path / "dist"
    built = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-q",
                 "-w", str(wheels), str(ROOT)], clean_env(tmp_path, PATH=f"{sys.prefix}/bin:/usr/bin:/bin"),
                timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    [wheel] = wheels.glob("zcode_acp_bridge-*.whl")
    venv = tmp_path / name
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    installed = run([str(venv / "bin" / "pip"), "install", "--disable-pip-version-check", "-q", str(wheel)],
                    clean_env(tmp_path), timeout=600)
    assert installed.returncode == 0, installed.stderr[-3000:]
    return venv


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Bridge:
    """A bridge process spoken to with raw ACP frames; every read has a timeout."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.frames: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stderr: list[str] = []
        self.readers = [threading.Thread(target=self._read_out, daemon=True),
                        threading.Thread(target=self._read_err, daemon=True)]
        for reader in self.readers:
            reader.start()
        self.next_id = 0

    def _read_out(self) -> None:
        for line in self.proc.stdout:
            self.frames.put(json.loads(line))  # anything but JSON on stdout fails the test
        self.frames.put(None)

    def _read_err(self) -> None:
        for line in self.proc.stderr:
            self.stderr.append(line.decode())

    def request(self, method: str, params: dict[str, Any], timeout: float = 20) -> dict[str, Any]:
        """The answer to one request (a result or an error frame); dialogs are allowed."""
        self.next_id += 1
        request_id = self.next_id
        self.send({"id": request_id, "method": method, "params": params})
        while True:
            frame = self.frames.get(timeout=timeout)
            assert frame is not None, f"the bridge closed stdout; stderr: {''.join(self.stderr)}"
            if frame.get("id") == request_id and "method" not in frame:
                return frame
            if "method" in frame and "id" in frame:  # a dialog: pick the first option
                options = frame["params"].get("options") or []
                self.send({"id": frame["id"], "result": {"outcome": {"outcome": "selected",
                                                                     "optionId": options[0]["optionId"]}}})

    def send(self, frame: dict[str, Any]) -> None:
        self.proc.stdin.write((json.dumps({"jsonrpc": "2.0", **frame}) + "\n").encode())
        self.proc.stdin.flush()

    def close(self, timeout: float = 10) -> int:
        """Close stdin (the editor goes away); the exit code, once stdout and stderr are read to the end."""
        self.proc.stdin.close()
        code = self.proc.wait(timeout=timeout)
        for reader in self.readers:
            reader.join(timeout)
        return code


INITIALIZE = {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "tests", "version": "1"}}

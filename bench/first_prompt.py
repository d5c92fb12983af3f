"""What a client that prompts at once waits for: ``python -m bench.first_prompt [TREE] [RUNS]``.

Spawns the bridge (``python -m zcode_acp`` run from ``TREE``, this checkout by default) on the
simulator; sends ``initialize``, then ``session/new``, then a prompt of one delta, each as soon as
the one before is answered; prints the medians (ms from the spawn) of the two answers and of the
prompt's first ``agent_message_chunk`` (docs/performance.md, "The first `session/new` answered
before the runtime"). Give another checkout as TREE to compare two builds on one interpreter.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def once(tree: Path) -> tuple[float, float, float]:
    home = Path(tempfile.mkdtemp())
    sim = shutil.which("zcode-sim", path=str(Path(sys.executable).parent)) or "zcode-sim"
    env = {**os.environ, "ZCODE_BIN": sim, "ZCODE_HOME": str(home / "zcode-home"), "ZCODE_SIM_DATA": str(home / "sim")}
    env.pop("PYTHONPATH", None)  # `-m` from TREE imports TREE's code
    started = time.monotonic()
    bridge = subprocess.Popen([sys.executable, "-m", "zcode_acp"], cwd=tree, env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert bridge.stdin is not None and bridge.stdout is not None

    def send(request_id: int, method: str, params: dict[str, Any]) -> None:
        frame = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        bridge.stdin.write((json.dumps(frame) + "\n").encode())  # type: ignore[union-attr]
        bridge.stdin.flush()  # type: ignore[union-attr]

    def until(found: Any) -> tuple[float, dict[str, Any]]:
        while True:
            line = bridge.stdout.readline()  # type: ignore[union-attr]
            assert line, "the bridge closed its output"
            frame = json.loads(line)
            if found(frame):
                return (time.monotonic() - started) * 1000, frame

    try:
        send(1, "initialize", {"protocolVersion": 1})
        initialized, _ = until(lambda f: f.get("id") == 1)
        send(2, "session/new", {"cwd": str(home), "mcpServers": []})
        created, answer = until(lambda f: f.get("id") == 2)
        send(3, "session/prompt", {"sessionId": answer["result"]["sessionId"],
                                   "prompt": [{"type": "text", "text": "#sim stream count=1 text=hi"}]})
        first, _ = until(lambda f: f.get("method") == "session/update"
                         and f["params"]["update"].get("sessionUpdate") == "agent_message_chunk")
    finally:
        bridge.stdin.close()
        bridge.wait(timeout=30)
        shutil.rmtree(home, ignore_errors=True)
    return initialized, created, first


def main() -> None:
    tree = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    rows = [once(tree) for _ in range(runs)]
    initialized, created, first = (statistics.median(column) for column in zip(*rows, strict=True))
    print(f"{tree}: initialize {initialized:.0f} ms, session/new {created:.0f} ms, "
          f"the prompt's first update {first:.0f} ms (medians of {runs})")


if __name__ == "__main__":
    main()

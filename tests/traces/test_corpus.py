"""Every trace in this folder replays against this build without a difference.

The corpus is recorded from the simulator (``python -m tests.traces.driver``);
a trace a user sends in joins it the same way (docs/traces.md). It holds both
simulator dialects (the ``-cli016`` traces are the 0.16 engine), a session of
two clients (the editor and a remote one), and traces recorded with
``--trace-redact-content`` (``-redacted``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from zcode_acp.cli.replay import run_replay

HERE = Path(__file__).resolve().parent
CORPUS = sorted(HERE.glob("*.jsonl"))


def replay(path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "zcode_acp", "replay", str(path), *args],
                          capture_output=True, text=True, timeout=120)


def test_the_corpus_covers_the_scenarios_it_promises():
    names = {p.stem for p in CORPUS}
    assert {"streaming", "tools-terminal", "permission", "plan", "questions", "cancel", "preempt", "background",
            "load-history", "backend-restart", "streaming-cli016", "cancel-cli016", "permission-cli016",
            "two-clients", "questions-redacted", "load-history-redacted"} <= names


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_trace_replays_without_a_difference(path):
    # In this process and --fast (the round trips replay through the command with the recorded pacing).
    said: list[str] = []
    code = run_replay(str(path), fast=True, out=said.append)
    assert code == 0, "\n".join(said)
    assert "the bridge sent what was recorded" in said[-1]

"""Smoke test of the long random run (bench/adversarial.py): a few hundred frames, figures printed."""

import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench import adversarial


def test_the_random_run_prints_its_figures_and_keeps_stdout_pure():
    out = io.StringIO()
    stats = adversarial.run(frames=300, seed=1, sessions=2, out=out, settle=5.0, idle=0.0)
    text = out.getvalue()
    for label in ("seed", "answered exactly once", "answered twice", "unanswered", "wrong code",
                  "impure stdout lines", "RSS start / peak / end"):
        assert label in text
    assert stats["random_frames"] >= 300 and stats["requests"] > 100
    assert stats["impure"] == 0 and stats["twice"] == 0 and stats["stray"] == 0
    assert stats["exit_code"] == 0


def test_the_remote_run_prints_its_figures_and_keeps_the_editors_stdout_pure(sim_dialect):
    """bench/adversarial_remote.py, a few seconds of it: the table, a pure stdout, a clean exit."""
    import subprocess

    done = subprocess.run([sys.executable, "bench/adversarial_remote.py", "--seconds", "3", "--remotes", "2",
                           "--sessions", "2", "--seed", "3", "--dialect", sim_dialect, "--idle", "0.5"],
                          cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True, timeout=240)
    out = done.stdout
    assert f"== dialect {sim_dialect}" in out and out.count("\neditor | 1 |") == 1, done.stdout + done.stderr
    assert "editor impure stdout lines: 0" in out and "exit code after stdin EOF: 0" in out

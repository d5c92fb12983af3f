"""The memory rows of ``python -m bench`` run and print their goals (issue 23; no figure is judged here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_quick_placeholder_row_prints_its_goal() -> None:
    run = subprocess.run([sys.executable, "-m", "bench", "--quick", "--only", "new10k"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "RuntimeError" not in run.stderr  # e.g. the store's writer failing under the burst of creates
    (row,) = run.stdout.splitlines()[2:]
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[0] == "RSS with 1,000 sessions straight from session/new (never used)"
    assert float(cells[1].split(" MiB")[0]) > 0
    assert cells[2] == "≤ 150 MiB"
    assert cells[3] == "`python -m bench --quick --only new10k`"

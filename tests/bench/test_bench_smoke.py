"""``python -m bench`` runs and prints its table (a smoke test: no figure is judged here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_quick_startup_row_prints_a_table_line() -> None:
    run = subprocess.run([sys.executable, "-m", "bench", "--quick", "--only", "startup"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[:2] == ["| figure | measured | goal | reproduce |", "|---|---|---|---|"]
    (row,) = lines[2:]
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[0].startswith("spawn → `initialize` answered")
    wall, _, rest = cells[1].partition(" ms (")
    assert float(wall) > 0 and float(rest.split(" ms of the bridge's CPU")[0]) > 0
    assert cells[2] == "≤ 120 ms"
    assert cells[3] == "`python -m bench --quick --only startup`"


def test_unknown_row_is_refused() -> None:
    run = subprocess.run([sys.executable, "-m", "bench", "--only", "nonsense"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert "invalid choice" in run.stderr

"""``python -m bench`` runs and prints its table (a smoke test: no figure is judged here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_quick_startup_row_prints_a_table_line() -> None:
    run = subprocess.run([sys.executable, "-m", "bench", "--quick", "--only", "startup"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)  # it builds a wheel and two venvs
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[:2] == ["| figure | measured | goal | reproduce |", "|---|---|---|---|"]
    first, after = lines[2:]
    cells = [cell.strip() for cell in first.strip("|").split("|")]
    assert cells[0].startswith("spawn → `initialize` answered, wheel · editable install")
    kinds = dict(part.split(" ", 1) for part in cells[1].split(" · "))
    assert set(kinds) == {"wheel", "editable", "floor"}
    for figure in kinds.values():  # "45 ms (44 ms CPU)"
        wall, _, cpu = figure.partition(" ms (")
        assert float(wall) > 0 and float(cpu.split(" ms CPU")[0]) > 0
    assert cells[2] == "≤ 80 ms wheel, ≤ 100 ms editable"
    assert cells[3] == "`python -m bench --quick --only startup`"
    assert after.startswith("| time to a first session: spawn → `session/new` answered")


def test_quick_load_fake_row_replays_the_fake_engines_history() -> None:
    run = subprocess.run([sys.executable, "-m", "bench", "--quick", "--only", "load-fake"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    (line,) = run.stdout.splitlines()[2:]
    assert line.startswith("| cold `session/load` of a 2,000-message history, the fake backend as the engine")
    assert "; 2,000 updates replayed |" in line  # every message of the fake engine's history came back


def test_unknown_row_is_refused() -> None:
    run = subprocess.run([sys.executable, "-m", "bench", "--only", "nonsense"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert "invalid choice" in run.stderr


def test_quick_v4_rows_print_legacy_and_v4_side_by_side() -> None:
    run = subprocess.run([sys.executable, "-m", "bench", "--quick", "--only", "v4"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    rows = [line for line in run.stdout.splitlines() if line.startswith("| v4 vs legacy")]
    assert len(rows) == 5  # the stream, the stream merged by the engine's flush window, first update, load, idle
    assert all(("legacy" in row.split("|")[2] and "v4" in row.split("|")[2]) or "snapshot" in row.split("|")[2]
               for row in rows)


def test_quick_remote_rows_reach_a_remote_client_as_the_rules_stand() -> None:
    """The remote row drives the endpoint as a phone would (a header token, a load): under 8 MiB of
    backlog nothing drops it, so the fast client gets every update however busy the machine is."""
    run = subprocess.run([sys.executable, "-m", "bench", "--quick", "--only", "remote"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    fast, stalled = run.stdout.splitlines()[2:]
    assert "(20,000 of 20,000)" in fast, fast
    assert stalled.startswith("| editor updates/s with a stalled remote client attached")

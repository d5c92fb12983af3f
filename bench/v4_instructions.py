"""Instructions per update of ``bench/v4_path.py``'s streaming turn, for ``valgrind --tool=callgrind``.

A loaded machine moves wall figures but not instruction counts. Each run here does one
path's part of ``v4_path.streaming`` once; the turn's frames and events are made first in
every run, so the instructions of the timed loop are the difference between a run with
the loop and one without (``--setup-only``), divided by the updates it made:

    PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        .venv/bin/python -m bench.v4_instructions v4 2000 [--setup-only]

``python -m bench.v4_instructions --report 2000`` runs the four and prints the figures
(a few minutes: callgrind is ~50x slower than the interpreter). ``--delta-ms 10`` has the
simulator play the engine's 30 ms flush window with deltas 10 ms apart (v4's frames then
carry ~3 appends each; legacy is unchanged): a separate figure, per delta.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

from bench.v4_path import _prepared, legacy_loop, v4_loop


def run(path: str, count: int, setup_only: bool, delta_ms: float | None = None) -> int:
    """The updates the loop made (0 with ``setup_only``); ``delta_ms``: the plane coalesces (``_prepared``)."""
    feed, frames, legacy = _prepared(count, delta_ms=delta_ms)
    if setup_only:
        return 0
    return legacy_loop(legacy) if path == "legacy" else v4_loop(feed, frames)


def _instructions(path: str, count: int, setup_only: bool, delta_ms: float | None = None) -> tuple[int, int]:
    """(instructions, updates) of one run under callgrind."""
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
               sys.executable, "-m", "bench.v4_instructions", path, str(count)]
    if setup_only:
        command.append("--setup-only")
    if delta_ms is not None:
        command += ["--delta-ms", str(delta_ms)]
    done = subprocess.run(command, capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    collected = re.search(r"Collected : (\d+)", done.stderr)
    assert collected, done.stderr
    return int(collected.group(1)), int(done.stdout.split()[-1])


def report(count: int, delta_ms: float | None = None) -> None:
    """Per update; with ``delta_ms`` (v4's frames coalesced, fewer updates than deltas) per delta too."""
    for path in ("legacy", "v4"):
        base, _ = _instructions(path, count, True, delta_ms)
        total, updates = _instructions(path, count, False, delta_ms)
        print(f"{path}: {(total - base) / updates:,.0f} instructions per update, {(total - base) / count:,.0f} per delta "
              f"({updates} updates, {count} deltas; {total - base:,} of {total:,})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", choices=("legacy", "v4"))
    parser.add_argument("count", nargs="?", type=int, default=2000)
    parser.add_argument("--setup-only", action="store_true")
    parser.add_argument("--report", type=int, metavar="COUNT", help="run all four under callgrind and print")
    parser.add_argument("--delta-ms", type=float, help="deltas this far apart, the engine's 30 ms flush window merging v4's")
    args = parser.parse_args()
    if args.report:
        report(args.report, args.delta_ms)
    elif args.path:
        print(run(args.path, args.count, args.setup_only, args.delta_ms))
    else:
        parser.error("a path, or --report")


if __name__ == "__main__":
    main()

"""Instructions per update of ``bench/v4_path.py``'s streaming turn, for ``valgrind --tool=callgrind``.

A loaded machine moves wall figures but not instruction counts. Each run here does one
path's part of ``v4_path.streaming`` once; the turn's frames and events are made first in
every run, so the instructions of the timed loop are the difference between a run with
the loop and one without (``--setup-only``), divided by the updates it made:

    PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        .venv/bin/python -m bench.v4_instructions v4 2000 [--setup-only]

``python -m bench.v4_instructions --report 2000`` runs the four and prints the figures
(a few minutes: callgrind is ~50x slower than the interpreter).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

from bench.v4_path import _prepared, legacy_loop, v4_loop


def run(path: str, count: int, setup_only: bool) -> int:
    """The updates the loop made (0 with ``setup_only``)."""
    feed, frames, legacy = _prepared(count)
    if setup_only:
        return 0
    return legacy_loop(legacy) if path == "legacy" else v4_loop(feed, frames)


def _instructions(path: str, count: int, setup_only: bool) -> tuple[int, int]:
    """(instructions, updates) of one run under callgrind."""
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
               sys.executable, "-m", "bench.v4_instructions", path, str(count)]
    if setup_only:
        command.append("--setup-only")
    done = subprocess.run(command, capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    collected = re.search(r"Collected : (\d+)", done.stderr)
    assert collected, done.stderr
    return int(collected.group(1)), int(done.stdout.split()[-1])


def report(count: int) -> None:
    for path in ("legacy", "v4"):
        base, _ = _instructions(path, count, True)
        total, updates = _instructions(path, count, False)
        print(f"{path}: {(total - base) / updates:,.0f} instructions per update "
              f"({updates} updates, {count} deltas; {total - base:,} of {total:,})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", choices=("legacy", "v4"))
    parser.add_argument("count", nargs="?", type=int, default=2000)
    parser.add_argument("--setup-only", action="store_true")
    parser.add_argument("--report", type=int, metavar="COUNT", help="run all four under callgrind and print")
    args = parser.parse_args()
    if args.report:
        report(args.report)
    elif args.path:
        print(run(args.path, args.count, args.setup_only))
    else:
        parser.error("a path, or --report")


if __name__ == "__main__":
    main()

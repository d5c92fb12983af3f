"""``python -m bench``: every performance figure of the bridge, one table, the goal beside each.

    python -m bench                  # the full run (a few minutes on 2 cores)
    python -m bench --quick          # fewer repetitions, smaller sizes: a smoke run
    python -m bench --only startup   # one row (repeatable: --only load --only store)

Run it from the repository root with the project's virtual environment. The
streaming rows use the fake backend (``bench/fake_backend.py``) and compare
the bridge with the minimal relay (``bench/relay.py``) in the same run;
``docs/performance.md`` explains each row and holds the latest table.
Progress goes to stderr, the table to stdout.
"""

from __future__ import annotations

import argparse
import tempfile
import os
import sys
import time
from dataclasses import dataclass
from collections.abc import Callable

from bench import lifecycle, streaming
from bench.peer import BRIDGE, RELAY


@dataclass(frozen=True)
class Sizes:
    runs: int  # throughput runs per agent (alternating)
    count: int  # deltas per throughput run
    startups: int
    bursts: int
    burst: int
    paced: int
    busy_runs: int
    messages: int
    store_entries: int
    store_runs: int
    many_sessions: int
    idle_many: int


FULL = Sizes(runs=5, count=100_000, startups=10, bursts=9, burst=50_000, paced=3000, busy_runs=5, messages=10_000,
             store_entries=100_000, store_runs=5, many_sessions=200, idle_many=10_000)
QUICK = Sizes(runs=1, count=20_000, startups=3, bursts=2, burst=20_000, paced=500, busy_runs=2, messages=2_000,
              store_entries=10_000, store_runs=2, many_sessions=50, idle_many=1_000)

Line = tuple[str, str, str]  # figure, measured, goal


def rates(values: list[float]) -> str:
    return ", ".join(f"{value / 1000:.0f}k" for value in values)


def row_throughput(s: Sizes) -> list[Line]:
    bridge, relay = streaming.throughput(s.runs, s.count)
    b, r = sorted(bridge)[len(bridge) // 2], sorted(relay)[len(relay) // 2]
    return [
        ("end-to-end updates/s (one session, bulk deltas)",
         f"{b:,.0f}/s (median of {len(bridge)}: {rates(bridge)})", "≥ 120,000/s"),
        ("… as a share of the minimal relay, same run, alternating",
         f"{b / r:.0%} (relay {r:,.0f}/s: {rates(relay)})", "≥ 80 %"),
    ]


def row_tracing(s: Sizes) -> list[Line]:
    with tempfile.TemporaryDirectory() as folder:
        plain, traced = streaming.tracing_cost(s.runs, s.count, os.path.join(folder, "trace.jsonl"))
    p, t = sorted(plain)[len(plain) // 2], sorted(traced)[len(traced) // 2]
    return [("streaming with `--trace` on, share of the same bridge untraced",
             f"{t / p:.0%} ({t:,.0f}/s traced: {rates(traced)}; {p:,.0f}/s untraced: {rates(plain)})", "≥ 90 %")]


def row_remote(s: Sizes) -> list[Line]:
    from bench import remote  # websocket-client: only for this row

    alone = streaming.stream_rate(BRIDGE, s.count)
    fast_editor, fast_remote, got, _ = remote.with_remote(s.count, stalled=False)
    stalled_editor, _, _, peak = remote.with_remote(s.count * 3, stalled=True)
    return [
        ("editor updates/s with a fast remote client attached (remote's rate beside it)",
         f"{fast_editor:,.0f}/s editor, {fast_remote:,.0f}/s remote ({got:,} of {s.count:,}); alone {alone:,.0f}/s",
         "both get everything"),
        ("editor updates/s with a stalled remote client attached (bridge peak RSS)",
         f"{stalled_editor:,.0f}/s; peak RSS {peak:.0f} MiB", "editor not slowed; RSS bounded"),
    ]


def row_startup(s: Sizes) -> list[Line]:
    found = lifecycle.startup_by_install(s.startups)
    wheel, editable, floor = found["wheel"], found["editable"], found["floor"]
    return [(f"spawn → `initialize` answered, wheel · editable install (`python -c pass` beside it; median of {s.startups},"
             " alternating; CPU: the process's own, what a busy machine does not inflate)",
             f"wheel {wheel[0]:.0f} ms ({wheel[1]:.0f} ms CPU) · editable {editable[0]:.0f} ms ({editable[1]:.0f} ms CPU)"
             f" · floor {floor[0]:.0f} ms ({floor[1]:.0f} ms CPU)", "≤ 80 ms wheel, ≤ 100 ms editable"),
            ("time to a first session: spawn → `session/new` answered (sent when `initialize`'s answer is read)",
             f"wheel {wheel[2]:.0f} ms ({wheel[3]:.0f} ms CPU) · editable {editable[2]:.0f} ms ({editable[3]:.0f} ms CPU)",
             "≤ 100 ms wheel, quiet machine")]


def row_first_update(s: Sizes) -> list[Line]:
    bridge = streaming.first_update(BRIDGE, s.bursts, s.burst)
    relay = streaming.first_update(RELAY, s.bursts, s.burst)
    return [(f"first update of a {s.burst:,}-delta burst reaches the editor (median of {s.bursts})",
             f"{bridge:.1f} ms (relay {relay:.1f} ms)", "≤ 20 ms")]


def row_latency(s: Sizes) -> list[Line]:
    p50, p99, rate = streaming.paced_latency(BRIDGE, s.paced, 0.001)
    r50, r99, _ = streaming.paced_latency(RELAY, s.paced, 0.001)
    return [(f"latency backend write → editor read at {rate:,.0f} updates/s",
             f"p50 {p50:.2f} ms, p99 {p99:.2f} ms (relay p50 {r50:.2f}, p99 {r99:.2f})",
             "p50 ≤ 0.5 ms, p99 ≤ 2 ms")]


def row_busy(s: Sizes) -> list[Line]:
    waited = streaming.busy_retry(BRIDGE, s.busy_runs, 20)
    return [("prompt right after a turn ends, backend busy 20 ms more (to its answer)",
             f"{waited:.0f} ms (median of {s.busy_runs})", "≤ 50 ms")]


def row_load(s: Sizes) -> list[Line]:
    cold, warm, replayed, size = lifecycle.history_load(s.messages)
    return [(f"`session/load` of a {s.messages:,}-message history ({size / 1e6:.2f} MB `session/messages` answer)",
             f"{cold:.0f} ms on a new bridge (backend spawn and resume included), {warm:.0f} ms again once warm; "
             f"{replayed:,} updates replayed", "≤ 500 ms")]


def row_load_fake(s: Sizes) -> list[Line]:
    wall, cpu, best, replayed = lifecycle.fake_history_load(s.messages, s.startups)
    return [(f"cold `session/load` of a {s.messages:,}-message history, the fake backend as the engine "
             f"(median of {s.startups}; the bridge's CPU in that time)",
             f"{wall:.0f} ms ({cpu:.0f} ms CPU; best {best:.0f} ms); {replayed:,} updates replayed", "≤ 500 ms")]


def row_store(s: Sizes) -> list[Line]:
    took, stall, normal = lifecycle.store_new(s.store_entries, s.store_runs)
    return [(f"`session/new` with {s.store_entries:,} entries in the lazy-session store",
             f"{took:.0f} ms; a 1 ms-paced stream stalls {stall:.0f} ms (longest gap; {normal:.1f} ms without)",
             "≤ 5 ms, no stall")]


def row_sessions(s: Sizes) -> list[Line]:
    aggregate, single, clean = streaming.many_sessions(BRIDGE, s.many_sessions, 500)
    return [(f"{s.many_sessions} sessions streaming at once (500 deltas each)",
             f"{aggregate:,.0f}/s aggregate, {aggregate / single:.0%} of one session alone ({single:,.0f}/s); "
             f"cross-talk: {'none' if clean else 'FOUND'}", "≥ 80 %, none")]


def row_rss(s: Sizes) -> list[Line]:
    rss, _ = lifecycle.idle_rss(200)
    return [("RSS with 200 idle sessions (each used once)", f"{rss:.0f} MiB", "≤ 80 MiB")]


def row_idle(s: Sizes) -> list[Line]:
    used, left, back = lifecycle.idle_rss_after_leaving(s.idle_many)
    return [(f"RSS with {s.idle_many:,} idle sessions (each used once, then idle past ZCODE_ACP_IDLE_AFTER="
             f"{lifecycle.IDLE_AFTER:g} s: they left memory)", f"{left:.0f} MiB ({used:.0f} MiB as the last was "
             f"used, the first ones already gone; all live: the rss10k row); a prompt to one of them answered in "
             f"{back:.0f} ms (it resumes)",
             "≤ 64 MiB; they come back on use")]


def row_rss_many(s: Sizes) -> list[Line]:
    rss, took = lifecycle.idle_rss(s.idle_many)
    return [(f"RSS with {s.idle_many:,} live sessions (each resumed and used once, none idle long enough "
             "to leave)", f"{rss:.0f} MiB (making them took {took:.0f} s)", "≤ 150 MiB")]


def row_placeholders(s: Sizes) -> list[Line]:
    rss, took = lifecycle.placeholder_rss(s.idle_many)
    return [(f"RSS with {s.idle_many:,} sessions straight from session/new (never used)",
             f"{rss:.0f} MiB (making them took {took:.0f} s)", "≤ 150 MiB")]


def row_v4(s: Sizes) -> list[Line]:
    from bench import v4_path  # the simulator's v4 plane makes the frames (not timed)

    count = s.count // 10
    legacy_rate, v4_rate = v4_path.streaming(count, s.runs)
    # The engine's own flush window (30 ms) with deltas 10 ms apart: a separate figure, per delta.
    legacy_merged, v4_merged, merged_frames = v4_path.streaming_coalesced(count, s.runs, 10.0)
    legacy_first, v4_first = v4_path.first_update(s.startups)
    history_ms, snapshot_ms, history_n, snapshot_n = v4_path.load(s.messages, s.store_runs)
    legacy_kib, v4_kib = v4_path.idle_memory()
    return [
        (f"v4 vs legacy, decoding only: updates/s of one turn of {count:,} deltas (in process)",
         f"legacy {legacy_rate:,.0f}/s, v4 {v4_rate:,.0f}/s", "—"),
        ("v4 vs legacy, decoding only: deltas/s of the same turn 10 ms a delta, v4 merged by the engine's "
         "30 ms flush window",
         f"legacy {legacy_merged:,.0f}/s, v4 {v4_merged:,.0f}/s ({merged_frames:,} v4 frames)", "—"),
        ("v4 vs legacy, decoding only: a turn's first delta → its update (in process)",
         f"legacy {legacy_first:.0f} µs, v4 {v4_first:.0f} µs", "—"),
        (f"v4 vs legacy: `session/load` replay of a {s.messages:,}-row conversation (decoded JSON in hand)",
         f"history replay {history_ms:.0f} ms ({history_n:,} updates), snapshot replay {snapshot_ms:.0f} ms "
         f"({snapshot_n:,} updates)", "— (no history read on v4)"),
        ("v4 vs legacy: an idle session's per-session parts after 10 turns",
         f"legacy {legacy_kib:.0f} KiB (no conversation held), v4 {v4_kib:.0f} KiB (the topic's state)", "—"),
    ]


ROWS: dict[str, Callable[[Sizes], list[Line]]] = {
    "throughput": row_throughput,
    "tracing": row_tracing,
    "remote": row_remote,
    "startup": row_startup,
    "first-update": row_first_update,
    "busy": row_busy,
    "load": row_load,
    "load-fake": row_load_fake,
    "v4": row_v4,
    "store": row_store,
    "latency": row_latency,
    "sessions": row_sessions,
    "rss": row_rss,
    "rss10k": row_rss_many,
    "new10k": row_placeholders,
    "idle": row_idle,  # last: a bridge with 10,000 sessions takes a while to exit
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions and smaller sizes (a smoke run)")
    parser.add_argument("--only", action="append", choices=list(ROWS), metavar="ROW",
                        help=f"run only this row (repeatable): {', '.join(ROWS)}")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    lines: list[tuple[Line, str]] = []
    for key, row in ROWS.items():
        if args.only and key not in args.only:
            continue
        started = time.perf_counter()
        print(f"bench: {key}…", file=sys.stderr, flush=True)
        for line in row(sizes):
            lines.append((line, key))
        print(f"bench: {key} took {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    quick = " --quick" if args.quick else ""
    print("| figure | measured | goal | reproduce |")
    print("|---|---|---|---|")
    for (figure, measured, goal), key in lines:
        print(f"| {figure} | {measured} | {goal} | `python -m bench{quick} --only {key}` |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

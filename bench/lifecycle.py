"""The figures around the stream: start-up, history replay, the lazy-session store, memory.

Start-up and memory use the fake backend (``bench/fake_backend.py``);
history replay needs a backend that persists and resumes sessions, so it runs
on ``zcode-sim``. The store figure writes a lazy-session file of the size
wanted before the bridge starts (its format: ``docs/sessions.md``).
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from bench.peer import Peer, fake_backend
from bench.streaming import CHUNK, pipelined


def cpu_ms(pid: int) -> float:
    """CPU time a process has used so far, all its threads (the scheduler's count, in ns, not 10 ms ticks)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):
            pass
    return total / 1e6


def startup_times(runs: int, command: list[str] | None = None) -> tuple[float, float]:
    """(median ms from spawning the bridge to its ``initialize`` answer, median CPU ms the bridge used by then).

    The CPU figure is what a busy machine does not inflate: when other
    processes compete for the cores, wall time grows but CPU time stays.

    One untimed start comes first, allowed to write the bytecode cache even
    under ``PYTHONDONTWRITEBYTECODE``: an installed bridge has its ``.pyc``
    files (pip writes them), and without them every start would compile the
    bridge's modules from source (~60 ms here), which is not what an editor's
    launch costs.
    """
    with Peer({"PYTHONDONTWRITEBYTECODE": ""}, command, backend=fake_backend()) as peer:
        peer.initialize()
    times, cpu = [], []
    for _ in range(runs):
        wall, used, _, _ = one_start(command)
        times.append(wall)
        cpu.append(used)
    return statistics.median(times), statistics.median(cpu)


def one_start(command: list[str] | None = None) -> tuple[float, float, float, float]:
    """(ms to the ``initialize`` answer, the bridge's CPU ms by then, and the same two at the answer to a
    ``session/new`` sent right after it: when the runtime is up, past what an early ``initialize`` answer hides)."""
    with Peer(command=command, backend=fake_backend()) as peer:
        peer.initialize()
        wall = time.perf_counter() - peer.started
        used = cpu_ms(peer.proc.pid)
        peer.new_session()
        return wall * 1000, used, (time.perf_counter() - peer.started) * 1000, cpu_ms(peer.proc.pid)


def floor_start() -> tuple[float, float]:
    """(ms, CPU ms) of ``python -c pass`` by the same interpreter: what no Python program starts under."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0  # reaped here
    return (time.perf_counter() - started) * 1000, (usage.ru_utime + usage.ru_stime) * 1000


ROOT = Path(__file__).resolve().parents[1]
INSTALLS = ROOT / "build" / "bench-startup"


def install_kinds() -> dict[str, list[str]]:
    """The bridge's command in a throwaway venv per install kind (``build/bench-startup/``): a wheel of this
    checkout (``pip install .``, reinstalled each run) and an editable install (``pip install -e .``).

    The dependencies come from pip's configured index (a local mirror here) the first time only.
    """
    commands = {}
    for kind, spec in (("wheel", ["."]), ("editable", ["-e", "."])):
        venv = INSTALLS / kind
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        if not (venv / "bin" / "python").exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            subprocess.run(pip + spec, check=True, cwd=ROOT)
        else:  # the same version number: only a forced reinstall copies this checkout's files
            subprocess.run(pip + ["--no-deps", "--force-reinstall"] + spec, check=True, cwd=ROOT)
        # The console script, as an editor launches it (``python -m`` from the root would import the checkout).
        commands[kind] = [str(venv / "bin" / "zcode-acp"), "--log-level", "warning"]
    return commands


def startup_by_install(runs: int) -> dict[str, tuple[float, ...]]:
    """Median ``one_start`` figures per install kind, and the floor (``python -c pass``: ms, CPU ms, 0, 0),
    the kinds alternating start by start."""
    commands = install_kinds()
    for command in commands.values():  # untimed: the bytecode cache written, as pip leaves an install
        with Peer({"PYTHONDONTWRITEBYTECODE": ""}, command, backend=fake_backend()) as peer:
            peer.initialize()
    samples: dict[str, list[tuple[float, ...]]] = {kind: [] for kind in [*commands, "floor"]}
    for _ in range(runs):
        for kind, command in commands.items():
            samples[kind].append(one_start(command))
        samples["floor"].append((*floor_start(), 0.0, 0.0))
    return {kind: tuple(statistics.median(column) for column in zip(*rows, strict=True)) for kind, rows in samples.items()}


def history_load(messages: int, fill: float = 0.0) -> tuple[float, float, int, int]:
    """(ms from ``session/load`` to its answer on a new bridge — the backend's spawn and resume included —
    and again on the same bridge once warm, updates replayed, bytes of the ``session/messages`` answer).

    ``fill``: the simulator's history fill-up time after a resume (a real
    backend's quirk, ``docs/simulator.md``); 0 takes it out of the figure.
    """
    home = tempfile.mkdtemp(prefix="bench-load-")
    env = {"ZCODE_HOME": home, "ZCODE_SIM_DATA": home + "/sim", "ZCODE_SIM_HISTORY_FILL": str(fill)}
    with Peer(env) as peer:
        peer.initialize()
        session_id = peer.new_session()
        peer.prompt(session_id, f"#sim history count={messages}")
    # The simulator keeps the history in its session file: the answer is that list, encoded.
    (saved,) = [p for p in Path(home, "sim").iterdir() if p.suffix == ".json"]
    answer_size = len(json.dumps({"messages": json.loads(saved.read_bytes())["messages"]},
                                 separators=(",", ":")).encode())
    replayed = 0

    def count(line: bytes) -> None:
        nonlocal replayed
        replayed += b"message_chunk" in line

    load = {"sessionId": session_id, "cwd": "/tmp", "mcpServers": []}
    with Peer(env) as peer:  # a new bridge and backend: the editor reopened
        peer.initialize()
        started = time.perf_counter()
        peer.call("session/load", load, count)
        cold = time.perf_counter() - started
        warm = []
        for _ in range(3):
            started = time.perf_counter()
            peer.call("session/load", load)
            warm.append(time.perf_counter() - started)
    shutil.rmtree(home, ignore_errors=True)
    return cold * 1000, statistics.median(warm) * 1000, replayed, answer_size


def fake_history_load(messages: int, runs: int) -> tuple[float, float, float, int]:
    """(median ms from ``session/load`` to its answer on a new bridge, the bridge's median CPU ms in
    that time, the best ms, updates replayed) with the fake backend as the engine: it answers
    ``session/messages`` from a history encoded once, so the figure is the bridge's (its runtime's
    import, which the first request after ``initialize`` pays, the backend's spawn, resume, the two
    reads after it, the replay) and not a simulator's."""
    walls, cpus, replayed = [], [], 0

    def count(line: bytes) -> None:
        nonlocal replayed
        replayed += b"message_chunk" in line

    load = {"sessionId": "sess_bench_load", "cwd": "/tmp", "mcpServers": []}  # any id resumes there
    for _ in range(runs):
        replayed = 0
        with Peer({"FAKE_BACKEND_HISTORY": str(messages)}, backend=fake_backend()) as peer:
            peer.initialize()
            before = cpu_ms(peer.proc.pid)
            started = time.perf_counter()
            peer.call("session/load", load, count)
            walls.append((time.perf_counter() - started) * 1000)
            cpus.append(cpu_ms(peer.proc.pid) - before)
    return statistics.median(walls), statistics.median(cpus), min(walls), replayed


def write_store(home: str, entries: int) -> None:
    """A lazy-session file with ``entries`` sessions, half of them used (they never expire)."""
    folder = Path(home, "v2")
    folder.mkdir(parents=True, mode=0o700)
    now = int(time.time() * 1000)
    data = {}
    for index in range(entries):
        entry: dict[str, object] = {"cwd": f"/work/project{index % 50}", "createdAt": now - index}
        if index % 2:
            entry["zcodeSid"] = f"sess_{uuid.uuid4().hex[:12]}"
        data[str(uuid.uuid4())] = entry
    path = folder / "acp-lazy-sessions.json"
    path.write_text(json.dumps(data, indent=2))
    os.chmod(path, 0o600)


def store_new(entries: int, runs: int, interval: float = 0.001) -> tuple[float, float, float]:
    """(median ms of ``session/new``, median worst gap in a concurrent paced stream around it, the gap without it).

    One session streams a delta every ``interval`` seconds; ``session/new`` is
    asked ``runs`` times meanwhile. A reader thread stamps every line as it
    arrives, so the stall shows as the longest gap between two updates.
    """
    home = tempfile.mkdtemp(prefix="bench-store-")
    write_store(home, entries)
    arrivals: list[float] = []
    answers: dict[int, float] = {}
    with Peer({"ZCODE_HOME": home}, backend=fake_backend()) as peer:
        peer.initialize()
        session_id = peer.new_session()
        peer.prompt(session_id, "bulk 10")
        gap = 0.4
        count = int((runs + 2) * gap / interval)
        stream = peer.send_prompt(session_id, f"paced {count} {interval}")
        done = threading.Event()

        def read() -> None:
            marker = f'"id":{stream},'.encode()
            ended = False
            for line in peer.lines():
                now = time.perf_counter()
                if CHUNK in line:
                    arrivals.append(now)
                elif b'"sessionId"' in line and b'"result"' in line:
                    answers[json.loads(line)["id"]] = now
                ended = ended or marker in line
                if ended and len(answers) == runs:
                    break
            done.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        asked: list[tuple[int, float]] = []
        time.sleep(gap)
        for _ in range(runs):
            asked.append((peer.send("session/new", {"cwd": "/tmp", "mcpServers": []}), time.perf_counter()))
            time.sleep(gap)
        if not done.wait(60):
            raise RuntimeError("the stream did not end")
    times, stalls = [], []
    for request, sent in asked:
        answered = answers[request]
        times.append(answered - sent)
        # The store writes after the answer (off the loop), so the window is the whole gap
        # until the next session/new, not just the request's round trip.
        around = [t for t in arrivals if sent - 0.05 <= t <= max(answered + 0.05, sent + gap - 0.05)]
        stalls.append(max((b - a for a, b in itertools.pairwise(around)), default=0.0))
    quiet = [t for t in arrivals if t < asked[0][1] - 0.01]
    normal = max((b - a for a, b in itertools.pairwise(quiet)), default=0.0)
    return statistics.median(times) * 1000, statistics.median(stalls) * 1000, normal * 1000


IDLE_AFTER = 3.0  # seconds: ZCODE_ACP_IDLE_AFTER for the "after they left memory" figure


def idle_rss_after_leaving(sessions: int) -> tuple[float, float, float]:
    """(MiB RSS as the last of ``sessions`` sessions was used, MiB once they left memory, ms for one to answer a
    prompt again).

    Making 10,000 takes longer than ``IDLE_AFTER``, so the first ones have left by the time the last is
    used: the first figure is not "all live" (``idle_rss`` is).

    The bridge runs with ``ZCODE_ACP_IDLE_AFTER`` = ``IDLE_AFTER``; RSS is read
    again once it has stopped falling, then one session is prompted (it
    resumes: the backend session is brought back transparently).
    """
    with Peer({"ZCODE_ACP_IDLE_AFTER": str(IDLE_AFTER)}, backend=fake_backend()) as peer:
        peer.initialize()
        ids = [f"sess_idle{index}" for index in range(sessions)]
        pipelined(peer, [("session/resume", {"sessionId": sid, "cwd": "/tmp", "mcpServers": []}) for sid in ids])
        pipelined(peer, [("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "bulk 1"}]})
                         for sid in ids])
        used = peer.rss_kib() / 1024
        time.sleep(IDLE_AFTER)
        previous, settled = used, time.perf_counter() + 120
        while time.perf_counter() < settled:  # a benchmark may wait by the clock; tests may not
            time.sleep(2.0)
            now = peer.rss_kib() / 1024
            if abs(now - previous) < 1:
                break
            previous = now
        started = time.perf_counter()
        pipelined(peer, [("session/prompt", {"sessionId": ids[0], "prompt": [{"type": "text", "text": "bulk 1"}]})])
        return used, previous, (time.perf_counter() - started) * 1000


def placeholder_rss(sessions: int) -> tuple[float, float]:
    """(MiB RSS of the bridge holding ``sessions`` sessions straight from ``session/new``, never used;
    seconds making them took).

    Each is a placeholder: no backend session until its first use
    (docs/sessions.md). The lazy store lives in a fresh ``ZCODE_HOME``.
    """
    home = tempfile.mkdtemp(prefix="bench-new-")
    try:
        with Peer({"ZCODE_HOME": home}, backend=fake_backend()) as peer:
            peer.initialize()
            started = time.perf_counter()
            pipelined(peer, [("session/new", {"cwd": "/tmp", "mcpServers": []})] * sessions)
            elapsed = time.perf_counter() - started
            return peer.rss_kib() / 1024, elapsed
    finally:
        shutil.rmtree(home, ignore_errors=True)


def idle_rss(sessions: int) -> tuple[float, float]:
    """(MiB RSS of the bridge holding ``sessions`` idle sessions, each used once; seconds making them took).

    The sessions are opened with ``session/resume`` of backend session ids (the
    fake backend resumes any id), then each runs one short prompt: the same
    live Session, backend subscription and finished Turn as a session made with
    ``session/new`` and used, without ``session/new``'s lazy-store write, whose
    cost grows with the store (the ``store`` row) and would make 10,000 of
    them take many minutes.
    """
    with Peer(backend=fake_backend()) as peer:
        peer.initialize()
        started = time.perf_counter()
        ids = [f"sess_idle{index}" for index in range(sessions)]
        pipelined(peer, [("session/resume", {"sessionId": sid, "cwd": "/tmp", "mcpServers": []}) for sid in ids])
        pipelined(peer, [("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "bulk 1"}]})
                         for sid in ids])
        elapsed = time.perf_counter() - started
        return peer.rss_kib() / 1024, elapsed

"""``zcode-acp replay FILE``: run this build on a recorded trace and show what changed.

The bridge runs as a child process, exactly as an editor runs it, on
``zcode-sim --replay FILE`` (the trace's backend side). This module plays the
client: it sends the recorded ``client>bridge`` frames in order, each only
once the bridge has sent as many frames as it had sent before it in the
recording (so answers, dialogs and streamed updates the client reacted to are
there first), with the recorded pauses unless ``--fast``. Ids the bridge makes
up (session ids, its own request ids) are learned as the answers come and
substituted into what is sent.

Then what the bridge sent is compared with the recording, per session, after
normalisation (protocol/trace.py), and printed as a readable diff; the
simulator's divergences (requests the trace does not have, or never got) are
printed too. Exit code 0 only when there is no difference at all.
``--update`` rewrites the trace's ``bridge>client`` side with what was sent now.
docs/traces.md.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from collections.abc import Callable

import gevent
import gevent.event
import ujson

from zcode_acp.protocol import trace as fmt

GLOBAL = "(no session)"
SETTLE = 0.3  # seconds of quiet after the expected count, for frames the recording did not have


def zcode_sim() -> str:
    beside = Path(sys.executable).parent / "zcode-sim"
    return str(beside) if beside.exists() else (shutil.which("zcode-sim") or "zcode-sim")


class Replay:
    def __init__(self, trace: fmt.Trace, conn: str, fast: bool, timeout: float) -> None:
        self.trace = trace
        self.conn = conn
        self.fast = fast
        self.timeout = timeout
        # The recording, in file order: what the client sent (steps) and what the bridge sent.
        self.recorded_out: list[dict[str, Any]] = []
        self.steps: list[tuple[int, dict[str, Any]]] = []  # (bridge frames recorded before it, record)
        for record in trace.records:
            if record.get("conn") != conn:
                continue
            if record.get("dir") == fmt.CLIENT_OUT and "frame" in record:
                self.recorded_out.append(record)
            elif record.get("dir") == fmt.CLIENT_IN:
                self.steps.append((len(self.recorded_out), record))
        self.recorded_requests: dict[str, list[Any]] = {}  # method → ids of the bridge's requests, in order
        self.recorded_answers: dict[Any, list[dict[str, Any]]] = {}  # client id → recorded answers
        for record in self.recorded_out:
            frame = record["frame"]
            if "method" in frame and "id" in frame:
                self.recorded_requests.setdefault(frame["method"], []).append(frame["id"])
            elif "id" in frame:
                self.recorded_answers.setdefault(frame["id"], []).append(frame)
        self.actual: list[tuple[float, dict[str, Any]]] = []
        self.values: dict[str, str] = {}  # recorded generated id → the one made up now
        self.requests: dict[Any, Any] = {}  # recorded bridge request id → actual
        self.seen_requests: dict[str, int] = {}
        self.sent: list[tuple[float, float]] = []  # (recorded t, actual time) per client step sent
        self.changed = gevent.event.Event()
        self.notes: list[str] = []

    # -- learning from what the bridge sends -------------------------------------------------

    def receive(self, frame: dict[str, Any]) -> None:
        self.actual.append((time.monotonic(), frame))
        if "method" in frame and "id" in frame:
            count = self.seen_requests.get(frame["method"], 0)
            self.seen_requests[frame["method"]] = count + 1
            recorded = self.recorded_requests.get(frame["method"], [])
            if count < len(recorded):
                self.requests[recorded[count]] = frame["id"]
        elif "id" in frame and "method" not in frame:
            answers = self.recorded_answers.get(frame["id"])
            if answers:
                self._learn(answers.pop(0), frame)
        self.changed.set()

    def _learn(self, recorded: Any, actual: Any) -> None:
        if isinstance(recorded, str) and isinstance(actual, str):
            if recorded != actual and fmt.GENERATED.fullmatch(recorded) and fmt.GENERATED.fullmatch(actual):
                self.values.setdefault(recorded, actual)
        elif isinstance(recorded, dict) and isinstance(actual, dict):
            for key, value in recorded.items():
                if key in actual:
                    self._learn(value, actual[key])
        elif isinstance(recorded, list) and isinstance(actual, list):
            for r, a in zip(recorded, actual, strict=False):
                self._learn(r, a)

    def _wait(self, condition: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not condition():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self.changed.clear()
            if condition():
                return True
            self.changed.wait(remaining)
        return True

    # -- sending the client side --------------------------------------------------------------

    def translate(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.values.get(value, value)
        if isinstance(value, dict):
            return {k: self.translate(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.translate(v) for v in value]
        return value

    def _has_sent(self, count: int) -> bool:
        return len(self.actual) >= count

    def _has_asked(self, request_id: Any) -> bool:
        return request_id in self.requests

    def drive(self, write: Callable[[bytes], None], close: Callable[[], None]) -> None:
        previous_t: float | None = None
        previous_real = time.monotonic()
        closed = False
        for before, record in self.steps:
            if not self._wait(functools.partial(self._has_sent, before), self.timeout):
                self.notes.append(f"waited {self.timeout:g}s for the bridge's frame {before} (it sent "
                                  f"{len(self.actual)}) before client frame at t={record.get('t')}; went on")
            frame: Any = record.get("frame")
            answers_us = isinstance(frame, dict) and "method" not in frame and "id" in frame
            if answers_us and frame["id"] in self.recorded_request_ids():
                self._wait(functools.partial(self._has_asked, frame["id"]), self.timeout)
            t = float(record.get("t", 0.0))
            if not self.fast and previous_t is not None:
                delay = (t - previous_t) - (time.monotonic() - previous_real)
                if delay > 0:
                    gevent.sleep(delay)
            previous_t, previous_real = t, time.monotonic()
            self.sent.append((t, previous_real))
            if record.get("closed"):
                closed = True
                break
            if isinstance(frame, dict):
                frame = self.translate(frame)
                if answers_us and record["frame"]["id"] in self.requests:
                    frame["id"] = self.requests[record["frame"]["id"]]
                write(ujson.dumps(frame, ensure_ascii=False, escape_forward_slashes=False).encode() + b"\n")
            elif "raw" in record:
                write(record["raw"].encode("utf-8") + b"\n")
        if not closed:
            self._wait(lambda: len(self.actual) >= len(self.recorded_out), self.timeout)
        self._settle()
        close()

    def _settle(self) -> None:
        """A short quiet spell, so frames sent beyond the recording are seen too."""
        while True:
            count = len(self.actual)
            self.changed.clear()
            if not self.changed.wait(SETTLE) and len(self.actual) == count:
                return

    def recorded_request_ids(self) -> set[Any]:
        return {i for ids in self.recorded_requests.values() for i in ids}

    # -- comparing --------------------------------------------------------------------------------

    def _untranslate(self, frame: dict[str, Any]) -> dict[str, Any]:
        back = {v: k for k, v in self.values.items()}
        requests_back = {v: k for k, v in self.requests.items()}

        def walk(value: Any) -> Any:
            if isinstance(value, str):
                return back.get(value, value)
            if isinstance(value, dict):
                return {k: walk(v) for k, v in value.items()}
            if isinstance(value, list):
                return [walk(v) for v in value]
            return value

        out: dict[str, Any] = walk(frame)
        if "method" in out and "id" in out:
            out["id"] = requests_back.get(out["id"], out["id"])
        params = out.get("params")
        if out.get("method") == "$/cancel_request" and isinstance(params, dict):
            params["requestId"] = requests_back.get(params.get("requestId"), params.get("requestId"))
        return out

    def _groups(self, frames: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
        sessions: dict[Any, str] = {}
        for _, record in self.steps:
            frame = record.get("frame")
            if isinstance(frame, dict) and "id" in frame and "method" in frame:
                sessions[frame["id"]] = fmt.session_of(frame) or GLOBAL
        groups: dict[str, list[dict[str, Any]]] = {}
        for frame in frames:
            key = fmt.session_of(frame)
            if key is None and "method" not in frame:
                key = sessions.get(frame.get("id"), GLOBAL)
            groups.setdefault(key or GLOBAL, []).append(frame)
        return groups

    def compare(self) -> list[str]:
        recorded = self._groups([r["frame"] for r in self.recorded_out])
        actual = self._groups([self._untranslate(f) for _, f in self.actual])
        out: list[str] = []
        for index, key in enumerate(list(recorded) + [k for k in actual if k not in recorded]):
            left, right = fmt.Normaliser(), fmt.Normaliser()
            expected, expected_loose = fmt.split_unordered([left.frame(f) for f in recorded.get(key, [])])
            got, got_loose = fmt.split_unordered([right.frame(f) for f in actual.get(key, [])])
            title = "frames of no session" if key == GLOBAL else f"session {index}"
            out.extend(fmt.diff_frames(expected, got, title))
            out.extend(fmt.diff_frames(expected_loose, got_loose, f"{title}, in any order"))
        return out

    # -- --update ----------------------------------------------------------------------------------

    def updated(self, redactor: fmt.Redactor) -> fmt.Trace:
        """The trace with this run's ``bridge>client`` frames in place of the recorded ones.

        Ids made up in this run are written back as the recording's, so the
        recorded client and backend sides still fit them.
        """
        def when(real: float) -> float:
            index = max((i for i, (_, at) in enumerate(self.sent) if at <= real), default=None)
            if index is None:
                return self.sent[0][0] if self.sent else 0.0
            t = self.sent[index][0] + (real - self.sent[index][1])
            if index + 1 < len(self.sent):
                t = min(t, self.sent[index + 1][0] - 1e-6)
            return max(t, self.sent[index][0])

        kept = [r for r in self.trace.records if not (r.get("conn") == self.conn and r.get("dir") == fmt.CLIENT_OUT)]
        fresh = [{"t": round(when(real), 6), "dir": fmt.CLIENT_OUT, "conn": self.conn,
                  "frame": redactor.redact(self._untranslate(frame))} for real, frame in self.actual]
        # Stable: at equal times the client's frame stays before what answered it.
        merged = sorted(kept + fresh, key=lambda r: float(r.get("t", 0.0)))
        return fmt.Trace(header=self.trace.header, records=merged)


def run_replay(path: str, update: bool = False, fast: bool = False, timeout: float = 10.0,
               out: Callable[[str], None] = print) -> int:
    with open(path, "rb") as handle:
        trace = fmt.parse(handle.read())
    conns = trace.conns(fmt.CLIENT_IN)
    if not conns:
        out(f"{path}: the trace has no client frames")
        return 2
    if len(conns) > 1:
        out(f"{path}: {len(conns)} client connections; replaying {conns[0]} only")
    if trace.dropped():
        out(f"{path}: warning: the recording dropped frames (it could not keep up); expect differences")
    replay = Replay(trace, conns[0], fast, timeout)
    with tempfile.TemporaryDirectory(prefix="zcode-acp-replay-") as scratch:
        report = os.path.join(scratch, "backend-report.jsonl")
        log_path = os.path.join(scratch, "bridge.log")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ZCODE_ACP_", "ZCODE_SIM_")) and k != "ZCODE_DISALLOWED_TOOLS"}
        env.update({k: str(v) for k, v in (trace.header.get("env") or {}).items()})
        env.update(ZCODE_BIN=zcode_sim(), ZCODE_HOME=os.path.join(scratch, "home"),
                   ZCODE_SIM_REPLAY=os.path.abspath(path), ZCODE_SIM_REPLAY_REPORT=report,
                   ZCODE_SIM_REPLAY_TIMEOUT=str(timeout))
        if fast:
            env["ZCODE_SIM_REPLAY_FAST"] = "1"
        with open(log_path, "wb") as log_file:
            proc: Any = subprocess.Popen([sys.executable, "-m", "zcode_acp", "--log-level", "debug"],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log_file, env=env)
            reader = gevent.spawn(_read, proc, replay)

            def write(data: bytes) -> None:
                try:
                    proc.stdin.write(data)
                    proc.stdin.flush()
                except (BrokenPipeError, OSError):
                    replay.notes.append("the bridge stopped reading its input")

            def close() -> None:
                try:
                    proc.stdin.close()
                except OSError:
                    pass

            replay.drive(write, close)
            reader.join(timeout=timeout)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                replay.notes.append("the bridge did not exit after its input closed; killed it")
                proc.kill()
                proc.wait()
        differences = replay.compare()
        divergences = _divergences(report)
        for note in replay.notes:
            out(f"note: {note}")
        for item in divergences:
            out(f"backend: {item.get('divergence')}: {item.get('message')}")
        out("\n".join(differences) if differences else
            f"{path}: the bridge sent what was recorded ({len(replay.recorded_out)} frames)")
        if (differences or divergences) and not update:
            with open(log_path, "rb") as log_reader:
                tail = log_reader.read().decode("utf-8", "replace").splitlines()[-15:]
            out("bridge log (last lines):\n  " + "\n  ".join(tail))
    if update:
        fresh = replay.updated(fmt.Redactor())
        temporary = path + ".tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as written:
            written.write(fmt.serialise(fresh))
        os.replace(temporary, path)
        out(f"{path}: bridge>client side rewritten ({len(replay.actual)} frames)")
        return 1 if divergences else 0
    return 1 if differences or divergences else 0


def _read(proc: Any, replay: Replay) -> None:
    for line in proc.stdout:
        try:
            frame = ujson.loads(line)
        except ValueError:
            replay.notes.append(f"the bridge wrote a line that is not JSON: {line[:200]!r}")
            continue
        if isinstance(frame, dict):
            replay.receive(frame)
    replay.changed.set()


def _divergences(report: str) -> list[dict[str, Any]]:
    if not os.path.exists(report):
        return []
    items = []
    with open(report, "rb") as handle:
        for line in handle:
            try:
                item = ujson.loads(line)
            except ValueError:
                continue
            if isinstance(item, dict) and "divergence" in item:
                items.append(item)
    return items

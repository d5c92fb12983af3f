"""The replay's clients: play a trace's recorded client frames against the bridge, in order.

``Replay`` sends the recorded ``client>bridge`` frames across connections, each once the bridge
has sent every connection as many frames (of each kind) as it had before it in the recording,
learns the ids the bridge makes up, and compares what each connection got with the recording,
normalised (protocol/trace_compare.py). ``cli/replay.py`` runs the processes around it.
"""

from __future__ import annotations

import functools
import re
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any
from collections.abc import Callable

import gevent
import gevent.event
import ujson

from zcode_acp.protocol import trace as fmt
from zcode_acp.protocol import trace_compare as compare
from zcode_acp.protocol import trace_redaction as redaction

GLOBAL = "(no session)"
STDIO = "stdio"  # the editor's connection; every other one is a remote client (``ws-N``)
REMOTE_URL = re.compile(r"remote ACP clients: (ws://\S+)")
SETTLE = 0.3  # seconds of quiet after the expected count, for frames the recording did not have
OVERALL_SLACK = 4  # the whole run may take the recording's span plus this many step timeouts


def zcode_sim() -> str:
    beside = Path(sys.executable).parent / "zcode-sim"
    return str(beside) if beside.exists() else (shutil.which("zcode-sim") or "zcode-sim")


def kind_of(frame: Any) -> str:
    """What a frame the bridge sends a client is, for the replay's pacing: an answer, or a method
    (a ``session/update`` with its update's kind)."""
    if not isinstance(frame, dict):
        return "?"
    if "method" not in frame:
        return "answer"
    update = (frame.get("params") or {}).get("update") if isinstance(frame.get("params"), dict) else None
    kind = update.get("sessionUpdate") if isinstance(update, dict) else None
    return f"{frame['method']} {kind}" if isinstance(kind, str) else str(frame["method"])


def contains(mapping: dict[Any, Any], key: Any) -> bool:
    return key in mapping


class Connection:
    """One recorded client connection (``stdio``, ``ws-1`` …): the recording's side and this run's."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.recorded_out: list[dict[str, Any]] = []
        self.recorded_requests: dict[str, list[Any]] = {}  # method → ids of the bridge's requests, in order
        self.recorded_answers: dict[Any, list[dict[str, Any]]] = {}  # client id → recorded answers
        self.client_sessions: dict[Any, str] = {}  # the client's request id → the session it named
        self.actual: list[tuple[float, dict[str, Any]]] = []
        self.requests: dict[Any, Any] = {}  # recorded bridge request id → actual
        self.seen_requests: dict[str, int] = {}
        self.answered: set[Any] = set()  # ids of the client's requests the bridge answered this run
        self.kinds: Counter[str] = Counter()  # kind_of → how many the bridge sent this run
        self.write: Callable[[str], None] | None = None  # set once open: one frame (a JSON text)
        self.close: Callable[[], None] | None = None
        self.closed = False

    def recorded_request_ids(self) -> set[Any]:
        return {i for ids in self.recorded_requests.values() for i in ids}


Opener = Callable[[Connection], None]  # opens a connection: sets its write and close


class Replay:
    """Plays every recorded client connection against the bridge and compares what each got.

    Steps are sent in the recording's order across connections; each waits until
    the bridge has sent every connection as many frames as it had before that
    step in the recording (so a remote client loads a session only once the
    editor's answer that created it is there, and answers a dialog only once it
    was asked).
    """

    def __init__(self, trace: fmt.Trace, conns: list[str], fast: bool, timeout: float) -> None:
        self.trace = trace
        self.fast = fast
        self.timeout = timeout
        self.conns: dict[str, Connection] = {name: Connection(name) for name in conns}
        # Each step: (frames before it, per conn), its connection, the record, and the client requests
        # the bridge had answered before it (per conn). The count alone is not enough: a build that sends
        # one frame more than the recording (a new update) reaches the count a frame early, and a step
        # sent then — the editor closing its input — would overtake the answer it followed (a turn
        # cancelled by the teardown, recorded as ended).
        # A step also waits per kind of frame (``kind_of``): an extra frame of a kind the recording did not
        # have (today's config_option_update at start) must not stand in for a chunk the step followed.
        self.steps: list[tuple[dict[str, int], Connection, dict[str, Any], dict[str, frozenset[Any]],
                               dict[str, Counter[str]]]] = []
        answered: dict[str, set[Any]] = {name: set() for name in conns}
        kinds: dict[str, Counter[str]] = {name: Counter() for name in conns}
        for record in trace.records:
            conn = self.conns.get(record.get("conn"))  # type: ignore[arg-type]
            if conn is None:
                continue
            if record.get("dir") == fmt.CLIENT_OUT and "frame" in record:
                conn.recorded_out.append(record)
                frame = record["frame"]
                kinds[conn.name][kind_of(frame)] += 1
                if isinstance(frame, dict) and "id" in frame and "method" not in frame \
                        and contains(conn.client_sessions, frame["id"]):
                    answered[conn.name].add(frame["id"])
            elif record.get("dir") == fmt.CLIENT_IN:
                self.steps.append(({c.name: len(c.recorded_out) for c in self.conns.values()}, conn, record,
                                   {name: frozenset(ids) for name, ids in answered.items()},
                                   {name: Counter(counts) for name, counts in kinds.items()}))
                frame = record.get("frame")
                if isinstance(frame, dict) and "id" in frame and "method" in frame:
                    conn.client_sessions[frame["id"]] = compare.session_of(frame) or GLOBAL
        for conn in self.conns.values():
            for record in conn.recorded_out:
                frame = record["frame"]
                if "method" in frame and "id" in frame:
                    conn.recorded_requests.setdefault(frame["method"], []).append(frame["id"])
                elif "id" in frame:
                    conn.recorded_answers.setdefault(frame["id"], []).append(frame)
        self.content = redaction.is_content_redacted(trace.header)  # texts are placeholders: send stand-ins
        self.known: dict[str, str] = {}  # hash → chosen stand-in (real workspace folders)
        self.values: dict[str, str] = {}  # recorded generated id → the one made up now (shared: one bridge)
        self.sent: list[tuple[float, float]] = []  # (recorded t, actual time) per client step sent
        self.changed = gevent.event.Event()
        self.notes: list[str] = []
        # One deadline for the whole run (set by ``drive``): each wait is bounded by it as well as by
        # ``timeout``, so a bridge that stalls costs the run once, not ``timeout`` at every step, and
        # the notes of what it waited for are printed before any caller's own timeout kills it.
        self.deadline = float("inf")

    @property
    def recorded_count(self) -> int:
        return sum(len(c.recorded_out) for c in self.conns.values())

    @property
    def actual_count(self) -> int:
        return sum(len(c.actual) for c in self.conns.values())

    # -- learning from what the bridge sends -------------------------------------------------

    def receive_text(self, name: str, text: str | bytes) -> None:
        """One line or message the bridge sent connection ``name``: a frame, or a note that it was not JSON."""
        try:
            frame = ujson.loads(text)
        except ValueError:
            self.notes.append(f"the bridge sent {name} something that is not JSON: {text[:200]!r}")
            return
        if isinstance(frame, dict):
            self.receive(name, frame)

    def receive(self, name: str, frame: dict[str, Any]) -> None:
        conn = self.conns.get(name)
        if conn is None:
            conn = self.conns[name] = Connection(name)  # a connection the recording did not have
        conn.actual.append((time.monotonic(), frame))
        conn.kinds[kind_of(frame)] += 1
        if "method" in frame and "id" in frame:
            count = conn.seen_requests.get(frame["method"], 0)
            conn.seen_requests[frame["method"]] = count + 1
            recorded = conn.recorded_requests.get(frame["method"], [])
            if count < len(recorded):
                conn.requests[recorded[count]] = frame["id"]
        elif "id" in frame and "method" not in frame:
            if isinstance(frame["id"], (str, int)):
                conn.answered.add(frame["id"])
            answers = conn.recorded_answers.get(frame["id"])
            if answers:
                self._learn(answers.pop(0), frame)
        self.changed.set()

    def _learn(self, recorded: Any, actual: Any) -> None:
        if isinstance(recorded, str) and isinstance(actual, str):
            if recorded != actual and compare.GENERATED.fullmatch(recorded) and compare.GENERATED.fullmatch(actual):
                self.values.setdefault(recorded, actual)
        elif isinstance(recorded, dict) and isinstance(actual, dict):
            for key, value in recorded.items():
                if key in actual:
                    self._learn(value, actual[key])
        elif isinstance(recorded, list) and isinstance(actual, list):
            for r, a in zip(recorded, actual, strict=False):
                self._learn(r, a)

    def _wait(self, condition: Callable[[], bool], timeout: float) -> bool:
        deadline = min(time.monotonic() + timeout, self.deadline)
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

    def _has_sent(self, answered: dict[str, frozenset[Any]], kinds: dict[str, Counter[str]]) -> bool:
        return all(ids <= self.conns[name].answered for name, ids in answered.items()) and all(
            self.conns[name].kinds[kind] >= count for name, counts in kinds.items() for kind, count in counts.items())

    def _short_of(self, before: dict[str, int]) -> str:
        return ", ".join(f"{name} {len(self.conns[name].actual)} of {count}" for name, count in before.items()
                         if len(self.conns[name].actual) < count)

    def drive(self, open_conn: Opener) -> None:
        previous_t: float | None = None
        previous_real = time.monotonic()
        editor_left = False
        times = [float(step[2].get("t", 0.0)) for step in self.steps]
        span = 0.0 if self.fast or not times else max(times) - min(times)
        self.deadline = time.monotonic() + span + OVERALL_SLACK * self.timeout
        for before, conn, record, answered, kinds in self.steps:
            if conn.closed:
                continue
            if time.monotonic() >= self.deadline:
                self.notes.append(f"the run's deadline ({span + OVERALL_SLACK * self.timeout:g}s) passed before "
                                  f"{conn.name}'s client frame at t={record.get('t')}; the rest was not sent")
                break
            if not self._wait(functools.partial(self._has_sent, answered, kinds), self.timeout):
                self.notes.append(f"waited {self.timeout:g}s for the bridge's frames before {conn.name}'s client "
                                  f"frame at t={record.get('t')} (short: {self._short_of(before)}); went on")
            frame: Any = record.get("frame")
            answers_us = isinstance(frame, dict) and "method" not in frame and "id" in frame
            if answers_us and frame["id"] in conn.recorded_request_ids():
                self._wait(functools.partial(contains, conn.requests, frame["id"]), self.timeout)
            t = float(record.get("t", 0.0))
            if not self.fast and previous_t is not None:
                delay = (t - previous_t) - (time.monotonic() - previous_real)
                if delay > 0:
                    gevent.sleep(delay)
            previous_t, previous_real = t, time.monotonic()
            self.sent.append((t, previous_real))
            if conn.write is None:
                try:
                    open_conn(conn)
                except (OSError, ValueError, RuntimeError) as exc:
                    self.notes.append(f"could not open client connection {conn.name}: {exc}")
                    conn.closed = True
                    continue
            if record.get("closed"):
                self._close(conn)
                if conn.name == STDIO:
                    editor_left = True  # the bridge tears down: nothing after this can be sent
                    break
                continue
            if isinstance(frame, dict):
                frame = self.translate(redaction.fill_content(frame, None, self.known) if self.content else frame)
                if answers_us and record["frame"]["id"] in conn.requests:
                    frame["id"] = conn.requests[record["frame"]["id"]]
                assert conn.write is not None
                conn.write(ujson.dumps(frame, ensure_ascii=False, escape_forward_slashes=False))
            elif "raw" in record:
                assert conn.write is not None
                conn.write(redaction.fill_content(record["raw"]) if self.content else record["raw"])
        if not editor_left:
            self._wait(lambda: self.actual_count >= self.recorded_count, self.timeout)
        self._settle()
        for conn in sorted(self.conns.values(), key=lambda c: c.name == STDIO):  # the editor last
            self._close(conn)

    def _close(self, conn: Connection) -> None:
        if conn.close is not None and not conn.closed:
            conn.close()
        conn.closed = True

    def _settle(self) -> None:
        """A short quiet spell, so frames sent beyond the recording are seen too."""
        while True:
            count = self.actual_count
            self.changed.clear()
            if (not self.changed.wait(SETTLE) and self.actual_count == count) or time.monotonic() > self.deadline:
                return

    # -- comparing --------------------------------------------------------------------------------

    def _untranslate(self, conn: Connection, frame: dict[str, Any]) -> dict[str, Any]:
        back = {v: k for k, v in self.values.items()}
        requests_back = {v: k for k, v in conn.requests.items()}

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

    @staticmethod
    def _groups(conn: Connection, frames: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
        groups: dict[str, list[dict[str, Any]]] = {}
        for frame in frames:
            key = compare.session_of(frame)
            if key is None and "method" not in frame:
                key = conn.client_sessions.get(frame.get("id"), GLOBAL)
            groups.setdefault(key or GLOBAL, []).append(frame)
        return groups

    def compare(self) -> list[str]:
        out: list[str] = []
        only_stdio = list(self.conns) == [STDIO]
        for conn in self.conns.values():
            recorded = self._groups(conn, [r["frame"] for r in conn.recorded_out])
            actual = self._groups(conn, [self._untranslate(conn, f) for _, f in conn.actual])
            for index, key in enumerate(list(recorded) + [k for k in actual if k not in recorded]):
                left, right = compare.Normaliser(self.content, self.known), compare.Normaliser(self.content, self.known)
                expected, expected_loose = compare.split_unordered([left.frame(f) for f in recorded.get(key, [])])
                got, got_loose = compare.split_unordered([right.frame(f) for f in actual.get(key, [])])
                title = "frames of no session" if key == GLOBAL else f"session {index}"
                if not only_stdio:
                    title = f"{conn.name}: {title}"
                out.extend(compare.diff_frames(expected, got, title))
                out.extend(compare.diff_frames(expected_loose, got_loose, f"{title}, in any order"))
        return out

    # -- --update ----------------------------------------------------------------------------------

    def updated(self, redactor: redaction.Redactor) -> fmt.Trace:
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

        kept = [r for r in self.trace.records if not (r.get("conn") in self.conns and r.get("dir") == fmt.CLIENT_OUT)]
        fresh = [{"t": round(when(real), 6), "dir": fmt.CLIENT_OUT, "conn": conn.name,
                  "frame": redactor.redact(self._untranslate(conn, frame))}
                 for conn in self.conns.values() for real, frame in conn.actual]
        # Stable: at equal times the client's frame stays before what answered it.
        merged = sorted(kept + fresh, key=lambda r: float(r.get("t", 0.0)))
        return fmt.Trace(header=self.trace.header, records=merged)

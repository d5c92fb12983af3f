"""``zcode-sim --replay FILE``: play the backend side of a recorded trace.

The recorded frames of one backend process (``backend-N``: the N-th this
bridge started; the count is kept in the report file) become a script, split
into lanes — one per backend session, one for frames of no session — so
sessions that ran side by side do not wait on each other. In each lane, in
recorded order:

* a frame the bridge sent (``bridge>backend``) is *expected*: the lane waits
  for the bridge to send a frame like it — same method and session, matched in
  order, never by raw id — and then goes on (the recorded answer is sent with
  the bridge's actual id);
* a frame the backend sent (``backend>bridge``) is *sent*, after the recorded
  pause since the lane's last step (none with ``--fast``);
* the backend's end (``closed``) ends the process once every lane is done.

The script is the recorded frames, so either engine dialect replays alike
(today's string server-request ids, ``v4/command``). A content-redacted trace
gets stand-ins of the recorded lengths in place of its texts, the ones the
replaying client chose for workspace folders among them, and the bridge's
texts are matched by length (protocol/trace.py ``fill_content``).

Every divergence — a request the trace does not have (it is answered with an
error), a request it expected and never got, different parameters, a different
answer to the backend's own requests — is printed on stderr and appended to
the report file (``ZCODE_SIM_REPLAY_REPORT``) as a JSON line; the exit code is
1 when there was any. docs/traces.md.
"""

from __future__ import annotations

import fcntl
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import gevent
import gevent.event
import ujson
from gevent import os as gos

from zcode_acp.protocol import trace as fmt

from zcode_acp.protocol import trace_compare as compare

from zcode_acp.protocol import trace_redaction as redaction

from . import frames_log
from .wire import Wire, dumps

GLOBAL = "(no session)"
NOT_IN_TRACE = {"code": -32603, "message": "zcode-sim replay: the trace has no such request"}


@dataclass
class Step:
    index: int
    kind: str  # "expect" or "send"
    t: float
    frame: dict[str, Any]
    lane: str
    done: gevent.event.Event = field(default_factory=gevent.event.Event)
    actual_id: Any = None
    reported: bool = False

    @property
    def method(self) -> str | None:
        method = self.frame.get("method")
        return method if isinstance(method, str) else None

    def is_response(self) -> bool:
        return "id" in self.frame and ("result" in self.frame or "error" in self.frame) and self.method is None


def build_script(trace: fmt.Trace, conn: str) -> tuple[list[Step], bool, int]:
    """The steps of one backend process, with their lanes; whether it ended by itself, and its exit code."""
    steps: list[Step] = []
    bridge_requests: dict[Any, str] = {}  # recorded id → lane, for the backend's answers
    backend_requests: dict[Any, str] = {}  # recorded id → lane, for the bridge's answers
    closed = False
    code = 1
    client_gone = False
    for record in trace.records:
        if record.get("closed") and record.get("dir") == fmt.CLIENT_IN:
            client_gone = True
        if record.get("conn") != conn:
            continue
        if record.get("closed") and record.get("dir") == fmt.BACKEND_IN:
            # After the editor left, the end was the bridge's teardown, not the backend's doing.
            closed = not client_gone
            continue
        if "exit" in record and record.get("dir") == fmt.BACKEND_IN:
            code = record["exit"] if isinstance(record["exit"], int) else 1
            continue
        frame = record.get("frame")
        if not isinstance(frame, dict):
            continue
        direction = record.get("dir")
        has_method = isinstance(frame.get("method"), str)
        if direction == fmt.BACKEND_OUT:
            if has_method:
                lane = compare.session_of(frame) or GLOBAL
                if "id" in frame:
                    bridge_requests[frame["id"]] = lane
            else:
                lane = backend_requests.get(frame.get("id"), GLOBAL)
            steps.append(Step(len(steps), "expect", float(record.get("t", 0.0)), frame, lane))
        elif direction == fmt.BACKEND_IN:
            if has_method and not ("result" in frame or "error" in frame):
                lane = compare.session_of(frame) or GLOBAL
                if "id" in frame:
                    backend_requests[frame["id"]] = lane
            else:
                lane = bridge_requests.get(frame.get("id"), compare.session_of(frame) or GLOBAL)
            steps.append(Step(len(steps), "send", float(record.get("t", 0.0)), frame, lane))
    return steps, closed, code


def _same(expected: Any, actual: Any, content: bool = False, known: dict[str, str] | None = None) -> list[str]:
    return compare.field_differences(compare.Normaliser(content, known).value(expected),
                                 compare.Normaliser(content, known).value(actual))


class Replayer:
    def __init__(self, steps: list[Step], closed: bool, wire: Wire, fast: bool, timeout: float,
                 report: str | None, generation: int, exit_code: int = 1, content: bool = False,
                 known: dict[str, str] | None = None) -> None:
        self.steps = steps
        # A content-redacted trace: recorded texts are ``<N chars, hash H>``; stand-ins are sent in
        # their place and the bridge's texts are compared by length and equality (protocol/trace.py).
        self.content = content
        self.known = known or {}  # stand-ins the replaying client chose (workspace folders): same on both sides
        self.closed = closed
        self.exit_code = exit_code
        self.wire = wire
        self.fast = fast
        self.timeout = timeout
        self.report = report
        self.generation = generation
        self.divergences = 0
        self.by_recorded_id: dict[Any, Step] = {}  # recorded bridge request id → its expect step
        self.lanes: dict[str, list[Step]] = {}
        for step in steps:
            self.lanes.setdefault(step.lane, []).append(step)
            if step.kind == "expect" and step.method is not None and "id" in step.frame:
                self.by_recorded_id[step.frame["id"]] = step
        self.finished = gevent.event.Event()

    # -- divergences -------------------------------------------------------------------------

    def diverge(self, kind: str, message: str, **detail: Any) -> None:
        self.divergences += 1
        print(f"zcode-sim replay: divergence ({kind}): {message}", file=sys.stderr, flush=True)
        self._report({"divergence": kind, "message": message, "backend": self.generation, **detail})

    def _report(self, item: dict[str, Any]) -> None:
        if not self.report:
            return
        with open(self.report, "ab") as handle:
            handle.write(dumps(item))

    # -- what the bridge sends ---------------------------------------------------------------

    def receive(self, frame: dict[str, Any]) -> None:
        if frames_log.PATH:  # the engine-schema check (sim/frames_log.py)
            frames_log.record(frames_log.HOST_TO_ENGINE, frame)
        method = frame.get("method")
        if isinstance(method, str):
            self._request(frame, method)
        elif "id" in frame:
            self._answer(frame)

    def _candidates(self, lane: str, test: Any) -> list[Step]:
        return [s for s in self.lanes.get(lane, ()) if s.kind == "expect" and not s.done.is_set() and test(s)]

    def _request(self, frame: dict[str, Any], method: str) -> None:
        lane = compare.session_of(frame) or GLOBAL
        candidates = self._candidates(lane, lambda s: s.method == method)
        step = next((s for s in candidates if not _same(s.frame.get("params"), frame.get("params"), self.content, self.known)),
                    None)
        if step is None and candidates:
            step = candidates[0]
            differences = _same(step.frame.get("params"), frame.get("params"), self.content, self.known)
            self.diverge("params", f"{method} ({lane}) was sent with other parameters: " + "; ".join(differences),
                         method=method, differences=differences)
        if step is None:
            self.diverge("unexpected", f"{method} ({lane}) is not in the trace: {compare.canonical(frame)[:300]}",
                         method=method)
            if "id" in frame:
                self.wire.send({"id": frame["id"], "error": NOT_IN_TRACE})
            return
        step.actual_id = frame.get("id")
        step.done.set()

    def _answer(self, frame: dict[str, Any]) -> None:
        step = next((s for s in self.steps if s.kind == "expect" and s.is_response() and not s.done.is_set()
                     and s.frame.get("id") == frame.get("id")), None)
        if step is None:
            self.diverge("unexpected", f"an answer to {frame.get('id')!r} that the trace does not have")
            return
        recorded = {k: step.frame.get(k) for k in ("result", "error") if k in step.frame}
        actual = {k: frame.get(k) for k in ("result", "error") if k in frame}
        differences = _same(recorded, actual, self.content, self.known)
        if differences:
            self.diverge("answer", f"the answer to backend request {frame.get('id')!r} differs: "
                         + "; ".join(differences), differences=differences)
        step.done.set()

    # -- playing the lanes ---------------------------------------------------------------------

    def play(self) -> None:
        players = [gevent.spawn(self._lane, steps) for steps in self.lanes.values()]
        gevent.joinall(players)
        self.wire.flush()
        if self.closed:
            self.finish(self.exit_code)  # the recorded backend exited here, with this code
        self.finished.set()

    def _lane(self, steps: list[Step]) -> None:
        anchor_t = steps[0].t if steps else 0.0
        anchor_real = time.monotonic()
        sent = 0
        for step in steps:
            if step.kind == "expect":
                if not step.done.is_set():
                    self.wire.flush()
                    if not step.done.wait(self.timeout):
                        self._missing(step)
                        continue
                anchor_t, anchor_real = step.t, time.monotonic()
                continue
            if not self.fast:
                delay = (step.t - anchor_t) - (time.monotonic() - anchor_real)
                if delay > 0.002:
                    self.wire.flush()
                    gevent.sleep(delay)
            self._send(step)
            sent += 1
            if sent % 256 == 0:
                self.wire.flush()
                gevent.sleep(0)  # let the other lanes and the reader run
        self.wire.flush()

    def _send(self, step: Step) -> None:
        frame = redaction.fill_content(step.frame, None, self.known) if self.content else step.frame
        if step.is_response():
            request = self.by_recorded_id.get(frame.get("id"))
            if request is not None:
                if not request.done.is_set():
                    return  # its request never came (already reported): nothing to answer
                frame = dict(frame, id=request.actual_id)
        self.wire.send(frame, flush=False)

    def _missing(self, step: Step) -> None:
        if step.reported or step.done.is_set():
            return
        step.reported = True
        what = step.method or f"an answer to backend request {step.frame.get('id')!r}"
        self.diverge("missing", f"expected {what} ({step.lane}) and never got it", method=step.method)

    def finish(self, code: int | None = None) -> None:
        """The end (EOF, SIGTERM, or the recorded exit): report what never came, exit.

        The exit code is the recorded one when the recorded backend ended by
        itself (the bridge reports it); otherwise 1 if anything diverged.
        """
        for step in self.steps:
            if step.kind == "expect":
                self._missing(step)
        self._report({"end": self.generation, "divergences": self.divergences})
        try:
            self.wire.flush()
        except OSError:
            pass
        sys.stderr.flush()
        os._exit(code if code is not None else (1 if self.divergences else 0))

    # -- stdin ---------------------------------------------------------------------------------

    def read(self) -> None:
        pending = b""
        while True:
            try:
                chunk = gos.nb_read(0, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                return
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            for line in lines:
                if not line.strip():
                    continue
                try:
                    frame = ujson.loads(line)
                except ValueError:
                    self.diverge("unexpected", f"a line that is not JSON: {line[:200]!r}")
                    continue
                if isinstance(frame, dict):
                    self.receive(frame)


def next_generation(report: str | None) -> int:
    """Which backend process of the trace this is: 1 unless the report file counts earlier ones."""
    if not report:
        return 1
    fd = os.open(report, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with open(report, "rb") as handle:
            started = sum(1 for line in handle if line.startswith(b'{"start"'))
        os.write(fd, dumps({"start": started + 1}))
        return started + 1
    finally:
        os.close(fd)


def _known() -> dict[str, str]:
    """Stand-ins the replaying client chose (``ZCODE_SIM_REPLAY_STANDINS``: a JSON file, hash → text)."""
    path = os.environ.get("ZCODE_SIM_REPLAY_STANDINS")
    if not path:
        return {}
    with open(path, "rb") as handle:
        known = ujson.loads(handle.read())
    return {str(k): str(v) for k, v in known.items()} if isinstance(known, dict) else {}


def serve_replay(path: str, fast: bool = False, timeout: float | None = None, report: str | None = None) -> int:
    report = report or os.environ.get("ZCODE_SIM_REPLAY_REPORT") or None
    timeout = timeout if timeout is not None else float(os.environ.get("ZCODE_SIM_REPLAY_TIMEOUT", "10"))
    with open(path, "rb") as handle:
        trace = fmt.parse(handle.read())
    generation = next_generation(report)
    wire = Wire(1)
    gos.make_nonblocking(0)
    gos.make_nonblocking(1)
    conns = [c for c in trace.conns(fmt.BACKEND_OUT) + trace.conns(fmt.BACKEND_IN) if c.startswith("backend-")]
    conn = f"backend-{generation}"
    steps, closed, code = build_script(trace, conn)
    replayer = Replayer(steps, closed, wire, fast, timeout, report, generation, code,
                        content=redaction.is_content_redacted(trace.header), known=_known())
    if conn not in conns:
        replayer.diverge("unexpected", f"the bridge started backend process {generation}; the trace has "
                         f"{len(set(conns))}")
        replayer.finish()
    for sig in (signal.SIGTERM, signal.SIGINT):
        gevent.signal_handler(sig, replayer.finish, None)
    reader = gevent.spawn(replayer.read)
    gevent.spawn(replayer.play)
    reader.join()  # the bridge closed our stdin: it is done with this backend
    replayer.finish()
    return 0

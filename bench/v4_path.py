"""The v4 path beside the legacy one, in process: what the bridge spends per update and per load.

These figures time the bridge's own decoding (no pipes, no actors, no simulator in the
timed part), so the two paths are compared on the same footing:

* streaming: N text deltas of one turn. Legacy: the ``session/event`` params through the
  Sequencer-free ``TurnTranslator.feed``. v4: the simulator's ``v4/conversation/frame``
  notifications for the same turn (made beforehand by ``sim/v4``'s ``DataPlane``, one
  frame per event, as the engine commits them) through ``V4Feed`` — wire parsing,
  reassembly, the sequence rules, the applier and the translator;
* first update: the same, for the first delta of a turn (median of several);
* ``session/load`` of a 10,000-row conversation: a v4 snapshot replayed (the feed's
  state through a replaying translator) against today's history replay
  (``replay_updates`` over 10,000 ``session/messages`` entries), both from decoded JSON;
* memory of an idle session's v4 parts (its feed holding a 20-row conversation) and of
  the legacy parts the same session would hold, by ``tracemalloc``.
"""

from __future__ import annotations

import gc
import json
import statistics
import time
import tracemalloc
from types import SimpleNamespace
from typing import Any

from zcode_acp.actors.session.sequencer import Sequencer
from zcode_acp.actors.session.v4.feed import V4Feed
from zcode_acp.actors.session.v4.path import V4Path
from zcode_acp.protocol.history import replay_updates
from zcode_acp.protocol.translator import TurnTranslator
from zcode_acp.sim.v4.coalesce import FLUSH_WINDOW_MS
from zcode_acp.sim.v4.faults import Faults
from zcode_acp.sim.v4.plane import DataPlane
from zcode_acp.sim.v4.port import SessionSeed
from zcode_acp.sim.v4.snapshot import session_config


class _Port:
    """The least an engine behind the plane must do for a turn of text."""

    def create_session(self, workspace_id: str) -> SessionSeed:
        return SessionSeed("sess_bench", session_config("zhipu", "glm-5", "high", ["low", "high", "max"]), 200_000)

    def start_turn(self, session_id: str, text: str, attachments: list[dict[str, Any]]) -> None:
        pass

    def __getattr__(self, name: str) -> Any:  # the rest of the Port is not used here
        return lambda *args, **kwargs: None


def streaming(count: int, runs: int) -> tuple[float, float]:
    """(legacy updates/s, v4 updates/s) for one turn of ``count`` text deltas, medians of ``runs``."""
    legacy_rates, v4_rates = [], []
    for _ in range(runs):
        feed, frames, legacy = _prepared(count)
        started = time.perf_counter()
        sent = legacy_loop(legacy)
        legacy_rates.append(sent / (time.perf_counter() - started))
        started = time.perf_counter()
        sent = v4_loop(feed, frames)
        v4_rates.append(sent / (time.perf_counter() - started))
    return statistics.median(legacy_rates), statistics.median(v4_rates)


def streaming_coalesced(count: int, runs: int, delta_ms: float) -> tuple[float, float, int]:
    """(legacy deltas/s, v4 deltas/s, v4 frames) for one turn of ``count`` deltas ``delta_ms`` apart,
    the engine's flush window merging v4's appends (``_prepared``); legacy has no such merge
    (one ``session/event`` an event). Per delta, not per update: v4 makes one update a frame."""
    legacy_rates, v4_rates = [], []
    frames: list[dict[str, Any]] = []
    for _ in range(runs):
        feed, frames, legacy = _prepared(count, delta_ms=delta_ms)
        started = time.perf_counter()
        legacy_loop(legacy)
        legacy_rates.append(count / (time.perf_counter() - started))
        started = time.perf_counter()
        v4_loop(feed, frames)
        v4_rates.append(count / (time.perf_counter() - started))
    return statistics.median(legacy_rates), statistics.median(v4_rates), len(frames)


def legacy_loop(events: list[dict[str, Any]]) -> int:
    """The legacy turn's events through the Sequencer and ``TurnTranslator``, 256 a batch: the updates made."""
    translator = TurnTranslator(message_id="bench")
    sequencer = Sequencer()
    sequencer.start(0)
    sent = 0
    for start in range(0, len(events), 256):
        for event in sequencer.accept(events[start:start + 256]).events:
            sent += len(translator.feed(event))
    return sent


def v4_loop(feed: V4Feed, frames: list[dict[str, Any]]) -> int:
    """The v4 turn's frames through ``V4Feed``, 256 a batch: the updates made."""
    sent = 0
    for start in range(0, len(frames), 256):
        sent += len(feed.frames(frames[start:start + 256], 0.0).updates)
    return sent


def first_update(runs: int) -> tuple[float, float]:
    """(legacy µs, v4 µs) from a turn's first delta arriving to its update being made (medians)."""
    legacy_us, v4_us = [], []
    for _ in range(runs):
        feed, frames, legacy = _prepared(1)
        translator = TurnTranslator(message_id="bench")
        sequencer = Sequencer()
        sequencer.start(0)
        for event in sequencer.accept(legacy[:1]).events:  # turn.started
            translator.feed(event)
        started = time.perf_counter()
        made = [u for event in sequencer.accept(legacy[1:2]).events for u in translator.feed(event)]
        legacy_us.append((time.perf_counter() - started) * 1e6)
        assert made, "no legacy update"
        feed.frames(frames[:1], 0.0)
        started = time.perf_counter()
        step = feed.frames(frames[1:2], 0.0)
        v4_us.append((time.perf_counter() - started) * 1e6)
        assert step.updates, "no v4 update"
    return statistics.median(legacy_us), statistics.median(v4_us)


def _prepared(deltas: int, prompts: int = 1, delta_ms: float | None = None,
              ) -> tuple[V4Feed, list[dict[str, Any]], list[dict[str, Any]]]:
    """A feed subscribed and holding the initial snapshot; the frames and legacy events of the turns after it.

    ``delta_ms``: the plane plays the engine's flush window (sim/v4/coalesce.py, from the
    engine's coalesce.ts and core.ts's 30 ms ``continuous`` profile) on a clock that moves
    ``delta_ms`` an event, so adjacent appends within a window reach the feed as one frame.
    None: one frame per event, as the default simulator sends them.
    """
    written: list[dict[str, Any]] = []
    clock = [0.0]
    plane = DataPlane(_Port(), written.append, faults=Faults(""), fragment_bytes=1 << 30,
                      clock=lambda: clock[0], coalesce_ms=None if delta_ms is None else FLUSH_WINDOW_MS)
    if delta_ms is None:
        plane.topics.coalesce_ms = 0.0  # whatever ZCODE_SIM_COALESCE says: the bench picks
    answers: list[Any] = []
    plane.dispatch("v4/command", {"commandId": "c-0", "clientId": "bench", "sessionId": None, "type": "createSession",
                                  "payload": {"workspaceId": "/bench"}, "issuedAt": 0},
                   lambda result, error: answers.append(result))
    session_id = answers[-1]["result"]["sessionId"]
    feed = V4Feed(session_id, "bench")
    plane.dispatch("v4/conversation/subscribe", feed.subscribe_params(), lambda result, error: answers.append(result))
    feed.subscribed(json.loads(json.dumps(answers[-1])), 0.0)
    plane.topics.flush(clock[0], everything=True)
    feed.frames([json.loads(json.dumps(frame["params"])) for frame in written], 0.0)
    assert feed.subscription.ready
    written.clear()
    legacy: list[dict[str, Any]] = []
    seq = 0

    def event(kind: str, payload: dict[str, Any], turn_id: str) -> None:
        nonlocal seq
        seq += 1
        legacy.append({"sessionId": session_id, "seq": seq, "type": kind, "payload": payload, "turnId": turn_id})
        plane.feed(session_id, {"sessionId": session_id, "type": kind, "payload": payload, "turnId": turn_id})
        if delta_ms is not None:
            clock[0] += delta_ms
            plane.tick(clock[0])

    for turn in range(prompts):
        turn_id = f"turn_{turn}"
        event("turn.started", {"inputSource": "user", "inputVisibility": "user", "input": f"prompt {turn}",
                               "foregroundExecutionId": f"exec_{turn}"}, turn_id)
        for index in range(deltas):
            event("model.streaming", {"kind": "text_delta", "delta": f"w{index} "}, turn_id)
        event("turn.completed", {"resultType": "success", "usage": {"inputTokens": 1, "outputTokens": 1}}, turn_id)
    plane.topics.flush(clock[0], everything=True)
    return feed, [json.loads(json.dumps(frame["params"])) for frame in written], legacy


def load(rows: int, runs: int) -> tuple[float, float, int, int]:
    """(history replay ms, snapshot replay ms, updates each) for a ``rows``-row conversation."""
    history = []
    for index in range(rows):
        role = "user" if index % 2 == 0 else "assistant"
        history.append({"info": {"id": f"msg_h{index}", "role": role},
                        "parts": [{"type": "text", "text": f"{role} message {index}"}]})
    history = json.loads(json.dumps(history))
    # The same conversation as rows: a prompt and an answer per turn (each turn also has its header row).
    feed, _, _ = _prepared(0)
    state = feed.state
    window = []
    for index in range(rows // 2):
        turn_id = f"turn_{index}"
        window.append({"rowId": 3 * index + 1, "entityId": f"h{index}", "turnId": turn_id, "kind": "turnHeader",
                       "createdAt": 0, "createdAtSeq": 0})
        window.append({"rowId": 3 * index + 2, "entityId": f"u{index}", "turnId": turn_id, "kind": "userInput",
                       "text": f"user message {2 * index}", "createdAt": 0, "createdAtSeq": 0})
        window.append({"rowId": 3 * index + 3, "entityId": f"a{index}", "turnId": turn_id, "kind": "assistantText",
                       "text": f"assistant message {2 * index + 1}", "status": "done", "createdAt": 0,
                       "createdAtSeq": 0})
    state.rows = json.loads(json.dumps(window))
    path = V4Path.__new__(V4Path)  # only its replay is timed: the feed and the session's language
    path.feed = feed
    # the session's language, and no client capabilities (no child sessions: the replay the bench timed before)
    path.session = SimpleNamespace(config=SimpleNamespace(lang="en"), terminal_output=lambda: False,  # type: ignore[assignment]
                                   capabilities={}, session_id="sess_bench")
    legacy_ms, v4_ms = [], []
    legacy_count = v4_count = 0
    for _ in range(runs):
        started = time.perf_counter()
        legacy_count = len(replay_updates(history))
        legacy_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        v4_count = len(path.replay())
        v4_ms.append((time.perf_counter() - started) * 1000)
    return statistics.median(legacy_ms), statistics.median(v4_ms), legacy_count, v4_count


def _traced() -> tracemalloc.Snapshot:
    """What is allocated, but by tracemalloc itself (the snapshots taken so far)."""
    gc.collect()
    return tracemalloc.take_snapshot().filter_traces((tracemalloc.Filter(False, tracemalloc.__file__),))


def _held(made: tracemalloc.Snapshot, parts: list[Any]) -> float:
    """KiB freed when ``parts`` (their only reference) go: what they held when ``made`` was taken.

    Measured by their going rather than by what appeared since an earlier snapshot, so that
    nothing else made meanwhile counts: the bench's own inputs (the frames, the legacy events),
    or what the simulator leaves in the interpreter (the names its handlers were looked up by).
    """
    parts.clear()
    gone = _traced()
    return sum(stat.size_diff for stat in made.compare_to(gone, "filename")) / 1024


def idle_memory() -> tuple[float, float]:
    """(legacy KiB, v4 KiB) an idle session's per-session parts hold after a 10-turn conversation.

    The legacy parts hold no conversation (a load reads the history); the v4 feed holds the
    topic's state (the window of rows and the session keys, packed while no turn runs) and
    what its translator sent.
    """
    tracemalloc.start()
    _traced()  # once first: the filter's pattern is compiled (and cached) here, not counted
    parts: list[Any] = [Sequencer(), TurnTranslator(message_id="ix")]
    legacy = _held(_traced(), parts)
    feed, frames, legacy_events = _prepared(10, prompts=10)
    feed.frames(frames, 0.0)
    feed.rest()  # what the Session does once it has acted on the frames (actors/session/v4/subscription.py)
    parts = [feed]
    del feed, frames, legacy_events
    v4 = _held(_traced(), parts)
    tracemalloc.stop()
    return legacy, v4

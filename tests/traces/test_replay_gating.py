"""The replay sends a client step only once the bridge answered what the recording had answered
before it (not only once as many frames arrived): a build that sends one frame more than the
recording must not see the editor close its input before the prompt's answer (issue 19: replays
that answered ``cancelled``)."""

from __future__ import annotations

import gevent
import ujson

from zcode_acp.cli.replay_driver import OVERALL_SLACK, STDIO, Connection, Replay
from zcode_acp.protocol import trace as fmt

PROMPT = {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": "s", "prompt": []}}
UPDATE = {"jsonrpc": "2.0", "method": "session/update",
          "params": {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk"}}}
ANSWER = {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}


def test_the_editor_closes_its_input_only_after_the_answer_it_followed_in_the_recording() -> None:
    trace = fmt.Trace(header={"version": 1}, records=[
        {"t": 0.0, "dir": fmt.CLIENT_IN, "conn": STDIO, "frame": PROMPT},
        {"t": 0.1, "dir": fmt.CLIENT_OUT, "conn": STDIO, "frame": UPDATE},
        {"t": 0.2, "dir": fmt.CLIENT_OUT, "conn": STDIO, "frame": ANSWER},
        {"t": 0.3, "dir": fmt.CLIENT_IN, "conn": STDIO, "closed": True},
    ])
    replay = Replay(trace, [STDIO], fast=True, timeout=5.0)
    events: list[str] = []

    def bridge_answers_later() -> None:
        events.append("answer")
        replay.receive(STDIO, ANSWER)

    def write(text: str) -> None:
        # This build sends an update more than the recording had: the frame count is reached before
        # the answer, which comes only when the replay yields.
        replay.receive(STDIO, UPDATE)
        replay.receive(STDIO, {**UPDATE, "params": {**UPDATE["params"], "extra": True}})
        gevent.spawn(bridge_answers_later)

    def open_conn(conn: Connection) -> None:
        conn.write = write
        conn.close = lambda: events.append("close")

    replay.drive(open_conn)
    assert events == ["answer", "close"]


def test_a_frame_of_a_kind_the_recording_lacks_does_not_stand_in_for_the_one_a_step_followed() -> None:
    chunk = UPDATE
    config = {"jsonrpc": "2.0", "method": "session/update",
              "params": {"sessionId": "s", "update": {"sessionUpdate": "config_option_update"}}}
    second = {**PROMPT, "id": 4}
    trace = fmt.Trace(header={"version": 1}, records=[
        {"t": 0.0, "dir": fmt.CLIENT_IN, "conn": STDIO, "frame": PROMPT},
        {"t": 0.1, "dir": fmt.CLIENT_OUT, "conn": STDIO, "frame": chunk},
        {"t": 0.2, "dir": fmt.CLIENT_IN, "conn": STDIO, "frame": second},  # the preempting prompt
    ])
    replay = Replay(trace, [STDIO], fast=True, timeout=5.0)
    events: list[str] = []

    def stream() -> None:
        events.append("chunk")
        replay.receive(STDIO, chunk)

    def write(text: str) -> None:
        events.append(f"sent {ujson.loads(text)['id']}")
        if len(events) == 1:
            replay.receive(STDIO, config)  # one frame, but not the chunk the second prompt followed
            gevent.spawn(stream)

    def open_conn(conn: Connection) -> None:
        conn.write = write
        conn.close = lambda: None

    replay.drive(open_conn)
    assert events == ["sent 3", "chunk", "sent 4"]


def test_a_bridge_that_stalls_costs_the_run_one_deadline_not_a_timeout_at_every_step() -> None:
    # Every step follows a frame this "bridge" never sends. Waited out step by step, ten steps would
    # take ten timeouts; the run's one deadline (OVERALL_SLACK timeouts) stops it with a note saying
    # so, and the editor's connection is still closed.
    records: list[dict] = []
    for step in range(10):
        records.append({"t": step / 10, "dir": fmt.CLIENT_IN, "conn": STDIO, "frame": {**PROMPT, "id": step}})
        records.append({"t": step / 10 + 0.05, "dir": fmt.CLIENT_OUT, "conn": STDIO,
                        "frame": {**ANSWER, "id": step}})
    replay = Replay(fmt.Trace(header={"version": 1}, records=records), [STDIO], fast=True, timeout=0.2)
    sent: list[int] = []
    closed: list[bool] = []

    def open_conn(conn: Connection) -> None:
        conn.write = lambda text: sent.append(ujson.loads(text)["id"])
        conn.close = lambda: closed.append(True)

    replay.drive(open_conn)
    waited = [note for note in replay.notes if note.startswith("waited")]
    assert any("deadline" in note for note in replay.notes), replay.notes
    # (at most OVERALL_SLACK waits fit in the deadline; a slow machine may fit fewer)
    assert 1 <= len(waited) <= OVERALL_SLACK and sent == list(range(len(waited) + 1)), (sent, replay.notes)
    assert closed == [True]

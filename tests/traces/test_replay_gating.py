"""The replay sends a client step only once the bridge answered what the recording had answered
before it (not only once as many frames arrived): a build that sends one frame more than the
recording must not see the editor close its input before the prompt's answer (issue 19: replays
that answered ``cancelled``)."""

from __future__ import annotations

import gevent
import ujson

from zcode_acp.cli.replay_driver import STDIO, Connection, Replay
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

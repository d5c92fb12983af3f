"""The bench's coalesced v4 turn (``bench/v4_path.py``, ``delta_ms``) is the same turn in fewer frames.

A figure per delta means something only if the merged frames carry every delta's text and take
the stream's common path; both are checked here, not timed.
"""

from __future__ import annotations

from bench import v4_path


def _text(updates: list[dict]) -> str:
    return "".join(u["content"]["text"] for u in updates if u.get("sessionUpdate") == "agent_message_chunk")


def test_the_flush_window_merges_appends_and_the_text_is_whole():
    feed, frames, legacy = v4_path._prepared(300, delta_ms=10)
    plain_feed, plain_frames, _ = v4_path._prepared(300)
    # 10 ms apart within a 30 ms window: about three appends a frame, far fewer frames than events
    assert len(frames) < len(plain_frames) / 2
    merged = [d for f in frames for d in f["frame"]["payload"]["deltas"] if d["op"] == "row.delta"]
    assert any(d["append"].count(" ") >= 3 for d in merged)
    text = _text(feed.frames(frames, 0.0).updates)
    assert text == _text(plain_feed.frames(plain_frames, 0.0).updates)
    assert text == "".join(e["payload"]["delta"] for e in legacy if e["type"] == "model.streaming")


def test_the_merged_frames_take_the_streams_common_path():
    from zcode_acp.protocol.v4.streaming import stream_shape, text_run

    feed, frames, _ = v4_path._prepared(60, delta_ms=10)
    subscription = feed.subscription
    shape = stream_shape(subscription.topic, subscription.subscription_id)
    streaming = [all(d["op"] == "row.delta" for d in f["frame"]["payload"]["deltas"]) for f in frames]
    first, last = streaming.index(True), len(streaming) - streaming[::-1].index(True)
    assert all(streaming[first:last]) and last - first > 5
    feed.frames(frames[:first], 0.0)  # the turn's start: its row appended
    seq = subscription.seq
    run = text_run(frames[first:last], shape, seq, 1 << 24)
    assert run is not None and run.to_seq - seq > 2 * (last - first)  # merged: each frame covers several events

"""The history read behind ``session/load`` (actors/session/history.py): after a resume it reads
twice at least, and the replay of the first read is built while the second is awaited, then used
when that read brings the same messages (docs/performance.md, "The cold load")."""

from __future__ import annotations

from typing import Any

from zcode_acp.actors.session.history import HistoryRead
from zcode_acp.protocol import updates
from zcode_acp.protocol.history import replay_updates


def history(count: int) -> list[dict[str, Any]]:
    return [{"info": {"id": f"m{i}", "role": ("user", "assistant")[i % 2]},
             "parts": [{"type": "text", "text": f"text {i}"}]} for i in range(count)]


class Encoder:
    """``encode_cooperatively``'s part: the updates' bytes; counts what it was given to encode."""

    def __init__(self) -> None:
        self.encoded: list[int] = []

    def __call__(self, replay: list[dict[str, Any]]) -> bytes:
        self.encoded.append(len(replay))
        return updates.encode("s", replay)


def a_resumed_read() -> HistoryRead:
    read = HistoryRead()
    read.resumed()
    assert read.want("load")
    read.read_sent()
    return read


def test_the_second_read_of_a_history_that_stopped_growing_uses_the_replay_built_meanwhile():
    read, encode = a_resumed_read(), Encoder()
    assert read.read(history(50))  # still filling, as far as the bridge knows: read again
    read.prepare(encode)
    read.read_sent()
    assert not read.read(history(50))  # a new answer, the same messages: it stopped growing
    assert read.encoded_replay(encode) == updates.encode("s", replay_updates(history(50)))
    assert encode.encoded == [50]  # built once, while the second read was awaited


def test_a_history_that_grew_meanwhile_is_replayed_from_the_last_read():
    read, encode = a_resumed_read(), Encoder()
    assert read.read(history(30))
    read.prepare(encode)
    read.read_sent()
    assert read.read(history(50))  # grew: read once more
    read.prepare(encode)
    read.read_sent()
    assert not read.read(history(50))
    assert read.encoded_replay(encode) == updates.encode("s", replay_updates(history(50)))
    assert encode.encoded == [30, 50]


def test_a_changed_message_is_not_replayed_from_the_prepared_one():
    read, encode = a_resumed_read(), Encoder()
    assert read.read(history(2))
    read.prepare(encode)
    changed = history(2)
    changed[1]["parts"][0]["text"] = "the engine finished writing it"
    read.read_sent()
    assert not read.read(changed)  # the same count: it stopped growing, but one message is longer
    assert read.encoded_replay(encode) == updates.encode("s", replay_updates(changed))


def test_the_prepared_replay_is_dropped_with_the_read():
    read, encode = a_resumed_read(), Encoder()
    assert read.read(history(3))
    read.prepare(encode)
    assert read.finish() == ["load"]
    assert read.prepared is None and read.messages is None

"""``updates.encode`` (the envelope's text around each update) gives the bytes of encoding each
``session/update`` frame whole, as ``framing.encode`` does: keys in order, no spaces, the same escapes."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from zcode_acp.protocol import framing, jsonrpc, updates
from zcode_acp.protocol.framing import FrameError

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)))
JSON = st.recursive(st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1)
                    | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
                    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4),
                    max_leaves=20)
UPDATE = st.dictionaries(TEXT, JSON, max_size=5)


def frame_by_frame(session_id: str, batch: list[dict]) -> bytes:
    return b"".join(framing.encode(jsonrpc.session_update(session_id, update)) for update in batch)


@given(TEXT, st.lists(UPDATE, max_size=5))
def test_a_batch_is_the_frames_encoded_one_by_one(session_id, batch):
    assert updates.encode(session_id, batch) == frame_by_frame(session_id, batch)


@pytest.mark.parametrize("text", ['quote " and \\ backslash', "slash / stays", "\x00\x1f\x7f", "é 中文 🎉",
                                  "\u2028\u2029", "</script>"])
def test_escapes_are_the_frames(text):
    batch = [{"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}, "messageId": text}]
    assert updates.encode(text, batch) == frame_by_frame(text, batch)


def test_a_non_finite_number_is_refused_as_before():
    with pytest.raises((ValueError, OverflowError, FrameError)) as before:
        frame_by_frame("s", [{"x": float("nan")}])
    with pytest.raises(type(before.value)):
        updates.encode("s", [{"x": float("nan")}])

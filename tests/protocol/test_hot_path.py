"""The hot path's shortcuts behave like the general path: text-delta bytes, backend line decoding."""

import pytest
from hypothesis import given, strategies as st

from zcode_acp.protocol import updates
from zcode_acp.protocol.translator import TextChunkLines, TurnTranslator, agent_text

TRICKY = ["a", 'quote " and \\ backslash', "slash / stays", "tab\tnew\nline\r\b\f", "\x00\x01\x1f\x7f",
          "é 中文 🎉", "\u2028\u2029", "\u2063delta\u2063", "</script>"]


@pytest.mark.parametrize("delta", TRICKY)
def test_a_template_line_equals_the_encoded_update(delta):
    lines = TextChunkLines("sess-\"1\"")
    assert lines.line("msg-1", delta) == updates.encode("sess-\"1\"", [agent_text(delta, "msg-1")])


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1))
def test_any_text_encodes_like_the_general_path(delta):
    lines = TextChunkLines("s")
    assert lines.line("m", delta) == updates.encode("s", [agent_text(delta, "m")])


def test_a_new_message_id_gets_a_new_template():
    lines = TextChunkLines("s")
    lines.line("m1", "x")
    assert lines.line("m2", "y") == updates.encode("s", [agent_text("y", "m2")])


@pytest.mark.parametrize("event", [
    {"type": "model.streaming", "payload": {"kind": "text_delta", "delta": "hi"}},
    {"type": "model.streaming", "payload": {"kind": "text_delta", "delta": ""}},
    {"type": "model.streaming", "payload": {"kind": "text_delta", "delta": 3}},
    {"type": "model.streaming", "payload": {"kind": "reasoning_delta", "delta": "hm"}},
    {"type": "model.streaming", "payload": None},
    {"type": "tool.updated", "payload": {"kind": "text_delta", "delta": "hi"}},
])
def test_text_delta_is_exactly_the_events_feed_turns_into_one_agent_text(event):
    translator = TurnTranslator(message_id="m")
    fast = translator.text_delta(event)
    slow = TurnTranslator(message_id="m").feed(event)
    if fast is None:
        assert not (len(slow) == 1 and slow[0]["sessionUpdate"] == "agent_message_chunk")
    else:
        assert slow == [agent_text(fast[1], fast[0])]


def test_backend_lines_decode_by_the_rules_of_decode_object():
    from zcode_acp.protocol import framing

    lines = [b'{"method":"session/event","params":{"x":1}}', b'{"id":3,"result":{}}', b"not json", b"[1]",
             b"{}", b'{"id":true}', b'{"method":"m","params":{"v":NaN}}', b'{"method":"m","params":{"v":"NaN"}}']
    expected = []
    for line in lines:
        try:
            expected.append(framing.decode_object(line, strict=False))
        except Exception:
            pass
    frames, skipped, _ = framing.decode_backend_lines(lines)
    assert frames == expected and skipped == len(lines) - len(expected) == 5

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zcode_acp.protocol import framing
from zcode_acp.protocol.errors import INVALID_REQUEST, PARSE_ERROR


def test_encode_keeps_utf8_and_slashes_and_ends_with_newline():
    line = framing.encode({"path": "/tmp/é", "n": 1})
    assert line == '{"path":"/tmp/é","n":1}\n'.encode()


def test_encode_refuses_nan():
    with pytest.raises(OverflowError):
        framing.encode({"x": float("nan")})


@pytest.mark.parametrize("line", [b"NaN", b'{"a": NaN}', b'{"a": Infinity}', b'{"a": -Infinity}', b'{"a": 1e999}'])
def test_decode_rejects_non_finite_numbers(line):
    with pytest.raises(framing.FrameError) as err:
        framing.decode(line)
    assert err.value.code == PARSE_ERROR


def test_decode_accepts_the_words_inside_strings():
    assert framing.decode(b'{"a": "NaN and Infinity", "b": 1e5}') == {"a": "NaN and Infinity", "b": 100000.0}


@pytest.mark.parametrize("line", [b"\xff\xfe{}", b'{"a": "\xc3\x28"}', b"{", b'{"a":1} trailing'])
def test_decode_rejects_bad_json_and_bad_utf8(line):
    with pytest.raises(framing.FrameError) as err:
        framing.decode(line)
    assert err.value.code == PARSE_ERROR


def test_a_batch_array_is_an_invalid_request():
    with pytest.raises(framing.FrameError) as err:
        framing.decode_object(b'[{"jsonrpc": "2.0", "id": 1, "method": "x"}]')
    assert err.value.code == INVALID_REQUEST


def test_a_scalar_is_an_invalid_request():
    with pytest.raises(framing.FrameError) as err:
        framing.decode_object(b"42")
    assert err.value.code == INVALID_REQUEST


def test_splitter_joins_partial_lines_and_skips_blank_ones():
    splitter = framing.LineSplitter()
    assert splitter.feed(b'{"a":') == []
    assert splitter.feed(b'1}\n\n  \n{"b":2}\n{"c"') == [b'{"a":1}', b'{"b":2}']
    assert splitter.pending() == b'{"c"'


def test_splitter_drops_a_huge_line_and_resynchronises():
    splitter = framing.LineSplitter(max_line=10)
    out = splitter.feed(b"x" * 8)
    out += splitter.feed(b"y" * 8)  # now over the limit without a newline
    out += splitter.feed(b"zzz\n{}\n")
    assert out == [b"{}"]
    assert splitter.oversized == 1


def test_splitter_drops_a_huge_complete_line():
    splitter = framing.LineSplitter(max_line=4)
    assert splitter.feed(b"123456789\nok\n") == [b"ok"]
    assert splitter.oversized == 1


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_round_trip(value):
    assert framing.decode(framing.encode(value)) == value


@given(st.lists(st.dictionaries(st.text(), st.text(), max_size=3), max_size=5), st.integers(1, 7))
def test_splitter_reassembles_any_chunking(frames, chunk):
    data = b"".join(framing.encode(frame) for frame in frames)
    splitter = framing.LineSplitter()
    lines = []
    for start in range(0, len(data), chunk):
        lines += splitter.feed(data[start:start + chunk])
    assert [framing.decode(line) for line in lines] == frames

"""protocol/v4/wire.py and frames.py: the captured notifications, and every way one can be wrong."""

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.protocol.v4_captures import captured_frames, fragments
from zcode_acp.protocol.v4 import wire as w
from zcode_acp.protocol.v4.frames import DeltasPayload, SnapshotPayload, parse_topic_frame

CAPTURED = captured_frames("s03a-official") + captured_frames("transport-v4-official")


@pytest.mark.parametrize("params", CAPTURED, ids=lambda p: p["logicalFrameId"])
def test_every_captured_notification_parses_as_a_complete_wire(params):
    parsed = w.parse_wire(params)
    assert isinstance(parsed, w.CompleteWire)
    route = (params["topic"], params["subscriptionId"], params["logicalFrameId"], params["logicalFrameOrdinal"])
    assert parsed.route == w.Route(*route)
    assert parsed.delivery_kind == params["deliveryKind"]
    frame = parse_topic_frame(parsed.frame)
    assert not isinstance(frame, str)
    assert (frame.from_seq, frame.to_seq) == (params["frame"]["fromSeq"], params["frame"]["toSeq"])
    kind = params["frame"]["payload"]["kind"]
    assert isinstance(frame.payload, SnapshotPayload if kind == "snapshot" else DeltasPayload)


def test_a_fragment_parses_with_its_checksum_and_data():
    piece = fragments(CAPTURED[0], [10, 200])[1]
    parsed = w.parse_wire(piece)
    assert isinstance(parsed, w.FragmentWire)
    assert (parsed.fragment_index, parsed.fragment_count) == (1, 3)
    assert parsed.checksum == piece["checksum"]["value"]
    assert parsed.data_base64 == piece["dataBase64"]


@pytest.mark.parametrize(
    "change",
    [
        {"wireVersion": 2},
        {"wireVersion": True},
        {"kind": "partial"},
        {"topic": ""},
        {"subscriptionId": 7},
        {"logicalFrameId": None},
        {"logicalFrameOrdinal": "1"},
    ],
)
def test_a_frame_that_names_no_subscription_is_unroutable(change):
    assert isinstance(w.parse_wire({**CAPTURED[0], **change}), w.Unroutable)


def test_non_object_params_are_unroutable():
    assert isinstance(w.parse_wire(["not", "an", "object"]), w.Unroutable)


@pytest.mark.parametrize("ordinal", [0, -1, 1.5, 2**53])
def test_an_ordinal_outside_positive_safe_integers_is_malformed(ordinal):
    parsed = w.parse_wire({**CAPTURED[0], "logicalFrameOrdinal": ordinal})
    assert isinstance(parsed, w.MalformedWire)
    assert parsed.reason_code == w.METADATA_MISMATCH


def test_an_unknown_delivery_kind_is_malformed_not_dropped():
    parsed = w.parse_wire({**CAPTURED[0], "deliveryKind": "live"})
    assert isinstance(parsed, w.MalformedWire)
    assert parsed.route.subscription_id == CAPTURED[0]["subscriptionId"]


def test_a_complete_wire_with_an_extra_key_or_no_frame_is_malformed():
    assert isinstance(w.parse_wire({**CAPTURED[0], "extra": 1}), w.MalformedWire)
    missing = {k: v for k, v in CAPTURED[0].items() if k != "frame"}
    assert isinstance(w.parse_wire(missing), w.MalformedWire)


def _fragment(**change):
    piece = fragments(CAPTURED[0], [50])[0]
    piece.update(change)
    return piece


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"fragmentIndex": 2}, w.METADATA_MISMATCH),
        ({"fragmentIndex": -1}, w.METADATA_MISMATCH),
        ({"fragmentCount": 0}, w.METADATA_MISMATCH),
        ({"fragmentCount": 1025}, w.FRAGMENT_COUNT_EXCEEDED),
        ({"logicalBytes": 16 * 1024 * 1024 + 1}, w.TOO_LARGE),
        ({"logicalBytes": 1}, w.METADATA_MISMATCH),
        ({"checksum": {"algorithm": "crc32", "value": "ABCDEF01"}}, w.METADATA_MISMATCH),
        ({"checksum": {"algorithm": "adler32", "value": "abcdef01"}}, w.METADATA_MISMATCH),
        ({"checksum": "abcdef01"}, w.METADATA_MISMATCH),
        ({"dataBase64": "eyJ0b3Bp Yy"}, w.INVALID_BASE64),
        ({"dataBase64": "eyJ"}, w.INVALID_BASE64),
        ({"dataBase64": "A" * (1024 * 1024 + 4)}, w.ENVELOPE_TOO_LARGE),
        ({"fragmentIndex": "0"}, w.METADATA_MISMATCH),
        ({"frame": {}}, w.METADATA_MISMATCH),
    ],
)
def test_a_fragment_that_breaks_the_schema_is_malformed_with_the_engines_reason(change, reason):
    parsed = w.parse_wire(_fragment(**change))
    assert isinstance(parsed, w.MalformedWire)
    assert parsed.reason_code == reason


@pytest.mark.parametrize(
    "change",
    [
        {"fromSeq": -1},
        {"toSeq": "1"},
        {"sentAt": None},
        {"payload": {"kind": "patch"}},
        {"payload": {"kind": "deltas", "deltas": {}}},
        {"payload": {"kind": "deltas", "deltas": [{"row": 1}]}},
        {"payload": {"kind": "snapshot", "snapshot": []}},
        {"topic": ""},
    ],
)
def test_a_logical_frame_with_a_broken_envelope_says_why(change):
    frame = {**copy.deepcopy(CAPTURED[1]["frame"]), **change}
    assert isinstance(parse_topic_frame(frame), str)


def test_deltas_running_backwards_are_refused():
    frame = {**CAPTURED[1]["frame"], "fromSeq": 3, "toSeq": 2}
    assert isinstance(parse_topic_frame(frame), str)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=300)
@given(key=st.sampled_from(sorted(w._FRAGMENT_KEYS)), value=json_values)
def test_any_one_field_of_a_fragment_replaced_by_any_json_never_raises(key, value):
    parsed = w.parse_wire({**_fragment(), key: value})
    assert isinstance(parsed, w.FragmentWire | w.MalformedWire | w.Unroutable)

"""protocol/v4/reassembly.py: captured frames through the assembler, fragments in every order, every fault."""

import base64
import json
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.protocol.v4_captures import captured_frames, fragments, logical_bytes
from zcode_acp.protocol.v4 import reassembly as r
from zcode_acp.protocol.v4.frames import INVALID_PAYLOAD, DeltasPayload, SnapshotPayload
from zcode_acp.protocol.v4.wire import METADATA_MISMATCH, TOO_LARGE, parse_wire

S03A = captured_frames("s03a-official")
SNAPSHOT = S03A[0]  # initial snapshot, ordinal 1
DELTAS = S03A[1]  # online deltas, ordinal 2
RECOVERY = S03A[2]  # recovery snapshot, ordinal 3


def feed(assembler, *wires, now=0.0):
    events = []
    for params in wires:
        events += assembler.accept(parse_wire(params), now)
    return events


def only_frame(events):
    assert len(events) == 1 and isinstance(events[0], r.Assembled), events
    return events[0]


def only_fault(events):
    assert len(events) == 1 and isinstance(events[0], r.AssemblyFault), events
    return events[0]


def test_the_checksum_is_the_standard_crc32_check_value_in_lowercase_hex():
    # The CRC-32 "check" value every implementation of the engine's polynomial must give.
    assert r.crc32_hex(b"123456789") == "cbf43926"
    assert r.crc32_hex(b"") == "00000000"


def test_the_captured_frames_assemble_in_order_with_their_delivery_kinds():
    assembler = r.Assembler()
    events = feed(assembler, *S03A)
    assert [type(e) for e in events] == [r.Assembled] * len(S03A)
    assert [e.delivery_kind for e in events] == [p["deliveryKind"] for p in S03A]
    assert isinstance(events[0].frame.payload, SnapshotPayload)
    assert isinstance(events[1].frame.payload, DeltasPayload)
    assert events[1].frame.payload.deltas == ()
    assert events[0].frame.payload.snapshot["logEpoch"] == "musegv3e-mrqoweve"


def test_a_fragmented_frame_equals_the_complete_one():
    whole = only_frame(feed(r.Assembler(), SNAPSHOT)).frame
    cut = only_frame(feed(r.Assembler(), *fragments(SNAPSHOT, [1, 77, 500, 1500])))
    assert cut.frame == whole
    assert cut.delivery_kind == "initial"


def test_a_cut_inside_a_utf8_sequence_still_reassembles():
    wire = json.loads(json.dumps(DELTAS))
    wire["frame"]["payload"]["deltas"] = [{"op": "row.delta", "rowId": 1, "path": "text", "append": "héllo ✓ 日本"}]
    raw = logical_bytes(wire["frame"])
    inside = raw.index("✓".encode()) + 1
    assert only_frame(feed(r.Assembler(), *fragments(wire, [inside]))).frame.payload.deltas[0]["append"] == "héllo ✓ 日本"


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=60)
@given(data=st.data())
def test_fragments_in_any_order_with_duplicates_assemble_once(data):
    raw_len = len(logical_bytes(SNAPSHOT["frame"]))
    cuts = data.draw(st.lists(st.integers(1, raw_len - 1), min_size=1, max_size=12, unique=True))
    pieces = fragments(SNAPSHOT, cuts)
    order = data.draw(st.permutations(pieces))
    dupes = data.draw(st.lists(st.sampled_from(pieces), max_size=4))
    assembler = r.Assembler()
    events = feed(assembler, *order[:-1], *dupes) if len(order) > 1 else []
    # Duplicates of fragments already in are ignored; a duplicate of the last one may
    # complete the frame early, after which the last one is a leftover of a settled frame.
    events += feed(assembler, order[-1], *dupes)
    assert len(events) == 1
    assert isinstance(events[0], r.Assembled)
    assert assembler.open_assemblies == 0 and assembler.staged_bytes == 0


def test_a_wrong_checksum_drops_the_frame_and_the_next_one_still_assembles():
    assembler = r.Assembler()
    fault = only_fault(feed(assembler, *fragments(SNAPSHOT, [100], checksum="00000000")))
    assert fault.reason_code == r.CHECKSUM_MISMATCH
    assert fault.route.logical_frame_ordinal == 1 and not fault.deterministic
    only_frame(feed(assembler, DELTAS))


def test_a_flipped_byte_is_caught_by_the_checksum():
    raw = bytearray(logical_bytes(SNAPSHOT["frame"]))
    good = f"{zlib.crc32(bytes(raw)):08x}"
    raw[40] ^= 0x01
    fault = only_fault(feed(r.Assembler(), *fragments(SNAPSHOT, [64], data=bytes(raw), checksum=good)))
    assert fault.reason_code == r.CHECKSUM_MISMATCH


def test_fewer_bytes_than_announced_is_a_length_mismatch():
    pieces = fragments(SNAPSHOT, [100])
    for piece in pieces:
        piece["logicalBytes"] += 5
    assert only_fault(feed(r.Assembler(), *pieces)).reason_code == r.LENGTH_MISMATCH


def test_more_bytes_than_announced_is_a_length_mismatch_at_once():
    pieces = fragments(SNAPSHOT, [100])
    for piece in pieces:
        piece["logicalBytes"] = 120
    assert only_fault(feed(r.Assembler(), *pieces)).reason_code == r.LENGTH_MISMATCH


def test_the_same_index_with_other_bytes_is_a_conflict():
    first, second = fragments(SNAPSHOT, [100])
    other = {**first, "dataBase64": base64.b64encode(b"x" * 100).decode()}
    assembler = r.Assembler()
    assert feed(assembler, first) == []
    assert only_fault(feed(assembler, other)).reason_code == r.FRAGMENT_CONFLICT
    # The frame is settled as lost: its remaining fragment changes nothing.
    assert feed(assembler, second) == []


def test_siblings_that_disagree_on_metadata_fault():
    first, second = fragments(SNAPSHOT, [100])
    second = {**second, "deliveryKind": "online"}
    assembler = r.Assembler()
    feed(assembler, first)
    assert only_fault(feed(assembler, second)).reason_code == METADATA_MISMATCH


def test_a_late_fragment_of_an_older_frame_is_ignored_and_leaves_the_newer_one_alone():
    assembler = r.Assembler()
    old = fragments(SNAPSHOT, [100])
    new = fragments(RECOVERY, [100])
    only_frame(feed(assembler, *old))
    feed(assembler, new[0])
    broken_old = {**old[1], "dataBase64": "!!!!"}
    assert feed(assembler, old[1], broken_old) == []
    assert only_frame(feed(assembler, new[1])).delivery_kind == "recovery"


def test_a_newer_online_frame_supersedes_an_unfinished_one_with_a_fault():
    assembler = r.Assembler()
    feed(assembler, fragments(SNAPSHOT, [100])[0])
    events = feed(assembler, DELTAS)
    assert [type(e) for e in events] == [r.AssemblyFault, r.Assembled]
    assert events[0].reason_code == r.SUPERSEDED and events[0].route.logical_frame_ordinal == 1
    assert assembler.open_assemblies == 0 and assembler.staged_bytes == 0


def test_a_recovery_frame_supersedes_an_unfinished_one_silently():
    assembler = r.Assembler()
    feed(assembler, fragments(DELTAS, [30])[0])
    only_frame(feed(assembler, RECOVERY))


def test_a_recovery_frame_hides_the_timeout_of_the_frame_it_replaces():
    assembler = r.Assembler(timeout_ms=1000)
    feed(assembler, fragments(DELTAS, [30])[0], now=0)
    only_frame(feed(assembler, RECOVERY, now=5000))


def test_the_same_ordinal_under_another_id_is_a_conflict():
    assembler = r.Assembler()
    only_frame(feed(assembler, SNAPSHOT))
    impostor = {**DELTAS, "logicalFrameOrdinal": 1, "logicalFrameId": "someone-else"}
    impostor["frame"] = DELTAS["frame"]
    assert only_fault(feed(assembler, impostor)).reason_code == r.ORDINAL_CONFLICT
    # The same frame again (same ordinal, same id) is a duplicate: ignored.
    assert feed(assembler, SNAPSHOT) == []


def test_an_assembly_that_waits_too_long_times_out():
    assembler = r.Assembler(timeout_ms=30_000)
    first, second = fragments(SNAPSHOT, [100])
    feed(assembler, first, now=1_000)
    assert assembler.next_expiry_ms == 31_000
    assert assembler.expire(30_999) == []
    fault = only_fault(assembler.expire(31_000))
    assert fault.reason_code == r.TIMED_OUT
    assert assembler.next_expiry_ms is None and assembler.staged_bytes == 0
    assert feed(assembler, second, now=31_001) == []


def test_open_assemblies_are_bounded():
    assembler = r.Assembler(max_concurrent=2)
    for n in range(2):
        assert feed(assembler, {**fragments(SNAPSHOT, [100])[0], "subscriptionId": f"s{n}"}) == []
    third = {**fragments(SNAPSHOT, [100])[0], "subscriptionId": "s2"}
    assert only_fault(feed(assembler, third)).reason_code == r.CONCURRENT_LIMIT
    assert assembler.open_assemblies == 2


def test_staged_bytes_are_bounded():
    assembler = r.Assembler(max_staged_bytes=150)
    first = fragments(SNAPSHOT, [100])[0]
    assert feed(assembler, first) == []
    other = {**fragments(SNAPSHOT, [100])[0], "subscriptionId": "other"}
    assert only_fault(feed(assembler, other)).reason_code == r.BUDGET_EXCEEDED
    assert assembler.staged_bytes == 100


def test_a_complete_frame_over_the_logical_limit_is_refused():
    assembler = r.Assembler(max_logical_bytes=1000)
    assert only_fault(feed(assembler, SNAPSHOT)).reason_code == TOO_LARGE
    only_frame(feed(assembler, DELTAS))


def test_limits_cannot_be_widened_past_the_engines():
    assembler = r.Assembler(max_logical_bytes=10**12, max_concurrent=10**6, timeout_ms=10**9)
    assert assembler._max_logical == 16 * 1024 * 1024
    assert assembler._max_concurrent == 32
    assert assembler._timeout_ms == 30_000
    with pytest.raises(ValueError):
        r.Assembler(max_fragments=0)


def test_a_frame_naming_another_subscription_inside_is_refused():
    wire = json.loads(json.dumps(DELTAS))
    wire["frame"]["subscriptionId"] = "not-this-one"
    assert only_fault(feed(r.Assembler(), *fragments(wire, [40]))).reason_code == METADATA_MISMATCH
    assert only_fault(feed(r.Assembler(), wire)).reason_code == METADATA_MISMATCH


def test_content_that_fits_no_schema_is_a_deterministic_fault():
    wire = json.loads(json.dumps(DELTAS))
    wire["frame"]["payload"] = {"kind": "deltas", "deltas": "nope"}
    fault = only_fault(feed(r.Assembler(), wire))
    assert fault.reason_code == INVALID_PAYLOAD and fault.deterministic


def test_bytes_that_are_not_utf8_or_not_json_fault():
    bad_utf8 = b'{"topic":"\xff"}'
    not_json = b'{"topic": NaN}'
    assert only_fault(feed(r.Assembler(), *fragments(SNAPSHOT, [5], data=bad_utf8))).reason_code == r.INVALID_UTF8
    assert only_fault(feed(r.Assembler(), *fragments(SNAPSHOT, [5], data=not_json))).reason_code == r.INVALID_JSON


def test_a_malformed_wire_faults_its_route_unless_it_is_a_leftover():
    assembler = r.Assembler()
    only_frame(feed(assembler, DELTAS))
    assert feed(assembler, {**SNAPSHOT, "deliveryKind": "bogus"}) == []  # ordinal 1 < settled 2
    fault = only_fault(feed(assembler, {**RECOVERY, "deliveryKind": "bogus"}))
    assert fault.reason_code == METADATA_MISMATCH and fault.route.logical_frame_ordinal == 3


def test_discard_forgets_a_route_so_its_ordinals_start_over():
    assembler = r.Assembler()
    only_frame(feed(assembler, DELTAS))
    assembler.discard(DELTAS["topic"], DELTAS["subscriptionId"])
    only_frame(feed(assembler, SNAPSHOT))


def test_a_known_line_length_under_the_limit_spares_the_measure_and_one_over_it_does_not():
    assembler = r.Assembler(max_logical_bytes=1000)
    wire = parse_wire(SNAPSHOT)
    assert isinstance(only_frame(assembler.accept(wire, 0, line_bytes=900)), r.Assembled)
    assert only_fault(r.Assembler(max_logical_bytes=1000).accept(wire, 0, line_bytes=5000)).reason_code == TOO_LARGE


@pytest.mark.parametrize("spoiler", [float("nan"), float("inf"), "\ud800", {1, 2}])
def test_a_complete_frame_that_cannot_be_json_is_a_deterministic_fault(spoiler):
    # Decoded leniently upstream (NaN), or built by hand: either way not what the engine sends.
    wire = json.loads(json.dumps(DELTAS))
    wire["frame"]["payload"]["deltas"] = [{"op": "row.delta", "rowId": 1, "path": "text", "append": spoiler}]
    fault = only_fault(feed(r.Assembler(), wire))
    assert fault.reason_code == INVALID_PAYLOAD and fault.deterministic


def test_a_complete_frame_is_measured_exactly_near_the_limit():
    wire = json.loads(json.dumps(DELTAS))
    size = len(r.encode_logical(wire["frame"]))
    for limit, fits in ((size, True), (size - 1, False), (2 * size, True), (2 * size - 1, True)):
        events = r.Assembler(max_logical_bytes=limit).accept(parse_wire(wire), 0)
        if fits:
            only_frame(events)
        else:
            assert only_fault(events).reason_code == TOO_LARGE

"""sim/v4 topics and wire: subscribe/resync/unsubscribe, frames as the engine sends them, faults.

Every frame the simulator writes is read by the bridge's own decoder (``protocol/v4``:
wire parsing, reassembly with CRC-32, the topic state machine, the conversation applier),
and what the bridge ends up holding is compared with the simulator's snapshot. Shapes
are compared with the captured frames of a real ZCode 3.14.4.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.protocol.v4_captures import capture, captured_frames
from tests.sim.v4_fakes import Client, Engine, call, create_session, make_plane, subscribe
from zcode_acp.protocol.v4 import topic as client_topic
from zcode_acp.protocol.v4.frames import parse_topic_frame
from zcode_acp.protocol.v4.reassembly import crc32_hex as bridge_crc32
from zcode_acp.protocol.v4.wire import CompleteWire, FragmentWire, parse_wire
from zcode_acp.sim.v4.errors import V4Error
from zcode_acp.sim.v4.wire import crc32_hex

CAPTURED = captured_frames("transport-v4-official")
CAPTURED_SNAPSHOT = CAPTURED[0]


def _frames(wire: Any) -> list[dict[str, Any]]:
    return [m["params"] for m in wire.sent if m["method"] == "v4/conversation/frame"]


def _converged(client: Client, plane: Any, session_id: str) -> None:
    held = client.picture()
    ours = plane.sessions.get(session_id).snapshot()
    held.pop("seq", None)  # the client keeps the seq of its last snapshot in the state; the cursor is its own
    assert client.sub.seq == ours.pop("seq")
    assert held == ours


def _a_turn(engine: Engine, text: str = "hello world", client: Client | None = None) -> None:
    engine.start("please " + text)
    engine.text("let me think", "reasoning_delta")
    engine.text(text)
    if client is not None:  # while rows still stream: deltas, not settled rows, made this state
        _converged(client, engine.plane, engine.session_id)
    engine.tool(f"tool_{engine.turn_id}", tails=("compiling\n", "compiling\nlinking\n"))
    engine.text("all done")
    engine.complete()


def test_subscribe_answers_an_ack_shaped_as_the_engines_then_sends_the_snapshot_after_it() -> None:
    plane, port, wire, clock = make_plane()
    session_id = create_session(plane, wire)
    wire.log.clear()
    client, answer = subscribe(plane, wire, f"conversation/{session_id}")
    captured_ack = next(r["result"] for r in capture("transport-v4-official")
                        if r.get("method") == "v4/conversation/subscribe" and "result" in r)
    assert set(answer) == set(captured_ack) == {"ack"}
    assert set(answer["ack"]) == set(captured_ack["ack"])
    assert set(answer["ack"]["openTiming"]) == set(captured_ack["ack"]["openTiming"])
    assert answer["ack"]["mode"] == "snapshot"
    assert wire.log == ["reply", "frame"]  # the ack, then the initial snapshot
    first = _frames(wire)[0]
    assert set(first) == set(CAPTURED_SNAPSHOT)
    assert first["kind"] == "complete" and first["deliveryKind"] == "initial" and first["logicalFrameOrdinal"] == 1
    assert set(first["frame"]) == set(CAPTURED_SNAPSHOT["frame"])
    ours = first["frame"]["payload"]["snapshot"]
    theirs = CAPTURED_SNAPSHOT["frame"]["payload"]["snapshot"]
    assert set(ours) == set(theirs)
    for key in ("control", "availability", "meta", "config", "usage", "queue", "subagents", "rows"):
        assert set(ours[key]) == set(theirs[key]), key
    assert {k: ours[k] for k in ("control", "availability", "inputRouting", "meta", "queue", "pendingInteractions",
                                  "backgroundWorks", "subagents", "goal", "plan", "rows")} == \
        {k: theirs[k] for k in ("control", "availability", "inputRouting", "meta", "queue", "pendingInteractions",
                                "backgroundWorks", "subagents", "goal", "plan", "rows")}
    assert isinstance(client.outcomes[-1], client_topic.Applied) and client.outcomes[-1].snapshot


def test_a_turn_streams_as_online_deltas_and_the_bridge_converges_to_the_simulator() -> None:
    plane, port, wire, clock = make_plane()
    session_id = create_session(plane, wire)
    client, _ = subscribe(plane, wire, f"conversation/{session_id}")
    _a_turn(Engine(plane, session_id, wire), client=client)
    frames = _frames(wire)
    assert all(set(f) == set(CAPTURED_SNAPSHOT) and set(f["frame"]) == set(CAPTURED[1]["frame"]) for f in frames)
    assert all(set(f["frame"]["payload"]) == set(CAPTURED[1]["frame"]["payload"]) for f in frames[1:])
    assert all(f["deliveryKind"] == "online" for f in frames[1:])
    assert [f["logicalFrameOrdinal"] for f in frames] == list(range(1, len(frames) + 1))
    for wire_frame in frames:
        parsed = parse_topic_frame(wire_frame["frame"])
        assert not isinstance(parsed, str), parsed
    seqs = [(f["frame"]["fromSeq"], f["frame"]["toSeq"]) for f in frames[1:]]
    assert all(b == a + 1 for a, b in seqs) and all(seqs[i][1] == seqs[i + 1][0] for i in range(len(seqs) - 1))
    ops = [d["op"] for f in frames[1:] for d in f["frame"]["payload"]["deltas"]]
    assert {"row.appended", "row.upserted", "row.delta", "state.updated"} <= set(ops)
    assert not any(isinstance(o, client_topic.ResyncNeeded) for o in client.outcomes)
    _converged(client, plane, session_id)


def test_a_large_frame_is_cut_into_fragments_that_carry_the_crc32_of_the_whole() -> None:
    plane, port, wire, clock = make_plane(fragment_bytes=300)
    session_id = create_session(plane, wire)
    client, _ = subscribe(plane, wire, f"conversation/{session_id}")
    fragments = [f for f in _frames(wire) if f["kind"] == "fragment"]
    assert fragments, "the snapshot is over 300 bytes: it must be fragmented"
    assert [f["fragmentIndex"] for f in fragments] == list(range(fragments[0]["fragmentCount"]))
    data = b"".join(base64.b64decode(f["dataBase64"]) for f in fragments)
    assert len(data) == fragments[0]["logicalBytes"]
    assert fragments[0]["checksum"] == {"algorithm": "crc32", "value": bridge_crc32(data)}
    assert all(isinstance(parse_wire(f), FragmentWire) for f in fragments)
    assert crc32_hex(b"123456789") == "cbf43926"  # the CRC-32/IEEE check value
    _a_turn(Engine(plane, session_id, wire))
    _converged(client, plane, session_id)


@pytest.mark.parametrize("fault", ["gap", "checksum", "stale_subscription", "duplicate", "fragment"])
def test_each_fault_is_survived_by_the_bridge_and_gap_and_checksum_make_it_resync(fault: str) -> None:
    plane, port, wire, clock = make_plane()
    session_id = create_session(plane, wire)
    client, _ = subscribe(plane, wire, f"conversation/{session_id}")
    engine = Engine(plane, session_id, wire)
    engine.start("go")
    plane.faults.arm(fault)
    engine.text("one two three")
    engine.complete()
    assert plane.faults.played[fault] == 1
    resyncs = {"gap": 1, "checksum": 1}.get(fault, 0)
    assert client.resyncs == resyncs
    ignored = [o for o in client.outcomes if isinstance(o, client_topic.Ignored)]
    if fault == "stale_subscription":
        assert any("not the current one" in o.reason for o in ignored)
    if fault == "duplicate":
        ids = [f["logicalFrameId"] for f in _frames(wire)]
        assert len(ids) == len(set(ids)) + 1, "one frame went out twice"
        applied = [o for o in client.outcomes if isinstance(o, client_topic.Applied)]
        assert len(applied) == len(set(ids)), "the second copy must not be applied again"
    _converged(client, plane, session_id)


def test_a_gap_or_a_bad_checksum_is_resumed_with_recovery_deltas_from_the_clients_base() -> None:
    plane, port, wire, clock = make_plane(faults="gap")
    session_id = create_session(plane, wire)
    client, _ = subscribe(plane, wire, f"conversation/{session_id}")
    engine = Engine(plane, session_id, wire)
    engine.start("go")
    engine.text("more")
    recovery = [f for f in _frames(wire) if f["deliveryKind"] == "recovery"]
    assert recovery and recovery[0]["frame"]["payload"]["kind"] == "deltas"
    plane.faults.arm("checksum")
    engine.complete()
    recovery = [f for f in _frames(wire) if f["deliveryKind"] == "recovery"]
    assert len(recovery) == 2 and recovery[-1]["frame"]["payload"]["kind"] == "deltas"
    assert recovery[-1]["frame"]["fromSeq"] == recovery[0]["frame"]["toSeq"]
    _converged(client, plane, session_id)


def test_a_subscribe_with_a_retained_base_is_resumed_and_one_from_another_epoch_gets_a_snapshot() -> None:
    plane, port, wire, clock = make_plane()
    session_id = create_session(plane, wire)
    topic = f"conversation/{session_id}"
    first, answer = subscribe(plane, wire, topic, "first")
    engine = Engine(plane, session_id, wire)
    engine.start("go")
    base = {"logEpoch": answer["ack"]["logEpoch"], "seq": first.sub.seq}
    engine.text("after the base")
    engine.complete()
    _, resumed = subscribe(plane, wire, topic, "second", base=base)
    assert resumed["ack"]["mode"] == "resume"
    first_frame = next(f for f in _frames(wire) if f["subscriptionId"] == resumed["ack"]["subscriptionId"])
    assert first_frame["frame"]["payload"]["kind"] == "deltas" and first_frame["frame"]["fromSeq"] == base["seq"]
    assert first_frame["frame"]["toSeq"] == plane.sessions.get(session_id).log.seq
    _, fresh = subscribe(plane, wire, topic, "third", base={"logEpoch": "other-epoch", "seq": 1})
    assert fresh["ack"]["mode"] == "snapshot"


def test_unsubscribe_ends_the_frames_and_unknown_subscriptions_or_topics_are_errors() -> None:
    plane, port, wire, clock = make_plane()
    session_id = create_session(plane, wire)
    topic = f"conversation/{session_id}"
    client, answer = subscribe(plane, wire, topic)
    params = client_topic.unsubscribe_params(topic, "bridge", answer["ack"]["subscriptionId"])
    assert call(plane, "v4/conversation/unsubscribe", params, wire) == {}
    before = len(wire.sent)
    Engine(plane, session_id, wire).start("nobody listens")
    assert len(wire.sent) == before
    with pytest.raises(V4Error):
        call(plane, "v4/conversation/unsubscribe", params, wire)
    with pytest.raises(V4Error) as missing:
        call(plane, "v4/conversation/subscribe", client_topic.subscribe_params("conversation/nope", "bridge"), wire)
    assert missing.value.code == -32602 and "nope" in missing.value.message


def test_resync_answers_on_the_same_subscription_with_a_recovery_snapshot_as_captured() -> None:
    plane, port, wire, clock = make_plane()
    session_id = create_session(plane, wire)
    client, answer = subscribe(plane, wire, f"conversation/{session_id}")
    captured = next(r for r in capture("transport-v4-official") if r.get("method") == "v4/conversation/resync"
                    and "result" in r)
    resync = call(plane, "v4/conversation/resync", client.sub.resync_params("bridge", force_snapshot=True), wire)
    assert set(resync["ack"]) == set(captured["result"]["ack"])
    assert resync["ack"]["subscriptionId"] == answer["ack"]["subscriptionId"]
    last = _frames(wire)[-1]
    assert last["deliveryKind"] == "recovery" and last["frame"]["payload"]["kind"] == "snapshot"
    assert last["logicalFrameOrdinal"] == 2


def test_the_workspace_topics_list_sessions_and_slash_commands() -> None:
    from zcode_acp.protocol.v4.sessions_index_apply import SessionsIndexState
    from zcode_acp.protocol.v4.workspace_config_apply import WorkspaceConfigState

    plane, port, wire, clock = make_plane()
    index_sub = client_topic.TopicSubscription("sessions-index//fixture/workspace", SessionsIndexState())
    answer = call(plane, "v4/conversation/subscribe",
                  client_topic.subscribe_params("sessions-index//fixture/workspace", "bridge"), wire)
    index_sub.subscribed(answer["ack"])
    session_id = create_session(plane, wire)
    engine = Engine(plane, session_id, wire)
    engine.event("session.titleUpdated", {"previousTitle": "", "source": "first_input", "title": "Fix the build"})
    for params in _frames(wire):
        if params["topic"].startswith("sessions-index/"):
            for outcome in index_sub.accept(parse_wire(params), 0.0):
                assert isinstance(outcome, client_topic.Applied), outcome
    [summary] = index_sub.applier.sessions.values()
    assert summary["title"] == "Fix the build" and summary["workspaceId"] == "/fixture/workspace"
    # sessions-index.ts: what a summary must carry
    assert {"sessionId", "workspaceId", "title", "phase", "sessionEnded", "hasBackgroundWork", "lastActivityAt",
            "createdAt"} <= set(summary)
    assert "openTiming" not in answer["ack"], "only conversation opens are timed (transport.ts)"
    index_frames = [f for f in _frames(wire) if f["topic"].startswith("sessions-index/")]
    engine.text("streaming words")
    assert len([f for f in _frames(wire) if f["topic"].startswith("sessions-index/")]) == len(index_frames), \
        "a streamed delta does not touch the index"
    engine.complete()
    assert any(f["topic"].startswith("sessions-index/") for f in _frames(wire)[-3:])
    config_sub = client_topic.TopicSubscription("workspace-config//fixture/workspace", WorkspaceConfigState())
    answer = call(plane, "v4/conversation/subscribe",
                  client_topic.subscribe_params("workspace-config//fixture/workspace", "bridge"), wire)
    config_sub.subscribed(answer["ack"])
    outcomes = config_sub.accept(parse_wire(_frames(wire)[-1]), 0.0)
    assert isinstance(outcomes[0], client_topic.Applied) and config_sub.applier.config is not None
    options = {o["id"]: o for o in config_sub.applier.config["configOptions"]}
    # v4-workspace-config.ts: the mode option only; the model catalog is never this topic's.
    assert set(options) == {"mode"} and options["mode"]["currentValue"] == "build"
    assert all({"id", "name", "type", "currentValue"} <= set(o) for o in options.values())


_EVENTS = st.lists(st.sampled_from(["text", "reasoning", "tool", "turn"]), min_size=1, max_size=12)
_FAULTS = st.lists(st.sampled_from(["", "gap", "checksum", "stale_subscription", "duplicate", "fragment"]),
                   min_size=1, max_size=12)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=60)
@given(events=_EVENTS, faults=_FAULTS, fragment_bytes=st.sampled_from([200, 700, 256 * 1024]))
def test_under_random_gaps_duplicates_fragments_and_stale_ids_the_bridge_converges(
        events: list[str], faults: list[str], fragment_bytes: int) -> None:
    plane, port, wire, clock = make_plane(fragment_bytes=fragment_bytes)
    session_id = create_session(plane, wire)
    client, _ = subscribe(plane, wire, f"conversation/{session_id}")
    engine = Engine(plane, session_id, wire)
    engine.start("begin")
    compared = 0
    for step, (event, fault) in enumerate(zip(events, faults * (len(events) // len(faults) + 1), strict=False)):
        if client.sub.seq == plane.sessions.get(session_id).log.seq:
            _converged(client, plane, session_id)  # mid-stream too: a settled row must not hide a bad delta
            compared += 1
        if fault:
            plane.faults.arm(fault)
        if event == "text":
            engine.text(f"words {step}")
        elif event == "reasoning":
            engine.text(f"hmm {step}", "reasoning_delta")
        elif event == "tool":
            engine.tool(f"tool_{step}", tails=(f"out {step}\n",))
        else:
            engine.complete()
            engine.start(f"again {step}")
    engine.complete()
    plane.faults.arm("duplicate")  # leave nothing armed that would never play: settle with one more frame
    engine.event("session.titleUpdated", {"previousTitle": "", "source": "first_input", "title": "done"})
    _converged(client, plane, session_id)
    assert compared >= 1


def test_frames_decode_as_complete_wires_and_parse_as_the_schema_says() -> None:
    plane, port, wire, clock = make_plane()
    session_id = create_session(plane, wire)
    subscribe(plane, wire, f"conversation/{session_id}")
    _a_turn(Engine(plane, session_id, wire))
    for params in _frames(wire):
        parsed = parse_wire(json.loads(json.dumps(params)))
        assert isinstance(parsed, CompleteWire), parsed


def test_two_connections_on_one_conversation_both_converge_and_a_dropped_one_gets_nothing_more() -> None:
    plane, port, wire, clock = make_plane()
    session_id = create_session(plane, wire)
    topic = f"conversation/{session_id}"
    desktop, _ = subscribe(plane, wire, topic, "desktop")
    remote, _ = subscribe(plane, wire, topic, "remote")
    engine = Engine(plane, session_id, wire)
    _a_turn(engine)
    _converged(desktop, plane, session_id)
    _converged(remote, plane, session_id)
    plane.topics.drop_connection("remote")
    seq = remote.sub.seq
    engine.start("only the desktop sees this")
    assert remote.sub.seq == seq
    _converged(desktop, plane, session_id)

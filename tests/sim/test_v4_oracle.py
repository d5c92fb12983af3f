"""The oracle completed (issue 31): the strict check every simulator frame goes through
(``tests/engine_schema.py``, run on every process test's recording) refuses a broken frame of each
kind: a row of the conversation (in a snapshot's window, appended, upserted), both side topics
(``sessions-index``, ``workspace-config``; snapshot and delta), and the wire refinements (topic and
subscription equal inside and outside a frame, ``fragmentIndex < fragmentCount``, a chunk of at most
512 KiB decoded). Each starts from frames the simulator wrote, which pass, and breaks one thing."""

from __future__ import annotations

import base64
import copy
import hashlib
from collections.abc import Callable
from typing import Any

import pytest

from tests.engine_schema import check_conversation
from tests.sim.v4_fakes import WORKSPACE, Engine, call, create_session, make_plane, subscribe
from zcode_acp.protocol.v4 import commands as bridge
from zcode_acp.protocol.v4 import topic as client_topic

Frames = list[tuple[str, dict[str, Any]]]
CHUNK = 512 * 1024


def recorded(fragment_bytes: int = 256 * 1024) -> Frames:
    """A short v4 conversation as the simulator writes it: three topics, a turn, an upload."""
    plane, port, wire, clock = make_plane(fragment_bytes=fragment_bytes)
    session_id = create_session(plane, wire)
    for topic in (f"sessions-index/{WORKSPACE}", f"workspace-config/{WORKSPACE}"):  # (no client decodes them here)
        call(plane, "v4/conversation/subscribe", client_topic.subscribe_params(
            topic, "bridge", workspace={"workspacePath": WORKSPACE, "workspaceKey": WORKSPACE}), wire)
    engine = Engine(plane, session_id, wire)
    envelope = bridge.envelope(bridge.send_text(session_id, "one"), command_id="c1", client_id="bridge", issued_at=1)
    call(plane, "v4/command", envelope, wire)
    engine.start("one")
    engine.text("the first answer")
    engine.complete()
    subscribe(plane, wire, f"conversation/{session_id}")  # a snapshot whose window holds the turn's rows
    call(plane, "v4/command", bridge.envelope(bridge.send_text(session_id, "two"), command_id="c2",
                                              client_id="bridge", issued_at=1), wire)
    engine.start("two")
    engine.text("the second answer")
    engine.complete()
    data = b"\0" * CHUNK
    begin = {"connectionId": "bridge", "uploadId": "u1", "sessionId": session_id, "fileName": "a.png",
             "mime": "image/png", "totalBytes": CHUNK, "totalChunks": 1,
             "checksum": "sha256:" + hashlib.sha256(data).hexdigest()}
    call(plane, "v4/attachment/begin", begin, wire)
    call(plane, "v4/attachment/chunk", {"connectionId": "bridge", "uploadId": "u1", "sessionId": session_id,
                                        "chunkIndex": 0, "dataBase64": base64.b64encode(data).decode()}, wire)
    return wire.conversation


def notifications(frames: Frames, topic_kind: str, payload_kind: str | None = None) -> list[dict[str, Any]]:
    found = []
    for _, message in frames:
        params = message.get("params") if message.get("method") == "v4/conversation/frame" else None
        if params is None or not str(params.get("topic")).startswith(topic_kind + "/"):
            continue
        inner = params.get("frame")
        if payload_kind is None or (isinstance(inner, dict) and inner["payload"]["kind"] == payload_kind):
            found.append(params)
    return found


def rows_of(params: dict[str, Any]) -> list[dict[str, Any]]:
    payload = params["frame"]["payload"]
    if payload["kind"] == "snapshot":
        return list(payload["snapshot"]["rows"]["window"])
    return [op["row"] for op in payload["deltas"] if op["op"] in ("row.appended", "row.upserted")]


def first_row(frames: Frames, kind: str, op: str | None = None) -> dict[str, Any]:
    for params in notifications(frames, "conversation"):
        payload = params["frame"]["payload"]
        if op is None and payload["kind"] == "snapshot":
            rows = payload["snapshot"]["rows"]["window"]
        elif op is not None and payload["kind"] == "deltas":
            rows = [d["row"] for d in payload["deltas"] if d["op"] == op]
        else:
            continue
        for row in rows:
            if row["kind"] == kind:
                return dict(row)  # (the caller's copy is a deep one)
    raise AssertionError(f"no {kind} row {op or 'in a snapshot'} in the recording")


def breaking(mutate: Callable[[Frames], None]) -> Frames:
    frames = copy.deepcopy(RECORDED)
    mutate(frames)
    return frames


def in_place(frames: Frames, kind: str, op: str | None, change: Callable[[dict[str, Any]], None]) -> None:
    target = first_row(RECORDED, kind, op)
    for params in notifications(frames, "conversation"):
        for row in rows_of(params):
            if row == target:
                change(row)
                return
    raise AssertionError("the row is not in the copy")


def side_topic(frames: Frames, topic_kind: str, payload_kind: str, change: Callable[[dict[str, Any]], None]) -> None:
    change(notifications(frames, topic_kind, payload_kind)[0]["frame"]["payload"])


def outer(frames: Frames, key: str, value: str) -> None:
    notifications(frames, "conversation", "deltas")[0][key] = value
    notifications(frames, "conversation", "deltas")[0]["frame"][key] = notifications(
        RECORDED, "conversation", "deltas")[0]["frame"][key]


def chunk_of(frames: Frames, size: int) -> None:
    chunk = next(m for _, m in frames if m.get("method") == "v4/attachment/chunk")
    chunk["params"]["dataBase64"] = base64.b64encode(b"\0" * size).decode()


RECORDED = recorded()

BREAKAGES: dict[str, tuple[Callable[[Frames], None], str]] = {
    "a snapshot row of no known kind": (
        lambda f: in_place(f, "assistantText", None, lambda row: row.update(kind="notice")), "kind"),
    "a snapshot row granting an action false": (
        lambda f: in_place(f, "userInput", None, lambda row: row.update(actions={"canEdit": False})), "actions"),
    "an appended row without its text": (
        lambda f: in_place(f, "userInput", "row.appended", lambda row: row.pop("text")), "text"),
    "an upserted row with a state of no kind": (
        lambda f: in_place(f, "assistantText", "row.upserted", lambda row: row.update(state="done")), "state"),
    "a sessions-index snapshot without its sessions": (
        lambda f: side_topic(f, "sessions-index", "snapshot", lambda p: p["snapshot"].pop("sessions")), "sessions"),
    "a sessions-index delta of no known op": (
        lambda f: side_topic(f, "sessions-index", "deltas", lambda p: p["deltas"].insert(0, {"op": "upsert"})),
        "deltas"),
    "a workspace-config snapshot without its slash commands": (
        lambda f: side_topic(f, "workspace-config", "snapshot", lambda p: p["snapshot"]["config"].pop("slashCommands")),
        "config"),
    "a workspace-config delta of no known op": (
        lambda f: side_topic(f, "workspace-config", "snapshot", lambda p: p.update(
            kind="deltas", deltas=[{"op": "config.replaced", "config": p["snapshot"]["config"]}])), "payload"),
    "another topic outside the frame than inside": (lambda f: outer(f, "topic", "conversation/sess_other"),
                                                    "frame.topic"),
    "another subscription outside the frame than inside": (lambda f: outer(f, "subscriptionId", "sub-other"),
                                                           "frame.subscriptionId"),
    "a chunk one byte over 512 KiB": (lambda f: chunk_of(f, CHUNK + 1), "dataBase64"),
}


def test_the_simulators_own_frames_pass() -> None:
    assert notifications(RECORDED, "sessions-index", "deltas"), "the recording has a sessions-index delta"
    findings = check_conversation(RECORDED, "cli016")
    assert not findings, "\n".join(str(f) for f in findings[:5])


@pytest.mark.parametrize("name", sorted(BREAKAGES))
def test_a_broken_frame_of_each_kind_is_refused(name: str) -> None:
    mutate, where = BREAKAGES[name]
    findings = check_conversation(breaking(mutate), "cli016")
    assert findings, f"{name}: passed the check"
    assert any(where in f.path or where in f.message for f in findings), "\n".join(str(f) for f in findings)


def test_a_fragment_at_or_past_its_count_is_refused() -> None:
    frames = recorded(fragment_bytes=700)
    fragments = [m["params"] for _, m in frames if m.get("method") == "v4/conversation/frame"
                 and m["params"]["kind"] == "fragment"]
    assert fragments and not check_conversation(frames, "cli016")
    fragments[0]["fragmentIndex"] = fragments[0]["fragmentCount"]
    assert any("is not below fragmentCount" in f.message for f in check_conversation(frames, "cli016"))

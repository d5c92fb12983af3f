"""actors/v4_sessions_index.py: ``session/list`` on the v4 path from a workspace's sessions-index topic."""

from __future__ import annotations

from typing import Any

from tests.actors.fakes import Probe
from zcode_acp.actors.messages import BackendLost, V4Frames
from zcode_acp.actors.v4_sessions_index import ListIndex, SessionsIndexWatch

CWD = "/fixture/workspace"
TOPIC = f"sessions-index/{CWD}"


def summary(session_id: str, title: str, at: int) -> dict[str, Any]:
    return {"sessionId": session_id, "workspaceId": CWD, "title": title, "phase": "completedSuccess",
            "sessionEnded": False, "hasBackgroundWork": False, "lastActivityAt": at, "createdAt": at}


def wire(ordinal: int, from_seq: int, to_seq: int, payload: dict[str, Any], sub: str = "idx-1") -> dict[str, Any]:
    frame = {"topic": TOPIC, "subscriptionId": sub, "sentAt": 0, "fromSeq": from_seq, "toSeq": to_seq,
             "payload": payload}
    return {"wireVersion": 3, "kind": "complete", "deliveryKind": "initial" if from_seq == 0 else "online",
            "logicalFrameId": f"lf-{ordinal}", "logicalFrameOrdinal": ordinal, "topic": TOPIC,
            "subscriptionId": sub, "frame": frame}


def snapshot(*sessions: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "snapshot", "snapshot": {"protocolVersion": 1, "workspaceId": CWD, "logEpoch": "e1",
                                             "sessions": list(sessions)}}


def answer(call: Any, result: Any, error: Any = None) -> None:
    """What the Backend does with a call's answer: the reply message, to whoever asked."""
    call.reply_to.tell(call.reply(result, error))


def listed(supervisor: Probe, count: int) -> list[Any]:
    return supervisor.wait_for(lambda: len(supervisor.of("Listed")) >= count and supervisor.of("Listed"))


def test_lists_wait_for_the_snapshot_then_follow_the_topic():
    backend, conn, supervisor = Probe(), Probe(), Probe()
    watch = SessionsIndexWatch.start(CWD, backend.ref)
    try:
        watch.tell(ListIndex(conn.ref, 1, supervisor.ref))
        watch.tell(ListIndex(conn.ref, 2, supervisor.ref))
        subscribe = backend.wait_call("v4/conversation/subscribe")
        assert subscribe.params["topic"] == TOPIC and len(backend.calls("v4/conversation/subscribe")) == 1
        [route] = backend.of("RegisterRoute")
        assert route.backend_session_id == TOPIC  # its frames are routed here by the topic's name
        answer(subscribe, {"ack": {"subscriptionId": "idx-1", "mode": "snapshot", "logEpoch": "e1"}})
        assert supervisor.of("Listed") == []  # the ack is not the state: the snapshot is
        watch.tell(V4Frames([wire(1, 0, 2, snapshot(summary("a", "Older", 1_000), summary("b", "Newer", 2_000)))]))
        first, second = listed(supervisor, 2)
        assert [first.request_id, second.request_id] == [1, 2]
        assert [s["sessionId"] for s in first.result["sessions"]] == ["b", "a"]  # newest activity first
        assert first.result["sessions"][0] == {"sessionId": "b", "workspace": {"workspacePath": CWD},
                                               "title": "Newer", "updatedAt": 2_000}
        watch.tell(V4Frames([wire(2, 2, 3, {"kind": "deltas", "deltas": [
            {"op": "session.upserted", "session": summary("a", "Renamed", 3_000)}]})]))
        watch.tell(ListIndex(conn.ref, 3, supervisor.ref))
        third = listed(supervisor, 3)[2]
        assert [(s["sessionId"], s["title"]) for s in third.result["sessions"]] == [("a", "Renamed"), ("b", "Newer")]
        assert len(backend.calls("v4/conversation/subscribe")) == 1  # one subscription serves every list
    finally:
        watch.stop()


def test_a_gap_asks_a_resync_and_a_new_backend_subscribes_again():
    backend, conn, supervisor = Probe(), Probe(), Probe()
    watch = SessionsIndexWatch.start(CWD, backend.ref)
    try:
        watch.tell(ListIndex(conn.ref, 1, supervisor.ref))
        answer(backend.wait_call("v4/conversation/subscribe"),
               {"ack": {"subscriptionId": "idx-1", "mode": "snapshot", "logEpoch": "e1"}})
        watch.tell(V4Frames([wire(1, 0, 2, snapshot(summary("a", "A", 1)))]))
        listed(supervisor, 1)
        watch.tell(V4Frames([wire(2, 5, 6, {"kind": "deltas", "deltas": []})]))  # seq 2 → 5: a gap
        resync = backend.wait_call("v4/conversation/resync")
        assert resync.params["topic"] == TOPIC and resync.params["subscriptionId"] == "idx-1"
        watch.tell(BackendLost("the backend exited"))
        watch.tell(ListIndex(conn.ref, 2, supervisor.ref))
        assert backend.wait_call("v4/conversation/subscribe", count=2).params["topic"] == TOPIC
    finally:
        watch.stop()


def test_a_refused_subscribe_fails_the_lists_that_waited():
    backend, conn, supervisor = Probe(), Probe(), Probe()
    watch = SessionsIndexWatch.start(CWD, backend.ref)
    try:
        watch.tell(ListIndex(conn.ref, 7, supervisor.ref))
        answer(backend.wait_call("v4/conversation/subscribe"), None, {"code": -32602, "message": "unknown topic"})
        reply = conn.wait_reply(7)
        assert reply.error["code"] == -32603 and "unknown topic" in reply.error["message"]
        assert supervisor.of("Listed") == []
    finally:
        watch.stop()

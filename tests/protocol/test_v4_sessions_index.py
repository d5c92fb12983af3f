"""protocol/v4/sessions_index_apply.py: the sessions-index topic through a subscription, and the ACP session list."""

from acp import schema

from zcode_acp.protocol.v4 import sessions_index_apply as si
from zcode_acp.protocol.v4.conversation_apply import NotModelled
from zcode_acp.protocol.v4.topic import Applied, ResyncNeeded, TopicSubscription
from zcode_acp.protocol.v4.wire import parse_wire

TOPIC = "sessions-index//fixture/workspace"


def summary(session_id, title, at, **extra):
    return {"sessionId": session_id, "workspaceId": "/fixture/workspace", "title": title, "phase": "completedSuccess",
            "sessionEnded": True, "hasBackgroundWork": False, "lastActivityAt": at, "createdAt": at, **extra}


class Index:
    def __init__(self):
        self.sub = TopicSubscription(TOPIC, si.SessionsIndexState())
        self.sub.subscribed({"subscriptionId": "idx-1", "mode": "snapshot", "logEpoch": "e1"})
        self.ordinal = 0

    def send(self, from_seq, to_seq, payload):
        self.ordinal += 1
        frame = {"topic": TOPIC, "subscriptionId": "idx-1", "sentAt": 0, "fromSeq": from_seq, "toSeq": to_seq, "payload": payload}
        wire = {"wireVersion": 3, "kind": "complete", "deliveryKind": "online", "logicalFrameId": f"lf-{self.ordinal}",
                "logicalFrameOrdinal": self.ordinal, "topic": TOPIC, "subscriptionId": "idx-1", "frame": frame}
        (outcome,) = self.sub.accept(parse_wire(wire), 0)
        return outcome


def test_snapshot_then_upserts_and_removals_keep_the_list():
    index = Index()
    snapshot = {"protocolVersion": 1, "workspaceId": "/fixture/workspace", "logEpoch": "e1",
                "sessions": [summary("a", "First", 1_000), summary("b", "Second", 2_000)]}
    assert isinstance(index.send(0, 4, {"kind": "snapshot", "snapshot": snapshot}), Applied)
    renamed = summary("a", "First, renamed", 3_000, titleSource="custom")
    outcome = index.send(4, 6, {"kind": "deltas", "deltas": [
        {"op": "session.upserted", "session": renamed}, {"op": "session.removed", "sessionId": "b"},
        {"op": "session.archived", "sessionId": "a"}]})
    assert isinstance(outcome, Applied)
    upserted, removed, unknown = outcome.changes
    assert upserted.previous["title"] == "First" and removed.previous["title"] == "Second"
    assert isinstance(unknown, NotModelled)
    infos = index.sub.applier.session_infos("/fixture/workspace")
    expected = {"sessionId": "a", "cwd": "/fixture/workspace", "title": "First, renamed", "updatedAt": "1970-01-01T00:00:03Z"}
    assert infos == [expected]
    for info in infos:
        schema.SessionInfo.model_validate(info)


def test_a_summary_without_an_id_fails_the_frame_whole():
    index = Index()
    index.send(0, 1, {"kind": "snapshot", "snapshot": {"sessions": [summary("a", "A", 1)]}})
    outcome = index.send(1, 2, {"kind": "deltas", "deltas": [{"op": "session.removed", "sessionId": "a"},
                                                              {"op": "session.upserted", "session": {"title": "?"}}]})
    assert isinstance(outcome, ResyncNeeded) and outcome.force_snapshot
    assert set(index.sub.applier.sessions) == {"a"}

"""A compaction as ``compaction_update`` for a client that declares ``session.compaction``
(protocol/compaction_updates.py), and nothing new for one that does not."""

from __future__ import annotations

from tests.process.harness import bridge, run


def compaction_updates(b, sid):
    return [f["params"]["update"] for f in b.frames if f.get("method") == "session/update"
            and f["params"]["sessionId"] == sid
            and f["params"]["update"]["sessionUpdate"].startswith("compaction_")]


@run
async def test_a_client_that_declares_compaction_sees_it_start_and_end(tmp_path):
    async with bridge(tmp_path) as b:
        # Raw: the Python SDK's capability model (schema 1.19) would drop session.compaction.
        await b.conn._conn.send_request("initialize", {"protocolVersion": 1, "clientCapabilities": {
            "session": {"compaction": {}}}})
        sid = await b.new_session()
        await b.prompt(sid, "#sim stream count=2")  # the engine compacts only a conversation with something in it
        await b.conn.ext_method("session/compact", {"sessionId": sid})
        shown = compaction_updates(b, sid)
        assert shown[0] == {"sessionUpdate": "compaction_update", "compactionId": shown[0]["compactionId"],
                            "status": "in_progress"}
        assert shown[-1]["sessionUpdate"] == "compaction_update" and shown[-1]["status"] == "completed"
        assert {update["compactionId"] for update in shown} == {shown[0]["compactionId"]}
        assert all(u["sessionUpdate"] == "compaction_summary_chunk" for u in shown[1:-1])


@run
async def test_other_clients_see_no_compaction_updates(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim stream count=2")
        await b.conn.ext_method("session/compact", {"sessionId": sid})
        assert compaction_updates(b, sid) == []

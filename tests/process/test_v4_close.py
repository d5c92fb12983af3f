"""A v4 session's subscriptions are ended when it is closed (issue 31), on the real bridge and the
today simulator: each topic unsubscribed, then the connection closed, before the legacy close, so
the engine stops publishing and may let the session go (v4-gateway.ts)."""

from __future__ import annotations

import pytest

from tests.process.harness import bridge, run

pytestmark = pytest.mark.dialects("cli016")
V4 = {"ZCODE_ACP_ENGINE_API": "v4"}


@run
async def test_session_close_unsubscribes_each_topic_and_closes_the_connection(tmp_path):
    async with bridge(tmp_path, env=V4) as b:
        sid = await b.new_session()
        assert (await b.prompt(sid, "#sim stream count=2")).stop_reason == "end_turn"
        [subscribed_conversation] = [c["params"] for c in b.backend_calls("v4/conversation/subscribe")
                                     if c["params"]["topic"].startswith("conversation/")]
        await b.conn.close_session(session_id=sid)
        await b.conn.list_sessions(cwd="/tmp")  # a call on the same pipe after them: its answer is the barrier
        calls = b.backend_calls()
        methods = [c["method"] for c in calls]
        unsubscribed = [c["params"] for c in calls if c["method"] == "v4/conversation/unsubscribe"]
        connection = subscribed_conversation["connectionId"]
        assert {u["topic"].split("/")[0] for u in unsubscribed} == {"conversation", "workspace-config"}
        assert all(u["connectionId"] == connection for u in unsubscribed)
        [flow] = [c["params"] for c in calls if c["method"] == "v4/connection/flow"]
        assert flow == {"connectionId": connection, "state": "closed"}
        assert methods.index("v4/connection/flow") < methods.index("session/close")

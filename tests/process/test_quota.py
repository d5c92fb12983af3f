"""The plan's quota in the editor, end to end: the real bridge, the simulator, a local fake of the
provider's quota endpoint (tests/quota_server.py) and a key kept as ``zcode-acp setup`` keeps it
(docs/quota.md)."""

from __future__ import annotations

import os

import pytest

from tests.process.harness import bridge, run
from tests.process.raw import RawBridge
from tests.quota_server import QuotaServer
from tests.schema import assert_valid_draft
from zcode_acp.config.coding_plan import key_path, save_plan_key

KEY = "plan-key-0123456789abcdef-SECRET"


def answer_at(percent: float) -> dict:
    return {"code": 200, "success": True, "data": {"level": "pro", "limits": [
        {"type": "TOKENS_LIMIT", "unit": 3, "number": 5, "percentage": percent, "nextResetTime": 4102444800000},
        {"type": "TOKENS_LIMIT", "unit": 6, "number": 1, "percentage": 12, "nextResetTime": 4102444800000}]}}


@pytest.fixture
def plan(tmp_path):
    save_plan_key(key_path({}, tmp_path), "zai", KEY)  # HOME is tmp_path in the harness
    servers: list[QuotaServer] = []

    def serve(percent: float) -> dict[str, str]:
        servers.append(QuotaServer(body=answer_at(percent)))
        return {"ZCODE_ACP_QUOTA_URL": servers[-1].url}
    yield serve
    for server in servers:
        server.close()


@run
async def test_a_window_past_80_percent_is_told_after_the_turn_not_inside_it(tmp_path, plan):
    async with bridge(tmp_path, env=plan(85)) as b:
        session = await b.new_session(str(tmp_path))
        result = await b.prompt(session, "hello")
        assert result.stop_reason == "end_turn"
        await b.client.wait_for(lambda: "GLM Coding Plan" in b.client.texts(session))
        chunks = b.client.of_kind(session, "agent_message_chunk")
        notice = [c for c in chunks if "GLM Coding Plan" in c["content"]["text"]]
        assert len(notice) == 1 and notice[0]["content"]["text"].startswith(
            "GLM Coding Plan: 5-hour window: 85% used, resets at ")
        assert notice[0]["content"]["text"].endswith("\n\n")  # the next text never glues to it
        assert notice[0]["messageId"] != chunks[0]["messageId"]  # its own message, not the answer's
        await b.prompt(session, "again")
        assert len([c for c in b.client.of_kind(session, "agent_message_chunk")
                    if "GLM Coding Plan" in c["content"]["text"]]) == 1  # told once
    assert KEY not in (tmp_path / "bridge.log").read_text()


@run
async def test_below_80_percent_nothing_is_said(tmp_path, plan):
    async with bridge(tmp_path, env=plan(40)) as b:
        session = await b.new_session(str(tmp_path))
        await b.prompt(session, "hello")
        await b.prompt(session, "again")
        assert "GLM Coding Plan" not in b.client.texts(session)


def is_quota_update(frame: dict) -> bool:
    return frame.get("method") == "session/update" and frame["params"]["update"]["sessionUpdate"] == "quota_update"


@pytest.mark.dialects("classic")
def test_a_client_declaring_session_quota_reads_and_receives_the_rfd_snapshot(tmp_path, plan):
    env = {"HOME": str(tmp_path), **plan(96)}
    env.pop("XDG_CONFIG_HOME", None)
    peer = RawBridge(tmp_path, {**{k: v for k, v in os.environ.items() if k != "XDG_CONFIG_HOME"}, **env})
    try:
        peer.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": 1, "clientCapabilities": {"session": {"quota": {}}}}})
        init = peer.until(lambda f: f.get("id") == 1)
        assert init["result"]["agentCapabilities"]["quota"] == {}
        peer.send({"jsonrpc": "2.0", "id": 2, "method": "quota/read", "params": {}})
        read = peer.until(lambda f: f.get("id") == 2, timeout=20)
        assert_valid_draft("QuotaSnapshot", read["result"])
        meters = read["result"]["pools"][0]["meters"]
        assert [(m["id"], m["usedPercent"], m["status"]) for m in meters] == [
            ("five_hour", 96.0, "warning"), ("weekly", 12.0, "ok")]
        peer.send({"jsonrpc": "2.0", "id": 3, "method": "session/new",
                   "params": {"cwd": str(tmp_path), "mcpServers": []}})
        session = peer.until(lambda f: f.get("id") == 3)["result"]["sessionId"]
        peer.send({"jsonrpc": "2.0", "id": 4, "method": "session/prompt",
                   "params": {"sessionId": session, "prompt": [{"type": "text", "text": "hello"}]}})
        seen: list[dict] = []

        def answered_and_updated(frame: dict) -> bool:
            seen.append(frame)
            return any(f.get("id") == 4 for f in seen) and any(is_quota_update(f) for f in seen)
        peer.until(answered_and_updated, timeout=30)  # after the turn's end, in either order
        [update] = [f["params"]["update"] for f in seen if is_quota_update(f)]
        assert_valid_draft("QuotaUpdate", update)
        assert update["pools"][0]["meters"][0]["usedPercent"] == 96.0
        peer.send({"jsonrpc": "2.0", "id": 5, "method": "quota/read", "params": {"sessionId": 7}})
        refused = peer.until(lambda f: f.get("id") == 5)
        assert refused["error"]["code"] == -32602
    finally:
        peer.close()

"""A client that loads a session while a turn streams gets everything so far, then the rest live,
in order, once each, whatever the engine's history holds of that turn yet (issue 20)."""

from __future__ import annotations

import asyncio

from tests.process.harness import bridge, run
from tests.process.remote import REMOTE_ENV, RemoteClient, remote_url
from tests.process.test_remote import NO_FORMS

SLOW = "#sim slow count=40 interval=0.05 stamp=1"  # each chunk unique (its time), two seconds in all


async def load(b, sid: str) -> RemoteClient:
    phone = await RemoteClient.connect(await remote_url(b.log))
    await phone.initialize(NO_FORMS)
    loaded = await phone.request("session/load", {"sessionId": sid, "cwd": "/tmp", "mcpServers": []})
    assert "result" in loaded, loaded
    return phone


def chunks(updates: list[dict], kind: str) -> list[str]:
    return [u["content"]["text"] for u in updates if u["sessionUpdate"] == kind]


@run
async def test_loading_mid_turn_gets_the_whole_turn_once_in_order(tmp_path):
    async with bridge(tmp_path, env=REMOTE_ENV) as b:
        sid = await b.new_session()
        assert (await b.prompt(sid, "#sim stream count=3 text=before-")).stop_reason == "end_turn"
        streaming = asyncio.ensure_future(b.prompt(sid, SLOW))
        await b.client.wait_for(lambda: len(b.client.of_kind(sid, "agent_message_chunk")) >= 10)
        first = await load(b, sid)  # a phone reconnecting mid-turn
        await b.client.wait_for(lambda: len(b.client.of_kind(sid, "agent_message_chunk")) >= 25)
        second = await load(b, sid)  # and a second client, later in the same turn
        assert (await streaming).stop_reason == "end_turn"
        editor = b.client.texts(sid)
        for phone in (first, second):
            await phone.wait_for(lambda phone=phone: len(phone.texts(sid)) >= len(editor))
            seen = phone.updates[sid]
            # Every chunk the editor saw (each is unique: its time), once each and in order: the earlier
            # turn from the history (one chunk there), this one from what the bridge sent, whether or
            # not the engine's history had it yet.
            assert phone.texts(sid) == editor
            assert chunks(seen, "user_message_chunk") == ["#sim stream count=3 text=before-", SLOW]
            await phone.close()

"""A stuck store lock (another bridge stopped while holding it) never freezes this bridge."""

import fcntl
import os

from tests.process.harness import bridge, file_contains, run


@run
async def test_a_held_store_lock_delays_the_write_but_never_the_bridge(tmp_path):
    folder = tmp_path / "zcode-home" / "v2"
    folder.mkdir(parents=True)
    lock = os.open(folder / "acp-lazy-sessions.json.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)  # held, as by a SIGSTOPped bridge on the same ZCODE_HOME
    try:
        async with bridge(tmp_path) as b:
            sid = await b.new_session()  # answered from memory
            response = await b.prompt(sid, "#sim stream count=50")
            assert response.stop_reason == "end_turn"
            assert b.client.texts(sid)
            await b.conn.cancel(session_id=sid)  # notifications and requests still flow
            assert (await b.prompt(sid, "#sim stream count=2")).stop_reason == "end_turn"
            fcntl.flock(lock, fcntl.LOCK_UN)  # the other bridge goes on: the write lands
            stored = await file_contains(folder / "acp-lazy-sessions.json", sid, timeout=15)
            assert sid in stored
    finally:
        os.close(lock)

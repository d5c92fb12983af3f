"""Cancel, then prompt at once, as Zed does: the cancelled prompt is answered ``cancelled`` before
anything of the next one, and nothing of the stopped turn follows that answer (issue 31)."""

from __future__ import annotations

import asyncio

from zcode_acp.protocol.i18n import t
from tests.process.harness import RecordingClient, bridge, pick, run
from tests.process.test_engine_cli016 import LONG
from tests.process.test_remote import NO_FORMS

NEW = "#sim stream count=3 text=new"


def order(b, first_id) -> tuple[int, list[str], list[str]]:
    """Where the first prompt's answer is among the frames; the texts streamed before and after it."""
    answer = next(i for i, f in enumerate(b.frames) if f.get("id") == first_id and "result" in f)
    def texts(frames):
        return [f["params"]["update"]["content"]["text"] for f in frames
                if f.get("method") == "session/update"
                and f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"]
    return answer, texts(b.frames[:answer]), texts(b.frames[answer + 1:])


def without_stopping_notice(texts: list[str]) -> str:
    """What was streamed, less the notice a prompt that waits for a stopped turn may get: it is
    told only when that turn outlives the cancel's grace (a loaded machine)."""
    notice = t("en", "notice.stopping")
    return "".join(text for text in texts if text.strip() != notice.strip())


def prompt_ids(b) -> list:
    return [i for i, method in b.methods.items() if method == "session/prompt"]


@run
async def test_a_prompt_sent_right_after_a_cancel_starts_after_the_cancelled_answer(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        first = asyncio.ensure_future(b.prompt(sid, LONG))
        await b.client.wait_for(lambda: "old" in b.client.texts(sid))
        await b.conn.cancel(session_id=sid)
        second = asyncio.ensure_future(b.prompt(sid, NEW))  # not waiting for the first's answer
        assert (await first).stop_reason == "cancelled"
        assert (await second).stop_reason == "end_turn"
        _, before, after = order(b, prompt_ids(b)[0])
        assert not any("new" in text for text in before), before[-6:]  # nothing of the next answer under the cancelled one
        assert without_stopping_notice(after) == "new" * 3  # and nothing of the stopped turn, no "Queued" notice, after it


@run
async def test_a_cancel_during_a_permission_dialog_streams_no_deny_text_after_the_answer(tmp_path):
    client = RecordingClient()
    opened = asyncio.Event()
    dialog: asyncio.Future = asyncio.get_running_loop().create_future()

    async def answered_when_cancelled(session_id, params):
        opened.set()
        return await dialog

    client.on_permission = answered_when_cancelled
    async with bridge(tmp_path, NO_FORMS, client=client) as b:
        sid = await b.new_session()
        first = asyncio.ensure_future(b.prompt(sid, "#sim permission"))
        await asyncio.wait_for(opened.wait(), 30)
        await b.conn.cancel(session_id=sid)
        # As ACP asks of a client (and Zed does): every open dialog of the session answered `cancelled`.
        dialog.set_result(pick(None))
        second = asyncio.ensure_future(b.prompt(sid, NEW))
        assert (await first).stop_reason == "cancelled"
        assert (await second).stop_reason == "end_turn"
        _, before, after = order(b, prompt_ids(b)[0])
        assert without_stopping_notice(after) == "new" * 3, after
        # The engine's deny text is the stopped turn's own, not the user's doing: never streamed.
        assert "Permission denied" not in "".join(before + after), before

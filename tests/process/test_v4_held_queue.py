"""A failed turn with prompts queued behind it, on the v4 path (docs/v4.md, "The held queue").

The engine then holds its queue (``autoDrain: false``, ``pauseReason: error``, routing
``choice``); the bridge resumes it (``setAutoDrain true``), so each queued prompt runs and is
answered at its own turn's end. (A prompt sent while the routing is ``choice`` carries
``heldQueueDisposition``: tests/actors/test_session_v4.py, where the moment can be held.)
"""

from __future__ import annotations

import asyncio
import json

import pytest
from acp import RequestError

from tests.process.harness import allow_first, bridge, run
from tests.process.test_v4_path import queue_once_listed

pytestmark = pytest.mark.dialects("cli016")
# A turn that asks a permission (the test holds the answer until a prompt is queued), then fails.
ASK_THEN_FAIL = {"scenarios": {"ask_then_fail": [
    {"type": "permission"}, {"type": "fail", "code": "internal_error", "message": "the model gave up"}]}}


def v4_env(tmp_path) -> dict[str, str]:
    scenarios = tmp_path / "scenarios.json"
    scenarios.write_text(json.dumps(ASK_THEN_FAIL))
    return {"ZCODE_ACP_ENGINE_API": "v4", "ZCODE_SIM_SCENARIOS": str(scenarios)}


def commands(b) -> list[dict]:
    return [c["params"] for c in b.backend_calls("v4/command")]


@run
async def test_a_prompt_queued_behind_a_failed_turn_runs_and_is_answered(tmp_path):
    gate: asyncio.Future = asyncio.get_running_loop().create_future()
    async with bridge(tmp_path, env=v4_env(tmp_path)) as b:
        b.client.on_permission = lambda sid, params: gate
        sid = await b.new_session()
        failing = asyncio.ensure_future(b.prompt(sid, "#sim ask_then_fail"))
        await b.client.wait_for(lambda: b.client.dialogs_of("session/request_permission"))
        queued = asyncio.ensure_future(b.prompt(sid, "#sim stream count=2 text=after"))
        assert (await queue_once_listed(b, sid))["items"]  # it waits in the engine's queue
        gate.set_result(allow_first(sid, b.client.dialogs_of("session/request_permission")[0]))
        with pytest.raises(RequestError):
            await failing
        response = await asyncio.wait_for(queued, 15)
        assert response.stop_reason == "end_turn"
        assert b.client.texts(sid).endswith("afterafter")
        resumes = [c for c in commands(b) if c["type"] == "setAutoDrain"]
        assert [c["payload"] for c in resumes] == [{"autoDrain": True}]
        assert isinstance(resumes[0].get("baseRevision"), int)  # decided against the queue it saw (CAS)
        # and the session goes on
        assert (await b.prompt(sid, "#sim stream count=1 text=next")).stop_reason == "end_turn"

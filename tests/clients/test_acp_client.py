"""acp-client 0.1.0 (PyPI), a real ACP client, against the bridge on the three engines (docs/clients.md).

It is one pure-Python file with no dependencies, so it runs in CI from the ``test`` extra. Its
``Agent`` starts the bridge as a child with this process's environment, one session per ``Agent``;
it offers no files and no terminal, asks a handler about each permission (none: it refuses), sends
``session/cancel`` when a wait is cancelled, and carries a session on with ``session/load``.
"""

from __future__ import annotations

import asyncio
import sys

import pytest

from tests.process.harness import SIM, TIMEOUT

acp_client = pytest.importorskip("acp_client", reason="acp-client is not installed: pip install -e '.[test]'")

DIALECTS = {"classic": {"ZCODE_SIM_DIALECT": "classic"}, "cli016": {"ZCODE_SIM_DIALECT": "cli016"},
            "cli016-v4": {"ZCODE_SIM_DIALECT": "cli016", "ZCODE_ACP_ENGINE_API": "v4"}}


@pytest.fixture(params=list(DIALECTS))
def dialect(request, monkeypatch, tmp_path):
    for name in ("ZCODE_ACP_ENGINE_API", "ZCODE_ACP_MODE", "ZCODE_ACP_TRACE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ZCODE_BIN", SIM)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ZCODE_HOME", str(tmp_path / "zcode-home"))
    monkeypatch.setenv("ZCODE_SIM_DATA", str(tmp_path / "sim-data"))
    for name, value in DIALECTS[request.param].items():
        monkeypatch.setenv(name, value)
    return request.param


def agent(tmp_path, **kwargs):
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return acp_client.Agent([sys.executable, "-m", "zcode_acp"], project, **kwargs)


async def allow(request: dict) -> str:
    return next(option["optionId"] for option in request["options"] if option["kind"].startswith("allow"))


def test_a_streamed_prompt_a_permission_and_a_reopened_session(dialect, tmp_path):
    async def scenario():
        first = agent(tmp_path, permission=allow)
        growing: list[str] = []
        text = await asyncio.wait_for(first.ask("#sim stream count=5 text=ab", on_text=growing.append), TIMEOUT)
        assert text == "ab" * 5 and growing[-1] == text and len(growing) == 5
        text = await asyncio.wait_for(first.ask("#sim permission"), TIMEOUT)
        assert "Permission granted" in text
        session = first.session
        await first.stop()

        refusing = agent(tmp_path)  # no handler: acp-client turns the permission down
        assert "Permission denied" in await asyncio.wait_for(refusing.ask("#sim permission"), TIMEOUT)
        await refusing.stop()

        replay: list[dict] = []
        again = agent(tmp_path, session=session)
        await asyncio.wait_for(again.start(on_update=replay.append), TIMEOUT)
        assert again.session == session  # loaded, not a new one
        asked = "".join(update["content"]["text"] for update in replay
                        if update.get("sessionUpdate") == "user_message_chunk")
        assert "#sim stream count=5 text=ab" in asked and "#sim permission" in asked
        assert "hello again" in await asyncio.wait_for(again.ask("hello again"), TIMEOUT)
        await again.stop()

    asyncio.run(scenario())


def test_cancel_then_ask_at_once(dialect, tmp_path):
    """On cli016-v4 the next ask was told "Queued" (tests/process/test_real_client_cancel.py)."""

    async def scenario():
        client = agent(tmp_path)
        streaming = asyncio.Event()
        turn = asyncio.ensure_future(client.ask("#sim slow count=400 interval=0.05 text=s",
                                                on_text=lambda _text: streaming.set()))
        await asyncio.wait_for(streaming.wait(), TIMEOUT)
        turn.cancel()  # acp-client sends session/cancel, and the next ask goes out at once
        with pytest.raises(asyncio.CancelledError):
            await turn
        text = await asyncio.wait_for(client.ask("hello after cancel"), TIMEOUT)
        await client.stop()
        assert text.startswith("Hello!") and "hello after cancel" in text, text

    asyncio.run(scenario())

"""acp-client 0.1.0 (PyPI) against the bridge: docs/clients.md, not part of the suite.

Run from a project folder with acp-client's own Python: ``python drive_acp_client.py DIALECT``.
Each line says what was tried and whether it worked.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from acp_client import Agent  # type: ignore[import-not-found]

HERE = Path(__file__).resolve().parent


def show(step: str, ok: bool, detail: str = "") -> None:
    print(f"{step}: {'works' if ok else 'FAILS'} {detail}"[:300], flush=True)


async def main(dialect: str) -> None:
    command, cwd = [str(HERE / f"agent-{dialect}.sh")], Path.cwd()

    async def allow(request: dict) -> str:
        return next(option["optionId"] for option in request["options"] if option["kind"].startswith("allow"))

    agent = Agent(command, cwd, permission=allow)
    growing: list[str] = []
    text = await asyncio.wait_for(agent.ask("#sim stream count=5 text=ab", on_text=growing.append), 60)
    show("prompt+stream", text == "ab" * 5 and len(growing) == 5, f"{text[:40]!r} in {len(growing)} pieces")
    text = await asyncio.wait_for(agent.ask("#sim permission"), 60)
    show("permission allow", "granted" in text, repr(text))
    refusing = Agent(command, cwd)  # no handler: acp-client turns every permission down
    text = await asyncio.wait_for(refusing.ask("#sim permission"), 60)
    show("permission refused", "denied" in text.lower(), repr(text[:80]))
    await refusing.stop()
    turn = asyncio.ensure_future(agent.ask("#sim hang"))
    await asyncio.sleep(1.0)  # a person's pause before pressing stop
    turn.cancel()
    try:
        await turn
    except asyncio.CancelledError:
        pass
    text = await asyncio.wait_for(agent.ask("hello after cancel"), 60)
    show("cancel then prompt", text.startswith("Hello!"), repr(text[:60]))
    session = agent.session
    await agent.stop()
    replay: list[dict] = []
    again = Agent(command, cwd, session=session)
    await asyncio.wait_for(again.start(on_update=replay.append), 60)
    kinds = sorted({update.get("sessionUpdate") for update in replay})
    show("load (carry on)", again.session == session and "user_message_chunk" in kinds, f"{len(replay)} updates {kinds}")
    text = await asyncio.wait_for(again.ask("hello again"), 60)
    show("prompt after load", "hello again" in text, repr(text[:50]))
    await again.stop()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))

"""One remote client floods the bridge (pings, notifications, endless fragments) while the editor
prompts over stdio: the editor's prompts are answered while the flood goes on, and the flooder is
read at its budget, not as fast as it can write (issue 20). Each flood is bounded in frames and
time; the editor's answer times are printed (docs/security.md has the figures)."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.process.harness import bridge, run
from tests.process.remote import REMOTE_ENV, TOKEN, remote_url

PROMPTS = 5
MAX_FRAMES = 3_000_000  # the flood's bound in count (the editor's prompts bound it in time)


def frame(opcode: int, payload: bytes = b"", fin: bool = True) -> bytes:
    """A client frame (masked, as RFC 6455 requires; the zero key leaves the payload as is)."""
    assert len(payload) < 126
    return bytes([(0x80 if fin else 0) | opcode, 0x80 | len(payload)]) + b"\0\0\0\0" + payload


NOTIFICATION = b'{"jsonrpc":"2.0","method":"flood/x"}'
FLOODS = {
    "pings": (b"", frame(0x9)),
    "notifications": (b"", frame(0x1, NOTIFICATION)),
    # One message that never ends: a first fragment, then one-byte continuations.
    "fragments": (frame(0x1, b'{"jsonrpc":"2.0","method":"x","params":"', fin=False), frame(0x0, b"a", fin=False)),
}


async def open_flooder(url: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    host, port = url.removeprefix("ws://").split("/")[0].split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write((f"GET /acp HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                  "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                  f"Authorization: Bearer {TOKEN}\r\n\r\n").encode())
    answer = await reader.readuntil(b"\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 101 "), answer
    return reader, writer


async def flood(writer: asyncio.StreamWriter, first: bytes, unit: bytes, sent: list[int]) -> None:
    """Write ``unit`` frames in 64 KiB batches until cancelled or the bound; ``sent[0]`` counts them."""
    writer.write(first)
    batch = unit * (65536 // len(unit))
    per_batch = 65536 // len(unit)
    try:
        while sent[0] < MAX_FRAMES:
            writer.write(batch)
            await writer.drain()  # the bridge reading slowly parks us here, which is the point
            sent[0] += per_batch
    except (ConnectionError, OSError):
        pass  # dropped (a pinger that never reads its pongs overflows its buffer): also fine


@pytest.mark.parametrize("kind", FLOODS)
@run
async def test_a_flooding_client_never_stalls_the_editor(tmp_path, kind):
    first, unit = FLOODS[kind]
    async with bridge(tmp_path, env=REMOTE_ENV) as b:
        url = await remote_url(b.log)
        sid = await b.new_session()
        assert (await b.prompt(sid, "#sim stream count=1")).stop_reason == "end_turn"  # warm
        reader, writer = await open_flooder(url)
        sent = [0]
        flooding = asyncio.ensure_future(flood(writer, first, unit, sent))
        await asyncio.sleep(0)  # the flood is under way before the first prompt
        took = []
        for n in range(PROMPTS):
            started = time.monotonic()
            assert (await b.prompt(sid, f"#sim stream count=2 text=e{n}-")).stop_reason == "end_turn"
            took.append(time.monotonic() - started)
        # Answered while the flooder still writes: it was never allowed to hold the bridge.
        still_flooding = not flooding.done()
        flooding.cancel()
        writer.transport.abort()  # not a drain: the bridge reads this peer at its budget
        print(f"{kind}: editor answers {', '.join(f'{t * 1000:.0f}' for t in took)} ms "
              f"(max {max(took) * 1000:.0f} ms) during a flood of {sent[0]} frames written; bridge rss "
              f"{rss_kib(b.proc.pid)} KiB")
        assert still_flooding and sent[0] < MAX_FRAMES
        # And the bridge still serves the editor once the flood is gone.
        assert (await b.prompt(sid, "#sim stream count=1")).stop_reason == "end_turn"


def rss_kib(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1



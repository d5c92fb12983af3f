"""How fast the hub relays: a real hub process, the tests' fake bridge echoing
text frames, and one client through the proxy (vs. the same client direct).

    python -m bench.hub_proxy [messages] [bytes-per-message]

Prints messages/s and MB/s for the direct and the proxied path, and the hub's
peak RSS.
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from tests.hub.harness import TOKEN, FakeBridge, HubProcess  # noqa: E402
from zcode_acp.net import websocket_handshake as handshake  # noqa: E402


def stream(url: str, count: int, size: int) -> float:
    """Seconds to receive ``count`` echoes of a ``size``-byte frame, pipelined."""
    client = handshake.connect(url, [("Authorization", f"Bearer {TOKEN}")]).start()
    frame = "x" * size  # not JSON: the fake bridge echoes it unchanged
    started = time.perf_counter()
    window = 64
    sent = received = 0
    while received < count:
        while sent < count and sent - received < window:
            client.send_text(frame)
            sent += 1
        assert client.receive(30) is not None
        received += 1
    elapsed = time.perf_counter() - started
    client.close()
    return elapsed


def peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    with tempfile.TemporaryDirectory() as tmp:
        hub = HubProcess(Path(tmp), ZCODE_ACP_HUB_IDLE_EXIT="600")
        bridge = FakeBridge(Path(tmp), hub.port, "--id", "bench")
        hub.wait_line(r"instance bench registered")
        try:
            for label, url in (("direct ", f"ws://127.0.0.1:{bridge.port}/acp"),
                               ("proxied", f"ws://127.0.0.1:{hub.port}/acp?instance=bench")):
                seconds = stream(url, count, size)
                print(f"{label}: {count / seconds:9.0f} msg/s  "
                      f"{count * size / seconds / 1e6:6.1f} MB/s  ({count} x {size} B echoed)")
            print(f"hub peak RSS: {peak_rss_kib(hub.proc.pid) / 1024:.1f} MiB")
        finally:
            bridge.stop()
            hub.stop()


if __name__ == "__main__":
    main()

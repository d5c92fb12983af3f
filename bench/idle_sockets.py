"""Remote access while idle sockets without a token are held (issue 29): a real hub process, and
a bridge's remote endpoint, each with ``count`` connections that never send a byte; then
authenticated requests, timed.

    python -m bench.idle_sockets [count] [requests]

Prints, for the hub (``GET /api/instances`` and a registration, with the token) and for the
bridge's endpoint (the hub's owner check and a WebSocket upgrade with the token): how many
succeeded and their median and worst time. Before issue 29, ~530 idle sockets gave every
request 503 (hub) or 502 (through a bridge).
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import resource  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import websocket as wsclient  # noqa: E402

from tests.hub.harness import TOKEN, HubProcess, http  # noqa: E402
from zcode_acp.actors.transport.remote import RemoteEndpoint  # noqa: E402
from zcode_acp.hub.ownership import port_proves_owner  # noqa: E402


def raise_descriptor_limit(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(needed, hard), hard))


def hold_idle(port: int, count: int) -> list[socket.socket]:
    return [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(count)]


def timed(what: str, attempt: Callable[[], bool], requests: int) -> tuple[int, float, float]:
    took, ok = [], 0
    for _ in range(requests):
        started = time.perf_counter()
        try:
            ok += bool(attempt())
        except (OSError, wsclient.WebSocketException):
            pass
        took.append(time.perf_counter() - started)
    median, worst = statistics.median(took) * 1000, max(took) * 1000
    print(f"{what}: {ok}/{requests} succeeded, median {median:.1f} ms, worst {worst:.1f} ms")
    return ok, median, worst


def measure_hub(count: int, requests: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        hub = HubProcess(Path(tmp))
        try:
            idle = hold_idle(hub.port, count)
            print(f"hub: {len(idle)} idle sockets held")
            timed("hub GET /api/instances with the token",
                  lambda: http("GET", f"{hub.url}/api/instances")[0] == 200, requests)
            timed("hub heartbeat (POST /api/register)",
                  lambda: http("POST", f"{hub.url}/api/register",
                               {"id": "bench", "port": 9, "pid": 1, "key": "k" * 32})[0] == 200,
                  requests)
            for sock in idle:
                sock.close()
        finally:
            hub.stop()


class Attached:
    """The supervisor's stand-in: starts each accepted client, and drops what it sends."""

    def tell(self, message: object) -> None:
        transport = getattr(message, "transport", None)
        if transport is not None:
            transport.start(self)


def measure_bridge(count: int, requests: int) -> None:
    endpoint = RemoteEndpoint(Attached(), TOKEN, 0).start()
    endpoint.instance_id = "bench-bridge"
    try:
        idle = hold_idle(endpoint.port, count)
        print(f"bridge endpoint: {len(idle)} idle sockets held")
        timed("bridge owner check (what the hub runs before it proxies)",
              lambda: port_proves_owner(endpoint.port, TOKEN, endpoint.instance_id), requests)

        def upgrade() -> bool:
            client = wsclient.create_connection(f"ws://127.0.0.1:{endpoint.port}/acp", timeout=5,
                                                header=[f"Authorization: Bearer {TOKEN}"])
            client.close()
            return True

        timed("bridge WebSocket upgrade with the token", upgrade, requests)
        for sock in idle:
            sock.close()
    finally:
        endpoint.close()


def main(argv: list[str]) -> int:
    count = int(argv[0]) if argv else 1000
    requests = int(argv[1]) if len(argv) > 1 else 20
    raise_descriptor_limit(count + 256)
    measure_hub(count, requests)
    measure_bridge(count, requests)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

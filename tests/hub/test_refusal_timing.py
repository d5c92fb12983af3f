"""The hub's refusal to proxy to a registered port must not tell whether that port is open
(issue 29: 0.01 s for a closed port, 3.00 s for an open one that does not answer). A refusal
now always takes the owner check's whole timeout (short here, to keep the test bounded)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import websocket as wsclient

from tests.hub.harness import TOKEN, http
from zcode_acp.hub.server import Hub, HubSettings

CHECK = 0.6  # the owner check's timeout in this test


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Hub]:
    running = Hub(HubSettings(token=TOKEN, port=0, web_root=tmp_path, idle_exit=None,
                              owner_check_timeout=CHECK)).start()
    yield running
    running.stop()


def refusal_seconds(hub: Hub, instance_id: str, port: int) -> float:
    status, _, body = http("POST", f"http://127.0.0.1:{hub.port}/api/register",
                           {"id": instance_id, "port": port, "pid": 1, "key": "k" * 32})
    assert status == 200, body
    started = time.monotonic()
    with pytest.raises(wsclient.WebSocketBadStatusException) as refused:
        wsclient.create_connection(f"ws://127.0.0.1:{hub.port}/acp?instance={instance_id}",
                                   timeout=10, header=[f"Authorization: Bearer {TOKEN}"])
    assert refused.value.status_code == 502
    return time.monotonic() - started


def test_a_refusal_takes_as_long_for_a_closed_port_as_for_an_open_one(hub: Hub) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()  # nothing listens there now
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts, never answers
    try:
        closed_took = refusal_seconds(hub, "closed-port", closed_port)
        silent_took = refusal_seconds(hub, "silent-port", silent.getsockname()[1])
    finally:
        silent.close()
    # Both at least the whole check (before: the closed port was refused at once).
    assert closed_took >= CHECK * 0.9 and silent_took >= CHECK * 0.9, (closed_took, silent_took)

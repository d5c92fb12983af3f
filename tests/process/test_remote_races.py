"""Races between the editor and remote clients, found by bench/adversarial_remote.py
and reduced here (docs/reliability.md, "The remote adversarial run").

The editor is a line-level peer on stdio (``tests/process/reliability.py``), the
remote clients ``websockets``' synchronous client, so each test orders its
frames exactly: a frame answered by the bridge is a barrier for what it sent
before (each actor's mailbox is first in, first out).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from websockets.sync.client import ClientConnection, connect

from tests.process.reliability import Peer, running
from tests.process.remote import REMOTE_ENV, TOKEN

TIMEOUT = 10.0


def remote_url(peer: Peer) -> str:
    deadline = time.monotonic() + TIMEOUT
    while not (match := re.search(r"remote ACP clients: (ws://\S+)", peer.log())):
        assert time.monotonic() < deadline, "the bridge did not log its remote address"
        time.sleep(0.02)
    return match.group(1)


@contextmanager
def attach(peer: Peer) -> Iterator[ClientConnection]:
    """A remote client, initialized."""
    with connect(remote_url(peer), max_size=None, additional_headers={"Authorization": f"Bearer {TOKEN}"}) as remote:
        remote.send(json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize",
                                "params": {"protocolVersion": 1, "clientCapabilities": {}}}))
        until(remote, lambda f: f.get("id") == "init")
        yield remote


def until(remote: ClientConnection, predicate: Any) -> dict[str, Any]:
    deadline = time.monotonic() + TIMEOUT
    while True:
        frame = json.loads(remote.recv(timeout=max(0.01, deadline - time.monotonic())))
        if predicate(frame):
            return frame


def is_dialog(frame: dict[str, Any]) -> bool:
    return frame.get("method") == "session/request_permission" and "id" in frame


def test_a_dialog_whose_last_asked_client_leaves_is_settled_not_left_hanging(tmp_path):
    """The editor cannot show a permission dialog (an error answer) and the only other
    client asked, a remote one, leaves without answering: the editor's prompt ended
    only on a cancel (the router dropped the departed client from the race and
    waited for an answer nobody could give any more). Now the dialog is declined
    as when every client fails it, and the prompt ends."""
    with running(tmp_path, env=REMOTE_ENV) as peer, attach(peer) as remote:
        sid = peer.new_session()
        peer.prompt("p", sid, "#sim permission")
        dialog = peer.until(is_dialog)
        until(remote, is_dialog)
        peer.send({"jsonrpc": "2.0", "id": dialog["id"], "error": {"code": -32603, "message": "cannot show it"}})
        # A barrier: an initialize declaring something new reaches the router (as a
        # ClientsChanged) after the error answer above, and before the remote leaves.
        assert "result" in peer.call("barrier", "initialize", {"protocolVersion": 1,
                                                               "clientCapabilities": {"_meta": {"x": True}}})
        remote.close()
        answer = peer.answer("p", timeout=TIMEOUT)
        assert answer.get("result", {}).get("stopReason") == "end_turn", answer


def test_a_client_that_loads_and_leaves_before_its_replay_never_joins_a_dialog(tmp_path):
    """A remote client loads a session with a dialog open and leaves before its replay is
    written. The Session then told the router that the client attached, and the router
    asked it (a client already gone): the dialog counted it as still able to answer, so
    when the editor could not show the dialog the prompt hung until a cancel. Now a
    departed client never joins a race."""
    with running(tmp_path, env=REMOTE_ENV) as peer:
        sid = peer.new_session()
        peer.prompt("p", sid, "#sim permission")
        dialog = peer.until(is_dialog)
        backend = peer.backend()
        with attach(peer) as remote:
            os.kill(backend, signal.SIGSTOP)  # the history read of the load below waits
            try:
                remote.send(json.dumps({"jsonrpc": "2.0", "id": "load", "method": "session/load",
                                        "params": {"sessionId": sid, "cwd": "/tmp", "mcpServers": []}}))
                remote.socket.shutdown(socket.SHUT_RDWR)  # gone at once, no close frame
                wait_for_log(peer, "a remote client left")
            finally:
                os.kill(backend, signal.SIGCONT)
        # A barrier: the editor's own load is answered after the remote's replay was released.
        assert "result" in peer.call("load", "session/load", {"sessionId": sid, "cwd": "/tmp", "mcpServers": []})
        peer.send({"jsonrpc": "2.0", "id": dialog["id"], "error": {"code": -32603, "message": "cannot show it"}})
        answer = peer.answer("p", timeout=TIMEOUT)
        assert answer.get("result", {}).get("stopReason") == "end_turn", answer


def wait_for_log(peer: Peer, needle: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while needle not in peer.log():
        assert time.monotonic() < deadline, f"the bridge never logged {needle!r}"
        time.sleep(0.02)

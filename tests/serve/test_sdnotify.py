"""The notify protocol's sender on its own: abstract and path sockets, the watchdog interval."""

from __future__ import annotations

import os
import socket
import uuid
from pathlib import Path

from zcode_acp.cli.sdnotify import Notifier


def test_an_abstract_socket_name_starts_with_at() -> None:
    name = f"zcode-acp-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as listener:
        listener.bind("\0" + name)
        listener.settimeout(5)
        notifier = Notifier({"NOTIFY_SOCKET": "@" + name})
        assert notifier.send("READY=1")
        assert listener.recv(64) == b"READY=1"


def test_without_notify_socket_nothing_is_sent_and_nothing_fails(tmp_path: Path) -> None:
    notifier = Notifier({})
    assert not notifier.enabled and not notifier.send("READY=1")
    gone = Notifier({"NOTIFY_SOCKET": str(tmp_path / "nobody-listens")})
    assert not gone.send("READY=1")  # logged, never raised


def test_watchdog_interval_is_half_of_watchdog_usec_and_only_for_this_process() -> None:
    assert Notifier({"NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "4000000"}).watchdog_interval == 2.0
    assert Notifier({"WATCHDOG_USEC": "4000000", "WATCHDOG_PID": str(os.getpid())}).watchdog_interval == 2.0
    assert Notifier({"WATCHDOG_USEC": "4000000", "WATCHDOG_PID": "1"}).watchdog_interval is None
    assert Notifier({"WATCHDOG_USEC": "0"}).watchdog_interval is None
    assert Notifier({}).watchdog_interval is None

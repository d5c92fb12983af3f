"""The systemd notify protocol, for ``zcode-acp serve`` under ``Type=notify`` (docs/service.md).

One datagram per state change to the AF_UNIX socket named by ``NOTIFY_SOCKET``
(a leading ``@`` names an abstract socket). Without that variable every call
is a no-op, so the same code runs outside systemd.
"""

from __future__ import annotations

import logging
import os
import socket

log = logging.getLogger(__name__)


class Notifier:
    def __init__(self, environ: dict[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        address = env.get("NOTIFY_SOCKET", "")
        self.address = "\0" + address[1:] if address.startswith("@") else address
        usec = env.get("WATCHDOG_USEC", "")
        pid = env.get("WATCHDOG_PID", "")
        # WATCHDOG_PID, when set, names the process the watchdog is meant for.
        mine = not pid or pid == str(os.getpid())
        self.watchdog_interval = int(usec) / 2e6 if usec.isdigit() and int(usec) > 0 and mine else None

    @property
    def enabled(self) -> bool:
        return bool(self.address)

    def send(self, state: str) -> bool:
        """Send ``state`` (``READY=1``, ``STOPPING=1``, ``WATCHDOG=1`` …); False when not sent."""
        if not self.address:
            return False
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
                sock.sendto(state.encode("utf-8"), self.address)
            return True
        except OSError as exc:
            log.warning("systemd notify (%s) failed: %s", state.split("=")[0], exc)
            return False

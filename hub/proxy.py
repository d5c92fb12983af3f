"""One remote client joined to one bridge: text frames relayed unchanged both ways.

Each leg is a ``WebSocket`` with its own keepalive and bounded buffer; when
either leg ends (close, missed pong, overflow, reset) the other is closed
with the same code (1001 when the code cannot be sent), so a pair is never
left half open. See docs/hub.md ("The proxy").
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from zcode_acp.net.websocket import CloseCode, CloseInfo, WebSocket

log = logging.getLogger(__name__)


class ProxyPair:
    def __init__(self, client: WebSocket, bridge: WebSocket, instance_id: str,
                 on_done: Callable[[ProxyPair], None]) -> None:
        self.client = client
        self.bridge = bridge
        self.instance_id = instance_id
        self._on_done = on_done
        self._ended = False

    def start(self) -> ProxyPair:
        self.bridge.start(on_message=self.client.send_text,
                          on_close=lambda info: self._leg_closed("bridge", self.client, info))
        self.client.start(on_message=self.bridge.send_text,
                          on_close=lambda info: self._leg_closed("client", self.bridge, info))
        return self

    def close(self, code: int = CloseCode.GOING_AWAY, reason: str = "hub stopping") -> None:
        self.client.close(code, reason)
        self.bridge.close(code, reason)

    def _leg_closed(self, leg: str, other: WebSocket, info: CloseInfo) -> None:
        log.info("hub: %s leg of instance %s closed (%d %s)", leg, self.instance_id, info.code,
                 info.reason)
        other.close(info.code, info.reason if info.code not in (1005, 1006) else f"{leg} left")
        if not self._ended:
            self._ended = True
            self._on_done(self)

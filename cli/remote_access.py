"""Remote access for a running bridge: the WebSocket endpoint and the hub registration.

Off unless ``ZCODE_ACP_REMOTE`` is on; never on without a token (one warning
naming ``ZCODE_ACP_REMOTE_TOKEN``, and stdio goes on unaffected). The hub is
started only when registration finds none and ``ZCODE_ACP_HUB_AUTOSTART`` is
not 0 (docs/remote.md).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import gevent

from zcode_acp.config.remote import RemoteConfig, load_remote_config
from zcode_acp.actors.messages import HubPageKnown, ListSessions

if TYPE_CHECKING:
    from zcode_acp.net.hub_client import HubClient, Origin
    from zcode_acp.actors.transport.remote import RemoteEndpoint

log = logging.getLogger(__name__)


SESSIONS_CHECK = 1.0  # seconds between looks at the session list (for the hub's listing)


@dataclass
class RemoteAccess:
    """The remote endpoint, its hub registration and the greenlet that watches it."""

    endpoint: RemoteEndpoint
    hub: HubClient | None
    watcher: gevent.Greenlet | None = None

    def stop(self) -> None:
        if self.watcher is not None:
            self.watcher.kill(block=False)
        if self.hub is not None:
            self.hub.stop(unregister=True, timeout=1.0)
        self.endpoint.close()


def start_remote(supervisor: Any, version: str, origin: Origin = "editor", workspace: str | None = None,
                 settings: RemoteConfig | None = None) -> RemoteAccess | None:
    settings = settings or load_remote_config()
    if not settings.enabled:
        return None
    if not settings.token:
        log.warning("ZCODE_ACP_REMOTE is on but no token is set: remote access stays off "
                    "(set ZCODE_ACP_REMOTE_TOKEN, or remote.token in the config file)")
        return None
    # Imported only now: the WebSocket stack (wsproto, h11) costs an editor's stdio bridge ~18 ms of
    # start-up, and remote access is off by default (docs/performance.md, "Start-up").
    from zcode_acp.net.hub_client import BridgeIdentity, HubClient
    from zcode_acp.actors.transport.remote import RemoteEndpoint

    endpoint = RemoteEndpoint(supervisor, settings.token, settings.bridge_port,
                              public_hosts=settings.public_hosts).start()

    def sessions() -> list[dict[str, Any]]:
        listed: list[dict[str, Any]] = supervisor.ask(ListSessions(), timeout=2.0)
        return listed

    identity = BridgeIdentity.new(endpoint.port, origin, workspace or os.getcwd(), version)
    endpoint.instance_id = identity.instance_id
    supervisor.tell(HubPageKnown(identity.instance_id))  # notifications link to the session on the page
    hub = HubClient(identity, sessions, token=lambda: load_remote_config(log_warnings=False).token or "",
                    hub_host=settings.hub_host, hub_port=settings.hub_port, autostart=settings.hub_autostart)
    hub.start()
    # Editor and serve alike: a new or finished session reaches the hub's listing at once.
    watcher = gevent.spawn(announce_session_changes, supervisor, hub)
    return RemoteAccess(endpoint, hub, watcher)


def announce_session_changes(supervisor: Any, hub: HubClient, interval: float = SESSIONS_CHECK) -> None:
    """Register at once when a session appears, goes or starts/ends a turn (not only every 10 s),
    so that a phone's list shows a session made elsewhere without waiting for the heartbeat."""
    last: list[tuple[str, str]] = []
    while True:
        gevent.sleep(interval)
        try:
            listed = supervisor.ask(ListSessions(), timeout=2.0)
        except Exception:  # shutting down, or busy: look again later
            continue
        current = sorted((item["sessionId"], item["status"]) for item in listed)
        if current != last:
            last = current
            hub.poke()

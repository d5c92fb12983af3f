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

from zcode_acp.actors.cli.remote_config import RemoteConfig, load_remote_config
from zcode_acp.actors.messages import HubPageKnown, ListSessions

if TYPE_CHECKING:
    from zcode_acp.actors.transport.hub_client import HubClient, Origin
    from zcode_acp.actors.transport.remote import RemoteEndpoint

log = logging.getLogger(__name__)


@dataclass
class RemoteAccess:
    endpoint: RemoteEndpoint
    hub: HubClient | None

    def stop(self) -> None:
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
    from zcode_acp.actors.transport.hub_client import BridgeIdentity, HubClient
    from zcode_acp.actors.transport.remote import RemoteEndpoint

    endpoint = RemoteEndpoint(supervisor, settings.token, settings.bridge_port).start()

    def sessions() -> list[dict[str, Any]]:
        listed: list[dict[str, Any]] = supervisor.ask(ListSessions(), timeout=2.0)
        return listed

    identity = BridgeIdentity.new(endpoint.port, origin, workspace or os.getcwd(), version)
    supervisor.tell(HubPageKnown(identity.instance_id))  # notifications link to the session on the page
    hub = HubClient(identity, sessions, token=lambda: load_remote_config(log_warnings=False).token or "",
                    hub_host=settings.hub_host, hub_port=settings.hub_port, autostart=settings.hub_autostart)
    hub.start()
    return RemoteAccess(endpoint, hub)

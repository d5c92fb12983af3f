"""Which ``Host`` and ``Origin`` a remote listener answers (the hub's and each bridge's).

A web page elsewhere can make the user's browser send requests to
127.0.0.1; a DNS-rebinding page can even make them look same-origin to the
browser, under the attacker's host name. Both give themselves away in the
headers: the ``Host`` names the attacker's domain, and the ``Origin`` (sent by
browsers on every WebSocket and every cross-origin or non-GET request) names
the page. So every request must name, in ``Host``, a loopback name or a public
name the user configured for a tunnel (``remote.publicHost``,
``ZCODE_ACP_PUBLIC_HOST``), and any ``Origin`` must be the same origin as that
``Host`` (the page is the hub's own), scheme included: the listener itself
serves plain HTTP, so a loopback ``Host`` is the origin ``http://``; a tunnel's
public name is served over TLS, so it is ``https://`` (docs/decisions.md).
Anything else is ``403`` before the token is looked at (docs/security.md).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from zcode_acp.net.http_server import HttpError, HttpRequest

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
DEFAULT_PORTS = {"http": 80, "https": 443}


def _host_name(authority: str) -> str | None:
    """The lower-case host of ``host[:port]`` / ``[v6]:port``; None when it is malformed."""
    authority = authority.strip().lower()
    if not authority:
        return None
    parts = urlsplit(f"//{authority}")
    try:
        parts.port  # noqa: B018 (raises on a bad port)
    except ValueError:
        return None
    return parts.hostname or None


def _is_loopback(name: str) -> bool:
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class HostPolicy:
    """Loopback names always; plus the configured public names (a tunnel's, a proxy's)."""

    public_names: frozenset[str] = frozenset()

    @classmethod
    def allowing(cls, names: Iterable[str]) -> HostPolicy:
        return cls(frozenset(n.strip().lower().rstrip(".") for n in names if n.strip()))

    def allows(self, name: str | None) -> bool:
        return name is not None and (_is_loopback(name) or name.rstrip(".") in self.public_names)

    def check(self, request: HttpRequest) -> None:
        """Raise ``HttpError(403)`` for a foreign ``Host`` or ``Origin``."""
        if not self.allows(_host_name(request.header("host"))):
            raise HttpError(403, "forbidden: this Host is not served here "
                                 "(set remote.publicHost for a tunnel's name)")
        origin = request.header("origin").strip()
        if not origin:
            return  # not a browser (or a same-origin GET): the token decides
        # Same origin only: the page is served by the hub itself, so a page on another
        # loopback port (another local dev server) is as foreign as one on the internet.
        parts = urlsplit(origin)
        host = urlsplit(f"//{request.header('host').strip().lower()}")
        default = DEFAULT_PORTS.get(parts.scheme)
        try:
            # A Host without a port means the scheme's default (what a browser leaves out).
            same_port = (parts.port or default) == (host.port or default)
        except ValueError:
            same_port = False
        # The scheme the page was served under: our own plain HTTP on loopback, a tunnel's TLS
        # under a public name (an http:// page there could be anyone's on the way).
        scheme = "http" if host.hostname is not None and _is_loopback(host.hostname) else "https"
        if default is None or parts.scheme != scheme or parts.hostname != host.hostname or \
                not same_port:
            raise HttpError(403, "forbidden: requests from this Origin are not accepted")

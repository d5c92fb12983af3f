"""A bridge's registration key, and the instance id that commits to it (docs/security.md).

The hub binds a registration to the key that made it, but the hub keeps its table in memory: once
it restarts, it knows no key, and a token holder who read a bridge's id, pid and port from the
listing could register them first with a key of its own; the bridge's next heartbeat would then be
refused (issue 29). So a bridge's id is derived from its key: ``b-`` and the first 128 bits of
SHA-256 over the key. Whoever does not hold the key cannot name a key that gives that id, so no
one but the bridge can register it, whatever the hub remembers. Ids of any other form (bridges
from before this, tests' fixed names) stay bound as before: by pid, port and key, first come.
Pure: no I/O but ``os.urandom``.
"""

from __future__ import annotations

import hashlib
import hmac
import os

PREFIX = "b-"
_DOMAIN = "zcode-acp registration id|"


def new_key() -> str:
    return os.urandom(16).hex()


def instance_id_for(key: str) -> str:
    """The id ``key`` commits to."""
    return PREFIX + hashlib.sha256((_DOMAIN + key).encode("utf-8")).hexdigest()[:32]


def is_key_bound(instance_id: str) -> bool:
    """An id of the form only a key gives: registering it needs that key."""
    return instance_id.startswith(PREFIX) and len(instance_id) == len(PREFIX) + 32


def key_gives(instance_id: str, key: object) -> bool:
    """``key`` is the one ``instance_id`` was derived from (constant time)."""
    return isinstance(key, str) and hmac.compare_digest(instance_id_for(key), instance_id)

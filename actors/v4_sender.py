"""The one way the bridge issues a ``v4/command``: the engine's envelope (``protocol/v4/commands.envelope``)
with a fresh ``commandId`` (its idempotency key), the bridge's ``CLIENT_ID`` and the time it was issued.

Every command goes through ``command_params``: the v4 path's ``V4Commands`` (which also judges the
acks), the legacy path's steer, rename and stop on the 0.16 engine, and the Supervisor's
``deleteSession``. ``protocol/v4`` stays pure (ids and times come in as arguments); this module makes them.
Importing it imports ``protocol/v4/commands``: a legacy session imports it only once it speaks to
the 0.16 engine (docs/decisions.md, "The v4 path is imported only when used").
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from zcode_acp.protocol.v4.commands import Base, Command, envelope

CLIENT_ID = "zcode-acp"  # the bridge, as the engine's commands and markers name their client


def command_params(command: Command, *, client_id: str = CLIENT_ID, base: Base | None = None) -> dict[str, Any]:
    """The ``v4/command`` params for ``command``, issued now under a new id (``ValueError`` as ``envelope``)."""
    return envelope(command, command_id=str(uuid.uuid4()), client_id=client_id,
                    issued_at=int(time.time() * 1000), base=base)

"""The mode a v4-made session starts in (docs/v4.md, "Lifecycle").

The legacy ``session/create`` names the mode (the bridge's configured one, ``ZCODE_ACP_MODE``,
or what the client chose before the first use); a v4 ``createSession`` has no field for it
outside a first input, and the bridge creates a draft, so the engine starts the session in
its own default. Before the session is live — so before its first ``sendText`` — the Session
switches it with ``switchCollaborationMode`` when the snapshot names another mode.
"""

from __future__ import annotations

from typing import Any

from zcode_acp.protocol.v4 import commands as v4
from zcode_acp.protocol.v4.conversation_view import collaboration_mode


def opening_mode(session_id: str, wanted: str, state: dict[str, Any]) -> v4.Command | None:
    """The switch a freshly made session needs, or None: already in ``wanted``, the snapshot
    names no mode, or ``wanted`` is a mode the engine's commands have no name for (the
    settings change refuses those the same way)."""
    current = collaboration_mode(state)
    if current is None or current == wanted or wanted not in v4.COLLABORATION_MODES:
        return None
    return v4.switch_collaboration_mode(session_id, wanted)

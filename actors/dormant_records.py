"""The records of Sessions not in memory (docs/performance.md, "Idle sessions").

A record may stay for days, and there may be ten thousand: what they have in common is kept once.
Sessions of one folder share its path, an empty server list is the one empty tuple, and equal
settings (mode, model, the engine's catalog) are one object, not one per session. A record made
after a wave of sessions left memory lands in whatever the wave freed; the fewer small objects it
holds, the fewer of the heap's arenas it keeps from going back to the system.
"""

from __future__ import annotations

import sys
import weakref
from typing import Any

from zcode_acp.actors.messages import Dormant


class DormantRecords(dict[str, Dormant]):
    """ACP session id → ``Dormant``, each stored in its shared form."""

    def __init__(self) -> None:
        super().__init__()
        # settings → the one instance records share; an entry goes with the last record using it
        self._settings: weakref.WeakValueDictionary[Any, Any] = weakref.WeakValueDictionary()

    def __setitem__(self, session_id: str, record: Dormant) -> None:
        self.keep(session_id, record)

    def keep(self, session_id: str, record: Dormant, activity: dict[str, Any] | None = None) -> None:
        """Store ``record`` in its shared form; ``activity`` (the live Session's listing entry,
        a dict and its ints) becomes two of its fields."""
        settings = self._settings.setdefault(record.settings, record.settings)
        backend_id = record.backend_session_id
        if backend_id == session_id:  # a session resumed by the engine's id: the key's own string
            backend_id = session_id
        updated_at, title = (activity.get("updatedAt", 0), activity.get("title", "")) if activity else \
            (record.updated_at, record.title)
        super().__setitem__(session_id, Dormant(sys.intern(record.cwd), tuple(record.mcp_servers), backend_id,
                                                settings, record.root_known, updated_at, title))

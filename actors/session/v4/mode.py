"""The conversation's collaboration mode, on the v4 path, adopted by the Session's settings.

The translator says ``current_mode_update`` when the conversation's state shows a new mode.
The Session's :class:`Settings` owns the mode the client was told: a mode it already told
(a slash command's or a picker's answer on the legacy methods, which comes back later in the
conversation's state) is not told again after that answer, and a mode the engine changed on
its own is adopted there, announced as any settings change is (the mode and the pickers).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from zcode_acp.actors.session.settings import Settings


def adopt_modes(updates: list[dict[str, Any]], settings: Settings) -> list[dict[str, Any]]:
    """``updates`` with each ``current_mode_update`` replaced by what adopting its mode announces."""
    out: list[dict[str, Any]] = []
    for update in updates:
        mode = update.get("currentModeId") if update.get("sessionUpdate") == "current_mode_update" else None
        if isinstance(mode, str):
            out += settings.change(replace(settings.current, mode=mode))
        else:
            out.append(update)
    return out

"""The Session's settings (mode, model, thought level) and what a change announces."""

from __future__ import annotations

from typing import Any

from zcode_acp.protocol import updates
from zcode_acp.protocol.session_config import SessionSettings, config_options


class Settings:
    # Every live Session has one: slots, not a __dict__ (docs/performance.md, "Idle sessions").
    __slots__ = ("current",)

    def __init__(self, settings: SessionSettings) -> None:
        self.current = settings

    def change(self, settings: SessionSettings) -> list[dict[str, Any]]:
        """Adopt ``settings``; the updates that tell clients what changed (none if nothing did)."""
        before, self.current = self.current, settings
        out = []
        if before.mode != settings.mode:
            out.append(updates.current_mode(settings.mode))
        if before != settings:
            out.append(updates.config_options(config_options(settings)))
        return out

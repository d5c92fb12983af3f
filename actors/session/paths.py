"""Which ``EnginePath`` a Session runs on (``ZCODE_ACP_ENGINE_API``), importing only that path's code.

A legacy bridge never imports the v4 path: its runtime would pay ~60–70 ms of imports at its first
``session/new`` (docs/decisions.md, "The v4 path is imported only when used";
``tests/actors/test_lazy_v4_import.py``).
"""

from __future__ import annotations

from zcode_acp.actors.session.legacy.path import LegacyPath
from zcode_acp.actors.session.path import EnginePath, SessionPort
from zcode_acp.config.settings import Config


def engine_path(port: SessionPort, config: Config) -> EnginePath:
    if config.engine_api == "v4":
        from zcode_acp.actors.session.v4.engine import V4Engine  # the one import of the v4 path

        return V4Engine(port)
    return LegacyPath(port)

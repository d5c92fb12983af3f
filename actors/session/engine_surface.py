"""What a create/resume answer tells the Session about the engine, and the calls it asks for
(docs/sessions.md, "Modes, model, thought level"; docs/backend-protocol.md §11).

* the settings: the create's catalog reaches the clients' pickers at once (a load/resume
  answers after its resume, so it needs no update); the catalog is remembered for the
  next run's first ``session/new`` (the Supervisor keeps it);
* ``protocol: {name: "ZCode Protocol"}`` marks the 0.16 engine: from then on steer and stop
  go through ``v4/command`` and no removed method is called;
* the engine's own slash commands (the snapshot's ``slashCommands``);
* ``runtime/capabilities``, once: plan mode is offered only where it works;
* ``workspace/updateInteractionPreferences`` for every session opened (made or resumed): the
  engine's questions wait for the user (``protocol/host_requests.py``);
* ``mcp/list {mode: "connect"}`` for a session with MCP servers (the engine only registers them).

A plain object the Session owns, working through ``SurfacePort``; tests give it a fake one.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any, Protocol
from collections.abc import Callable

from zcode_acp.protocol import commands, model_catalog
from zcode_acp.protocol.host_requests import INTERACTION_PREFERENCES, interaction_preferences
from zcode_acp.protocol.sessions import speaks_the_zcode_protocol

from zcode_acp.actors.session.settings import Settings

log = logging.getLogger(__name__)
Then = Callable[[Any, Any], None]  # (result, error)


class SurfacePort(Protocol):
    settings: Settings
    session_id: str

    def deliver(self, updates: list[dict[str, Any]]) -> None: ...

    def call(self, method: str, params: dict[str, Any], then: Then) -> None: ...

    def remember_catalog(self, catalog: dict[str, Any]) -> None: ...

    def workspace_of(self, session: Any) -> dict[str, Any]: ...


class EngineSurface:
    # Every live Session has one: slots, not a __dict__ (docs/performance.md, "Idle sessions").
    __slots__ = ("capabilities_read", "commands", "port")

    def __init__(self, port: SurfacePort) -> None:
        self.port = port
        self.commands: tuple[tuple[str, str, str], ...] = ()  # the engine's own slash commands
        self.capabilities_read = False

    def materialized(self, created: bool, result: dict[str, Any], has_mcp_servers: bool) -> bool:
        """Take in a create/resume answer; True if it came from the 0.16 engine."""
        settings = result.get("settings")
        listed = model_catalog.catalog_of(settings)
        if listed is not None:
            self.port.remember_catalog(listed)
        updated = self.port.settings.current.with_backend_settings(settings)
        if created:
            self.port.deliver(self.port.settings.change(updated))
        else:
            self.port.settings.current = updated
        offered = commands.engine_commands(result)
        if offered and offered != self.commands:
            self.commands = offered
            if created:  # a load/resume announces them after its answer
                self.port.deliver([commands.available_commands_update(offered, self.port.settings.current.lang)])
        today = speaks_the_zcode_protocol(result)
        if today:
            workspace = self.port.workspace_of(result.get("session"))
            self.port.call(INTERACTION_PREFERENCES, interaction_preferences(workspace), self._preferences_set)
            if has_mcp_servers:
                self._connect_mcp(result.get("session"))
            if not self.capabilities_read:
                self.capabilities_read = True
                self.port.call("runtime/capabilities", {}, self._capabilities)
        return today

    def _preferences_set(self, result: Any, error: Any) -> None:
        if error is not None:  # an engine without the method: its runtime-preferences answer is all it reads
            log.warning("session %s: the engine kept its question auto-answering setting: %s", self.port.session_id,
                        error.get("message") if isinstance(error, dict) else error)

    def _capabilities(self, result: Any, error: Any) -> None:
        """``independentPlanState`` (CLI 0.16.9+) says plan mode works; 0.16.5 took ``setMode plan``
        and ignored it. An engine without the method keeps what it offered."""
        if error is not None or not isinstance(result, dict):
            return
        works = result.get("independentPlanState") is True
        current = self.port.settings.current
        if works != current.plan_works:
            self.port.deliver(self.port.settings.change(replace(current, plan_works=works)))

    def _connect_mcp(self, session: Any) -> None:
        def connected(result: Any, error: Any) -> None:
            if error is not None:
                log.warning("session %s: the engine did not connect its MCP servers: %s", self.port.session_id,
                            error.get("message") if isinstance(error, dict) else error)
                return
            statuses = result.get("statuses") if isinstance(result, dict) else None
            log.debug("session %s: MCP servers %s", self.port.session_id, statuses)

        self.port.call("mcp/list", {"workspace": self.port.workspace_of(session), "mode": "connect"}, connected)

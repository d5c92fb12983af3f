"""One session's ``workspace-config/<workspaceKey>`` topic on the v4 data plane (docs/v4.md).

The engine serves its model catalog (the ``model`` config option, every model with its
reasoning levels) and its slash commands (its own and the workspace's ``.zcode/commands``)
on this topic, not in the ``createSession`` ack. A plain part of the Session's ``V4Path``:
it owns the subscription and the applied ``WorkspaceConfigState``; each config it applies
comes back as the create-answer-shaped ``{settings, slashCommands}`` the Session's
``EngineSurface`` already reads, so both paths offer the catalog and the commands alike.

Every Session of a workspace subscribes on its own (its own ``subscriptionId``); the Backend
hands such a topic's frames to every Session, and a frame of another subscription is ignored
here as stale.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from zcode_acp.protocol.v4 import topic as v4topic
from zcode_acp.protocol.v4.wire import parse_wire
from zcode_acp.protocol.v4.workspace_config_apply import (
    ConfigReplaced,
    WorkspaceConfigChange,
    WorkspaceConfigState,
    catalog_settings,
)


@dataclass(slots=True)
class ConfigStep:
    surfaces: list[dict[str, Any]] = field(default_factory=list)
    """Create-answer-shaped ``{settings?, slashCommands}`` for each config applied, in order."""
    resync: dict[str, Any] | None = None
    ignored: list[str] = field(default_factory=list)


class V4WorkspaceConfig:
    def __init__(self, workspace_key: str, connection_id: str) -> None:
        self.connection_id = connection_id
        self.topic = f"workspace-config/{workspace_key}"
        self.state = WorkspaceConfigState()
        self.subscription: v4topic.TopicSubscription[WorkspaceConfigChange] = v4topic.TopicSubscription(
            self.topic, self.state)
        self.given_up = False  # the engine refused the subscription: nothing to wait for

    @property
    def settled(self) -> bool:
        """A config is in (or will never come): the Session need not wait for it to be live."""
        return self.subscription.ready or self.given_up

    def subscribe_params(self) -> dict[str, Any]:
        if self.subscription.subscription_id is not None:
            self.subscription.resubscribing()
        return v4topic.subscribe_params(self.topic, self.connection_id)

    def subscribed(self, result: Any, now_ms: float) -> ConfigStep:
        ack = result.get("ack") if isinstance(result, dict) else None
        return self._step(self.subscription.subscribed(ack, now_ms))

    def frames(self, params: list[dict[str, Any]], now_ms: float) -> ConfigStep:
        outcomes: list[v4topic.Outcome[WorkspaceConfigChange]] = []
        for one in params:
            if one.get("topic") == self.topic:  # other workspaces' configs reach every Session
                outcomes += self.subscription.accept(parse_wire(one), now_ms)
        return self._step(outcomes)

    def expire(self, now_ms: float) -> ConfigStep:
        return self._step(self.subscription.expire(now_ms))

    @property
    def next_expiry_ms(self) -> float | None:
        return self.subscription.next_expiry_ms

    def _step(self, outcomes: list[v4topic.Outcome[WorkspaceConfigChange]]) -> ConfigStep:
        step = ConfigStep()
        for outcome in outcomes:
            if isinstance(outcome, v4topic.Applied):
                for change in outcome.changes:
                    if isinstance(change, ConfigReplaced):
                        surface: dict[str, Any] = {"slashCommands": change.config.get("slashCommands") or []}
                        settings = catalog_settings(change.config)
                        if settings is not None:
                            surface["settings"] = settings
                        step.surfaces.append(surface)
            elif isinstance(outcome, v4topic.ResyncNeeded):
                step.resync = self.subscription.resync_params(self.connection_id,
                                                              force_snapshot=outcome.force_snapshot)
            else:
                step.ignored.append(outcome.reason)
        return step

"""A settings change on the v4 path: the engine's own commands, not the legacy setters (docs/v4.md).

* the mode → ``switchCollaborationMode {mode}``;
* the model or its reasoning level → ``switchModelConfig {provider, model, thought}`` — the
  engine takes the three together, so a thought change names the current model, and a model
  change the level the bridge selects it with (``SessionSettings.level_for``).

Both carry ``baseRevision`` (the schema demands it; ``V4Commands`` adds it from the feed, and a
``stale`` ack is sent again once against the state as it is then). The provider is the catalog's,
else the one the conversation's ``config`` names (the engine's own word on what runs).
"""

from __future__ import annotations

from typing import Any

from zcode_acp.protocol.errors import invalid_params
from zcode_acp.protocol.session_config import SessionSettings
from zcode_acp.protocol.v4 import commands as v4
from zcode_acp.protocol.v4 import row_actions


def settings_command(session_id: str, current: SessionSettings, engine_config: dict[str, Any] | None,
                     config_id: str, value: str) -> v4.Command:
    """The command for a validated change; RpcError(-32602) for a mode the engine has no name for."""
    if config_id == "mode":
        if value not in v4.COLLABORATION_MODES:
            raise invalid_params("value", "invalid.v4_mode", mode=repr(value))
        return v4.switch_collaboration_mode(session_id, value)
    model = value if config_id == "model" else current.model
    ref = current.model_ref(model)
    provider = ref.get("providerId") or (engine_config or {}).get("provider")
    if not isinstance(provider, str) or not provider:
        raise invalid_params("value", "invalid.no_provider", model=repr(model))
    if config_id == "model":
        thought = (ref.get("options") or {}).get("reasoningLevel") or ""
    else:
        thought = value
    return v4.switch_model_config(session_id, provider, model, thought)


def fork_target(rows: Any) -> v4.RowTarget | None:
    """What a fork of "the conversation so far" continues from: the newest row the engine grants
    ``canFork`` (a stable last assistant segment: protocol/v4/row_actions.py), or None when there is none."""
    found = row_actions.target(list(rows), "canFork")
    return None if isinstance(found, row_actions.Refusal) else found

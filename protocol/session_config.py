"""Session modes and config options (docs/sessions.md, "Modes, model, thought level")."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .errors import invalid_params

MODES = (
    ("plan", "Plan", "Read-only: explore and propose a plan before changing anything"),
    ("build", "Build", "Implement with confirmation for risky actions"),
    ("edit", "Edit", "Edit files without asking; ask before running commands"),
    ("yolo", "YOLO", "Run everything without asking"),
    ("auto", "Auto", "Let ZCode decide when to ask"),
)
MODE_IDS = tuple(mode_id for mode_id, _, _ in MODES)
THOUGHT_LEVELS = (("low", "Low"), ("high", "High"), ("max", "Max"))
DEFAULT_MODEL = "default"


@dataclass(frozen=True)
class SessionSettings:
    """What the session's mode/model/thought selectors currently show."""

    mode: str = "yolo"
    model: str = DEFAULT_MODEL
    thought: str = "high"
    models: tuple[tuple[str, str], ...] = ((DEFAULT_MODEL, "Default model"),)
    providers: tuple[tuple[str, str], ...] = ()  # model id → provider id, as the backend named them
    thought_levels: tuple[tuple[str, str], ...] = THOUGHT_LEVELS

    def with_backend_settings(self, settings: Any) -> SessionSettings:
        """Fold a backend ``settings`` object (create/resume/read) into these."""
        if not isinstance(settings, dict):
            return self
        updated = self
        mode = _current(settings.get("mode"))
        if isinstance(mode, str) and mode in MODE_IDS:
            updated = replace(updated, mode=mode)
        model = settings.get("model")
        if isinstance(model, dict):
            current = _model_id(model.get("current"))
            available = model.get("available")
            if isinstance(available, list):
                models = tuple(
                    (_model_id(item), str(item.get("name") or item.get("label") or _model_id(item)))
                    for item in available
                    if isinstance(item, dict) and _model_id(item)
                )
                if models:
                    providers = tuple(
                        (_model_id(item), str(item["providerId"]))
                        for item in available
                        if isinstance(item, dict) and _model_id(item) and item.get("providerId")
                    )
                    updated = replace(updated, models=models, providers=providers)
            if current:
                updated = replace(updated, model=current)
                if current not in {value for value, _ in updated.models}:
                    updated = replace(updated, models=updated.models + ((current, current),))
        thought = settings.get("thoughtLevel")
        if isinstance(thought, dict):
            available = thought.get("available")
            if isinstance(available, list):
                levels = tuple(
                    (str(item["value"]), str(item.get("label") or item["value"]))
                    for item in available
                    if isinstance(item, dict) and item.get("value")
                )
                if levels:
                    updated = replace(updated, thought_levels=levels)
            current = _current(thought)
            if isinstance(current, str):
                updated = replace(updated, thought=current)
        return updated

    def with_setting(self, config_id: str, value: str) -> SessionSettings:
        """The selectors after a successful mode/model/thought change."""
        if config_id == "mode":
            return replace(self, mode=value)
        if config_id == "model":
            return replace(self, model=value)
        return replace(self, thought=value)

    def model_ref(self, model_id: str) -> dict[str, str]:
        """``{providerId, modelId}`` for ``session/setModel``."""
        ref = {"modelId": model_id}
        provider = dict(self.providers).get(model_id)
        if provider:
            ref["providerId"] = provider
        return ref

    def with_patch(self, patch: Any) -> SessionSettings:
        """Apply a ``state.updated`` patch (same shape as settings)."""
        return self.with_backend_settings(patch)


def _current(value: Any) -> Any:
    return value.get("current") if isinstance(value, dict) else value


def _model_id(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("modelId") or value.get("id") or "")
    return value if isinstance(value, str) else ""


def modes_state(settings: SessionSettings) -> dict[str, Any]:
    return {
        "currentModeId": settings.mode,
        "availableModes": [
            {"id": mode_id, "name": name, "description": description} for mode_id, name, description in MODES
        ],
    }


def config_options(settings: SessionSettings) -> list[dict[str, Any]]:
    return [
        {
            "id": "mode",
            "name": "Mode",
            "category": "mode",
            "type": "select",
            "currentValue": settings.mode,
            "options": [{"value": mode_id, "name": name} for mode_id, name, _ in MODES],
        },
        {
            "id": "model",
            "name": "Model",
            "category": "model",
            "type": "select",
            "currentValue": settings.model,
            "options": [{"value": value, "name": name} for value, name in settings.models],
        },
        {
            "id": "thought",
            "name": "Thought level",
            "category": "thought_level",
            "type": "select",
            "currentValue": settings.thought,
            "options": [{"value": value, "name": name} for value, name in settings.thought_levels],
        },
    ]


def session_state(settings: SessionSettings) -> dict[str, Any]:
    """The ``{modes, configOptions}`` part of new/load/resume answers."""
    return {"modes": modes_state(settings), "configOptions": config_options(settings)}


def validate_mode(mode: Any) -> str:
    if not isinstance(mode, str) or mode not in MODE_IDS:
        raise invalid_params("modeId", f"must be one of {', '.join(MODE_IDS)}")
    return mode


def validate_config_value(settings: SessionSettings | None, config_id: Any, value: Any) -> tuple[str, str]:
    """Check a ``session/set_config_option``; returns ``(config_id, value)``.

    Without ``settings`` only the shape is checked (the id is known, the value
    a string); with them, the value must be one the selector offers.
    """
    if config_id == "mode":
        return "mode", validate_mode(value)
    if config_id not in ("model", "thought"):
        raise invalid_params("configId", f"is unknown: {config_id!r} (mode, model, thought)")
    if not isinstance(value, str):
        raise invalid_params("value", "must be a string")
    if settings is not None:
        offered = settings.models if config_id == "model" else settings.thought_levels
        if value not in {v for v, _ in offered}:
            what = "model" if config_id == "model" else "thought level"
            raise invalid_params("value", f"is not an available {what}: {value!r}")
    return config_id, value

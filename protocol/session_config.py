"""Session modes and config options (docs/sessions.md, "Modes, model, thought level").

Two model catalogs are read (docs/backend-protocol.md §11): the seed's
``available: [{providerId, modelId, name}]`` with one list of thought levels,
and today's ``available: [{ref: {providerId, modelId}, label, contextWindow,
reasoning: {levels: [{value, label}], defaultLevel}}]``, where each model has
its own reasoning levels (or none) and ``session/setModel`` wants
``options.reasoningLevel`` valid for the model it selects.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .errors import invalid_params
from .i18n import EN, t

MODE_IDS = ("plan", "build", "edit", "yolo", "auto")
# The bridge's modes the v4 path can set: those switchCollaborationMode names (protocol/v4/commands.py
# COLLABORATION_MODES; not imported here, so the legacy runtime never loads the v4 package).
V4_SETTABLE_MODES = ("plan", "build", "edit", "yolo")
# (id, name, description) in English; the session's language is looked up where they are offered.
MODES = tuple((mode_id, t(EN, f"mode.{mode_id}.name"), t(EN, f"mode.{mode_id}.description")) for mode_id in MODE_IDS)
THOUGHT_LEVELS = (("low", "Low"), ("high", "High"), ("max", "Max"))
DEFAULT_MODEL = "default"
# The boolean option (offered to clients that declare session.configOptions.boolean):
# on is the engine's plan mode; off returns to the mode the session had before it.
PLAN_FIRST = "planFirst"


@dataclass(frozen=True)
class ModelLevels:
    """One model's reasoning levels in today's catalog (empty: the model has none)."""

    levels: tuple[tuple[str, str], ...] = ()
    default: str | None = None


@dataclass(frozen=True)
class SessionSettings:
    """What the session's mode/model/thought selectors currently show."""

    mode: str = "yolo"
    model: str = DEFAULT_MODEL
    thought: str = "high"
    models: tuple[tuple[str, str], ...] = ((DEFAULT_MODEL, "Default model"),)
    providers: tuple[tuple[str, str], ...] = ()  # model id → provider id, as the backend named them
    thought_levels: tuple[tuple[str, str], ...] = THOUGHT_LEVELS
    # Today's catalog: model id → a short description (context size, levels), and its own reasoning levels.
    model_descriptions: tuple[tuple[str, str], ...] = ()
    model_levels: tuple[tuple[str, ModelLevels], ...] = ()
    plan_toggle: bool = False  # offer the boolean "plan before editing" option (the client opted in)
    # False on an engine whose plan mode is accepted and does nothing (runtime/capabilities without
    # independentPlanState: CLI before 0.16.9): plan is then not offered.
    plan_works: bool = True
    mode_before_plan: str = "build"  # where turning the toggle off goes back to
    # The modes the engine path can set, when it cannot set them all (None: every mode): the v4
    # path's switchCollaborationMode has no name for "auto", so it is not offered there.
    settable_modes: tuple[str, ...] | None = None
    lang: str = EN  # the language of the names and descriptions the bridge gives (protocol/i18n)

    def _with_mode(self, mode: str) -> SessionSettings:
        before = self.mode if mode == "plan" and self.mode != "plan" else self.mode_before_plan
        return replace(self, mode=mode, mode_before_plan=before)

    def with_backend_settings(self, settings: Any) -> SessionSettings:
        """Fold a backend ``settings`` object (create/resume/read) into these."""
        if not isinstance(settings, dict):
            return self
        updated = self
        mode = _current(settings.get("mode"))
        if isinstance(mode, str) and mode in MODE_IDS:
            updated = updated._with_mode(mode)
        model = settings.get("model")
        if isinstance(model, dict):
            current = _model_id(model.get("current"))
            available = model.get("available")
            if isinstance(available, list):
                items = [item for item in available if isinstance(item, dict) and _model_id(item)]
                models = tuple((_model_id(item), str(item.get("name") or item.get("label") or _model_id(item)))
                               for item in items)
                if models:
                    # Merged, never replaced: the 0.16 engine lists only the current model in every
                    # payload after create/resume (modelAvailability "current"), so a payload adds
                    # what it names and refreshes it, and the rest of the catalog stays offered.
                    providers = tuple((_model_id(item), _provider_id(item)) for item in items if _provider_id(item))
                    descriptions = tuple((_model_id(item), _describe_model(item, self.lang)) for item in items
                                         if _describe_model(item, self.lang))
                    per_model = tuple((_model_id(item), _levels(item["reasoning"] if isinstance(
                        item.get("reasoning"), dict) else {})) for item in items if _has_catalog_levels(item))
                    known = tuple(pair for pair in updated.models if pair[0] != DEFAULT_MODEL)
                    updated = replace(updated, models=_merged(known, models),
                                      providers=_merged(updated.providers, providers),
                                      model_descriptions=_merged(updated.model_descriptions, descriptions),
                                      model_levels=_merged(updated.model_levels, per_model))
            if current:
                updated = replace(updated, model=current)
                chosen_provider = _provider_id(model["current"]) if isinstance(model.get("current"), dict) else ""
                if chosen_provider:
                    updated = replace(updated, providers=_merged(updated.providers, ((current, chosen_provider),)))
                if current not in {value for value, _ in updated.models}:
                    updated = replace(updated, models=updated.models + ((current, current),))
                updated = updated._levels_of(current)
                options = model.get("current", {}).get("options") if isinstance(model.get("current"), dict) else None
                level = options.get("reasoningLevel") if isinstance(options, dict) else None
                if isinstance(level, str) and level:
                    updated = replace(updated, thought=level)
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
            return self._with_mode(value)
        if config_id == "model":
            return replace(self, model=value)._levels_of(value, self.level_for(value))
        return replace(self, thought=value)

    def _levels_of(self, model_id: str, level: str | None = None) -> SessionSettings:
        """With today's catalog, the thought selector offers the model's own levels."""
        known = dict(self.model_levels).get(model_id)
        if known is None:
            return self
        thought = level or (self.thought if self.thought in {v for v, _ in known.levels} else known.default) or ""
        return replace(self, thought_levels=known.levels, thought=thought if known.levels else "")

    def level_for(self, model_id: str) -> str | None:
        """The reasoning level to select ``model_id`` with: the current one if it has it, else its default."""
        known = dict(self.model_levels).get(model_id)
        if known is None or not known.levels:
            return None
        values = [value for value, _ in known.levels]
        if self.thought in values:
            return self.thought
        return known.default if known.default in values else values[0]

    def model_ref(self, model_id: str) -> dict[str, Any]:
        """``{providerId, modelId, options?: {reasoningLevel}}`` for ``session/setModel``.

        ``providerId`` is required by the engine's schema: a model the catalog did not name a
        provider for takes the current model's (the only provider the bridge knows it runs).
        """
        providers = dict(self.providers)
        provider = providers.get(model_id) or providers.get(self.model) or next(iter(providers.values()), "")
        ref: dict[str, Any] = {"providerId": provider, "modelId": model_id} if provider else {"modelId": model_id}
        level = self.level_for(model_id)
        if level is not None:
            ref["options"] = {"reasoningLevel": level}
        return ref

    def with_patch(self, patch: Any) -> SessionSettings:
        """Apply a ``state.updated`` patch (same shape as settings)."""
        return self.with_backend_settings(patch)


def _merged(old: tuple[tuple[str, Any], ...], new: tuple[tuple[str, Any], ...]) -> tuple[tuple[str, Any], ...]:
    """``old`` with each key of ``new`` refreshed in place and new keys appended, in order."""
    fresh = dict(new)
    kept = tuple((key, fresh.pop(key, value)) for key, value in old)
    return kept + tuple((key, value) for key, value in new if key in fresh)


def _current(value: Any) -> Any:
    return value.get("current") if isinstance(value, dict) else value


def _model_id(value: Any) -> str:
    if isinstance(value, dict):
        ref = value.get("ref")
        if isinstance(ref, dict) and ref.get("modelId"):
            return str(ref["modelId"])
        return str(value.get("modelId") or value.get("id") or "")
    return value if isinstance(value, str) else ""


def _provider_id(item: dict[str, Any]) -> str:
    ref = item.get("ref")
    provider = ref.get("providerId") if isinstance(ref, dict) else item.get("providerId")
    return str(provider) if provider else ""


def _has_catalog_levels(item: dict[str, Any]) -> bool:
    """Today's catalog entries (keyed by ``ref``) say per model whether it reasons."""
    return isinstance(item.get("ref"), dict)


def _levels(reasoning: dict[str, Any]) -> ModelLevels:
    raw = reasoning.get("levels")
    levels = tuple(
        (str(level["value"]), str(level.get("label") or level["value"])) if isinstance(level, dict)
        else (str(level), str(level).title())
        for level in (raw if isinstance(raw, list) else [])
        if (isinstance(level, dict) and level.get("value")) or (isinstance(level, str) and level)
    )
    default = reasoning.get("defaultLevel")
    return ModelLevels(levels, str(default) if isinstance(default, str) else None)


def _describe_model(item: dict[str, Any], lang: str = EN) -> str:
    """"200K context · reasoning: low, high" from a catalog entry (empty for the seed's entries)."""
    parts = []
    window = item.get("contextWindow")
    if isinstance(window, int) and not isinstance(window, bool) and window > 0:
        parts.append(t(lang, "model.context_k", size=window // 1000) if window % 1000 == 0
                     else t(lang, "model.context_tokens", tokens=window))
    reasoning = item.get("reasoning")
    if isinstance(reasoning, dict):
        levels = _levels(reasoning).levels
        if levels:
            parts.append(t(lang, "model.reasoning", levels=", ".join(value for value, _ in levels)))
    return " · ".join(parts)


def offered_modes(settings: SessionSettings) -> tuple[tuple[str, str, str], ...]:
    """The modes the session offers: plan only where the engine's plan mode works; only what the
    engine path can set (``settable_modes``); the current mode always."""
    return tuple(mode for mode in MODES
                 if (settings.plan_works or mode[0] != "plan" or settings.mode == "plan")
                 and (settings.settable_modes is None or mode[0] in settings.settable_modes
                      or settings.mode == mode[0]))


def modes_state(settings: SessionSettings) -> dict[str, Any]:
    return {
        "currentModeId": settings.mode,
        "availableModes": [
            {"id": mode_id, "name": t(settings.lang, f"mode.{mode_id}.name"),
             "description": t(settings.lang, f"mode.{mode_id}.description")}
            for mode_id, _, _ in offered_modes(settings)
        ],
    }


def _model_options(settings: SessionSettings) -> list[dict[str, Any]]:
    descriptions = dict(settings.model_descriptions)
    options = []
    for value, name in settings.models:
        option = {"value": value, "name": t(settings.lang, "model.default") if value == DEFAULT_MODEL else name}
        if descriptions.get(value):
            option["description"] = descriptions[value]
        options.append(option)
    return options


def config_options(settings: SessionSettings) -> list[dict[str, Any]]:
    options: list[dict[str, Any]] = [
        {
            "id": "mode",
            "name": t(settings.lang, "config.mode.name"),
            "category": "mode",
            "type": "select",
            "currentValue": settings.mode,
            "options": [{"value": mode_id, "name": t(settings.lang, f"mode.{mode_id}.name")}
                        for mode_id, _, _ in offered_modes(settings)],
        },
        {
            "id": "model",
            "name": t(settings.lang, "config.model.name"),
            "category": "model",
            "type": "select",
            "currentValue": settings.model,
            "options": _model_options(settings),
        },
    ]
    if settings.thought_levels:  # a model without reasoning levels has no thought selector
        options.append({
            "id": "thought",
            "name": t(settings.lang, "config.thought.name"),
            "category": "thought_level",
            "type": "select",
            "currentValue": settings.thought,
            # the bridge's own default levels speak the user's language; the engine's labels pass through
            "options": [{"value": value, "name": t(settings.lang, f"thought.{value}")
                         if (value, name) in THOUGHT_LEVELS else name} for value, name in settings.thought_levels],
        })
    if settings.plan_toggle and settings.plan_works:
        options.append({
            "id": PLAN_FIRST,
            "name": t(settings.lang, "config.plan_first.name"),
            "description": t(settings.lang, "config.plan_first.description"),
            "type": "boolean",
            "currentValue": settings.mode == "plan",
        })
    return options


def models_state(settings: SessionSettings) -> dict[str, Any] | None:
    """The unstable ACP ``SessionModelState`` ``{currentModelId, availableModels: [{modelId, name,
    description?}]}`` older clients read (acpc); None while only the placeholder is known."""
    models = [(value, name) for value, name in settings.models if value != DEFAULT_MODEL]
    if not models:
        return None
    descriptions = dict(settings.model_descriptions)
    available = []
    for value, name in models:
        entry = {"modelId": value, "name": name}
        if descriptions.get(value):
            entry["description"] = descriptions[value]
        available.append(entry)
    return {"currentModelId": settings.model, "availableModels": available}


def session_state(settings: SessionSettings) -> dict[str, Any]:
    """The ``{modes, configOptions, models?}`` part of new/load/resume answers."""
    state = {"modes": modes_state(settings), "configOptions": config_options(settings)}
    models = models_state(settings)
    if models is not None:
        state["models"] = models
    return state


def validate_mode(mode: Any) -> str:
    """A mode id, whatever its case (``/mode Build`` is ``build``, as ZCODE_ACP_MODE is)."""
    if mode is None:  # not sent at all: say so, not that an absent value is not among the modes
        raise invalid_params("modeId", "invalid.mode_id_missing", choices=", ".join(MODE_IDS))
    folded = mode.strip().lower() if isinstance(mode, str) else None
    if folded is None or folded not in MODE_IDS:
        raise invalid_params("modeId", "invalid.must_be_one_of", choices=", ".join(MODE_IDS))
    return folded


def validate_config_value(settings: SessionSettings | None, config_id: Any, value: Any) -> tuple[str, Any]:
    """Check a ``session/set_config_option``; returns ``(config_id, value)``.

    Without ``settings`` only the shape is checked (the id is known, the value
    a string, or a boolean for ``planFirst``); with them, the value must be one
    the selector offers, and ``planFirst`` becomes the mode it selects.
    """
    if config_id is None:  # a client of an older draft names it optionId (acplint 0.1.0, docs/clients.md)
        raise invalid_params("configId", "invalid.config_id_missing", plan_first=PLAN_FIRST)
    if config_id == PLAN_FIRST:
        if not isinstance(value, bool):
            raise invalid_params("value", "invalid.must_be_boolean_for", name=PLAN_FIRST)
        if settings is None:
            return PLAN_FIRST, value
        if not settings.plan_toggle:
            raise invalid_params("configId", "invalid.needs_boolean_options", name=PLAN_FIRST)
        if value and not settings.plan_works:
            raise invalid_params("value", "invalid.plan_ignored")
        return "mode", "plan" if value else (settings.mode_before_plan if settings.mode == "plan" else settings.mode)
    if config_id == "mode":
        mode = validate_mode(value)
        if settings is not None and mode not in {mode_id for mode_id, _, _ in offered_modes(settings)}:
            raise invalid_params("value", "invalid.plan_ignored_versions")
        return "mode", mode
    if config_id not in ("model", "thought"):
        raise invalid_params("configId", "invalid.unknown_config", config_id=repr(config_id), plan_first=PLAN_FIRST)
    if not isinstance(value, str):
        raise invalid_params("value", "invalid.must_be_string")
    if settings is not None:
        offered = settings.models if config_id == "model" else settings.thought_levels
        if value not in {v for v, _ in offered}:
            # the list, so that a choice made before the catalog was known can be made again
            raise invalid_params("value", "invalid.not_an_available_model" if config_id == "model"
                                 else "invalid.not_an_available_thought", value=repr(value),
                                 available=", ".join(v for v, _ in offered))
    return config_id, value

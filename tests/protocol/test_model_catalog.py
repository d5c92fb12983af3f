"""The model picker keeps the whole catalog (docs/sessions.md, "Modes, model, thought level").

The 0.16 engine lists every model only in the create/resume snapshot; ``session/read``, the
set* answers and every ``state.updated`` carry the current model alone
(``modelAvailability: "current"``). Entries are shaped as its source's ``zcodeModelOptionSchema``.
"""

from __future__ import annotations

from typing import Any

from zcode_acp.protocol.session_config import SessionSettings, config_options

PROPERTIES = {"inputFormat": {"supportsText": True, "supportsImage": False, "supportsVideo": False,
                              "supportsAudio": False, "supportsPdf": False},
              "outputFormat": {"supportsText": True}}


def entry(model_id: str, label: str, levels: tuple[str, ...] = ("low", "high")) -> dict[str, Any]:
    item: dict[str, Any] = {"ref": {"providerId": "zhipu", "modelId": model_id}, "label": label,
                            "contextWindow": 128_000, "properties": PROPERTIES}
    if levels:
        item["reasoning"] = {"levels": [{"value": v, "label": v} for v in levels], "defaultLevel": levels[-1]}
    return item


def settings(available: list[dict[str, Any]], current: str, level: str | None = "high") -> dict[str, Any]:
    chosen: dict[str, Any] = {"providerId": "zhipu", "modelId": current}
    if level:
        chosen["options"] = {"reasoningLevel": level}
    return {"mode": {"current": "build"}, "model": {"available": available, "current": chosen},
            "thoughtLevel": {"enabled": bool(level), "available": [], "current": level}}


FULL = [entry("glm-5", "GLM-5", ("low", "high", "max")), entry("glm-5-air", "GLM-5 Air"),
        entry("glm-4.6-flash", "GLM-4.6 Flash", ())]


def model_values(state: SessionSettings) -> list[str]:
    [model] = [o for o in config_options(state) if o["id"] == "model"]
    return [o["value"] for o in model["options"]]


def test_a_current_only_payload_never_shrinks_the_catalog() -> None:
    state = SessionSettings().with_backend_settings(settings(FULL, "glm-5"))
    state = state.with_patch(settings([FULL[1]], "glm-5-air", "low"))
    assert model_values(state) == ["glm-5", "glm-5-air", "glm-4.6-flash"]
    assert state.model == "glm-5-air" and state.thought == "low"
    # Every model keeps what it takes to select it: its provider and its own reasoning levels.
    assert state.model_ref("glm-4.6-flash") == {"providerId": "zhipu", "modelId": "glm-4.6-flash"}
    assert state.model_ref("glm-5") == {"providerId": "zhipu", "modelId": "glm-5",
                                        "options": {"reasoningLevel": "low"}}


def test_a_payload_refreshes_the_model_it_names_and_adds_a_new_one() -> None:
    state = SessionSettings().with_backend_settings(settings(FULL, "glm-5"))
    renamed = dict(FULL[1], label="GLM-5 Air (new)")
    state = state.with_backend_settings(settings([renamed, entry("glm-6", "GLM-6")], "glm-6"))
    assert model_values(state) == ["glm-5", "glm-5-air", "glm-4.6-flash", "glm-6"]
    assert dict(state.models)["glm-5-air"] == "GLM-5 Air (new)"


def test_set_model_always_names_a_provider() -> None:
    # A catalog entry without a ref names no provider: the current selection's provider is used.
    state = SessionSettings().with_backend_settings({
        "model": {"available": [{"modelId": "glm-x", "name": "GLM X"}],
                  "current": {"providerId": "zhipu", "modelId": "glm-5"}}})
    assert state.model_ref("glm-x")["providerId"] == "zhipu"
    assert state.model_ref("glm-5") == {"providerId": "zhipu", "modelId": "glm-5"}

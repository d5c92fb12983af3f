"""The remembered catalog's format (protocol/model_catalog.py): what a create lists, read back."""

from __future__ import annotations

from zcode_acp.protocol import model_catalog
from zcode_acp.protocol.session_config import SessionSettings, models_state, session_state

ENTRY = {"ref": {"providerId": "zhipu", "modelId": "glm-5"}, "label": "GLM-5", "contextWindow": 200_000,
         "reasoning": {"levels": [{"value": "low", "label": "low"}], "defaultLevel": "low"},
         "properties": {"inputFormat": {"supportsText": True}, "outputFormat": {"supportsText": True}}}


def test_both_catalog_shapes_are_remembered() -> None:
    # The seed's engine (classic) lists {providerId, modelId, name}: remembered too (issue 32).
    entry = {"providerId": "zhipu", "modelId": "glm-5", "name": "GLM-5"}
    seed = model_catalog.catalog_of({"model": {"available": [entry, {"name": "no ids"}]}})
    assert seed == {"available": [entry]}
    assert model_catalog.decode(model_catalog.encode(seed)) == seed
    settings = model_catalog.seeded(SessionSettings(), seed)
    assert settings.models == (("glm-5", "GLM-5"),) and settings.model == "glm-5"
    assert model_catalog.known(settings) and not model_catalog.known(SessionSettings())
    listed = model_catalog.catalog_of({"model": {"available": [ENTRY], "current": {"providerId": "zhipu",
                                                                                  "modelId": "glm-5"}}})
    assert listed == {"available": [ENTRY], "current": {"providerId": "zhipu", "modelId": "glm-5"}}
    assert model_catalog.decode(model_catalog.encode(listed)) == listed


def test_an_unreadable_or_foreign_file_is_no_catalog() -> None:
    assert model_catalog.decode(b"{") is None
    assert model_catalog.decode(b'{"version": 99, "available": []}') is None


def test_a_seeded_session_offers_the_catalog_and_the_unstable_models_view() -> None:
    settings = model_catalog.seeded(SessionSettings(), {"available": [ENTRY]})
    state = session_state(settings)
    assert state["models"] == {"currentModelId": "glm-5", "availableModels": [
        {"modelId": "glm-5", "name": "GLM-5", "description": "200K context · reasoning: low"}]}
    assert models_state(SessionSettings()) is None  # only the placeholder: no models view at all

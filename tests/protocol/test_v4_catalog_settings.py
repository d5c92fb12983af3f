"""catalog_settings: the workspace config's model option read as the settings a legacy create answered."""

from zcode_acp.protocol import model_catalog
from zcode_acp.protocol.session_config import SessionSettings, config_options
from zcode_acp.protocol.v4.workspace_config_apply import catalog_settings

# Shaped as the engine lists its picker (value "<providerId>/<modelId>", levels only where a model has them).
CONFIG = {"slashCommands": [], "configOptions": [
    {"id": "model", "name": "Model", "type": "select", "currentValue": "zhipu/glm-5", "options": [
        {"value": "zhipu/glm-5", "name": "GLM-5", "origin": "native", "modelProviderId": "zhipu",
         "modelProviderName": "Zhipu", "modelThoughtLevels": ["low", "high", "max"], "modelDefaultThoughtLevel": "high"},
        {"value": "zhipu/glm-4.6-flash", "name": "GLM-4.6 Flash", "origin": "native", "modelProviderId": "zhipu"},
    ]},
    {"id": "mode", "name": "Mode", "type": "select", "currentValue": "build", "options": []},
]}


def test_every_listed_model_reaches_the_picker_with_its_own_levels_and_provider():
    settings = SessionSettings().with_backend_settings(catalog_settings(CONFIG))
    [model] = [o for o in config_options(settings) if o["id"] == "model"]
    assert [(o["value"], o["name"]) for o in model["options"]] == [("glm-5", "GLM-5"), ("glm-4.6-flash", "GLM-4.6 Flash")]
    assert model["currentValue"] == "glm-5"
    assert settings.model_ref("glm-4.6-flash") == {"providerId": "zhipu", "modelId": "glm-4.6-flash"}
    assert settings.with_setting("model", "glm-5").model_ref("glm-5")["options"] == {"reasoningLevel": "high"}


def test_the_catalog_is_one_the_bridge_remembers():
    remembered = model_catalog.catalog_of(catalog_settings(CONFIG))
    assert remembered is not None and remembered["current"] == {"providerId": "zhipu", "modelId": "glm-5"}
    assert [e["ref"]["modelId"] for e in remembered["available"]] == ["glm-5", "glm-4.6-flash"]


def test_a_config_without_a_model_option_gives_no_catalog():
    assert catalog_settings({"configOptions": [], "slashCommands": []}) is None
    assert catalog_settings({"configOptions": [{"id": "model", "options": [{"value": ""}]}]}) is None

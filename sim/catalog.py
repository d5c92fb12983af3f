"""The 0.16 engine's model catalog: ``ref``-keyed entries with labels, context sizes and
per-model reasoning levels (docs/simulator.md, Dialects)."""

from __future__ import annotations

from typing import Any

PROVIDER = "zhipu"
DEFAULT_MODEL = "glm-5"


def _levels(*values: str) -> list[dict[str, str]]:
    return [{"value": value, "label": value.title()} for value in values]


def _properties(image: bool) -> dict[str, Any]:
    """The entry's required ``properties`` (its input and output formats)."""
    return {"inputFormat": {"supportsText": True, "supportsImage": image, "supportsVideo": False,
                            "supportsAudio": False, "supportsPdf": image},
            "outputFormat": {"supportsText": True}}


# One model has no "reasoning" key at all: a catalog entry may lack it.
MODELS: list[dict[str, Any]] = [
    {"ref": {"providerId": PROVIDER, "modelId": "glm-5"}, "label": "GLM-5", "providerLabel": "Zhipu",
     "contextWindow": 200_000, "reasoning": {"levels": _levels("low", "high", "max"), "defaultLevel": "high"},
     "properties": _properties(True)},
    {"ref": {"providerId": PROVIDER, "modelId": "glm-5-air"}, "label": "GLM-5 Air", "providerLabel": "Zhipu",
     "contextWindow": 128_000, "reasoning": {"levels": _levels("low", "high"), "defaultLevel": "high"},
     "properties": _properties(False)},
    {"ref": {"providerId": PROVIDER, "modelId": "glm-4.6-flash"}, "label": "GLM-4.6 Flash", "providerLabel": "Zhipu",
     "contextWindow": 128_000, "properties": _properties(False)},
]


def find(provider_id: Any, model_id: Any) -> dict[str, Any] | None:
    return next((m for m in MODELS if m["ref"] == {"providerId": provider_id, "modelId": model_id}), None)


def levels(entry: dict[str, Any] | None) -> list[str]:
    return [level["value"] for level in ((entry or {}).get("reasoning") or {}).get("levels") or []]


def default_level(entry: dict[str, Any] | None) -> str:
    return ((entry or {}).get("reasoning") or {}).get("defaultLevel") or ""


def context_window(model_id: str) -> int:
    return int((find(PROVIDER, model_id) or {}).get("contextWindow") or 200_000)

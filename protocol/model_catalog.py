"""The model catalog remembered between runs (docs/sessions.md, "The model list from the start").

Both engines list every model only in a create/resume snapshot; a bridge that
waited for one would offer "Default model" until the first prompt started the
backend. The last catalog seen is kept under ``ZCODE_HOME`` and offered from the
first ``session/new``; the next create refreshes it. Both catalog shapes are kept:
today's entries keyed by ``ref``, and the seed's ``{providerId, modelId, name}``.
This module is the file's format and the unstable ACP ``models`` view;
``actors/model_catalog.py`` reads and writes the file off the event loop.
"""

from __future__ import annotations

from typing import Any

import ujson

from .session_config import DEFAULT_MODEL, SessionSettings

FILE_NAME = "acp-model-catalog.json"
VERSION = 1


def ref_of(entry: dict[str, Any]) -> dict[str, Any]:
    """The ``{providerId, modelId}`` a catalog entry names, in either shape."""
    ref = entry.get("ref")
    named = ref if isinstance(ref, dict) else entry
    return {"providerId": named.get("providerId"), "modelId": named.get("modelId")}


def catalog_of(settings: Any) -> dict[str, Any] | None:
    """``{available, current?}`` from a settings payload that lists a catalog (today's entries keyed
    by ``ref``, or the seed's ``{providerId, modelId, name}``); None for a payload without models."""
    model = settings.get("model") if isinstance(settings, dict) else None
    if not isinstance(model, dict) or not isinstance(model.get("available"), list):
        return None
    available = model["available"]
    entries = [item for item in available if isinstance(item, dict)
               and all(isinstance(value, str) and value for value in ref_of(item).values())]
    if not entries:
        return None
    found: dict[str, Any] = {"available": entries}
    current = model.get("current")
    if isinstance(current, dict) and current.get("modelId"):
        found["current"] = current
    return found


def encode(catalog: dict[str, Any]) -> bytes:
    return ujson.dumps({"version": VERSION, **catalog}, ensure_ascii=False).encode()


def decode(data: bytes) -> dict[str, Any] | None:
    """The remembered catalog, or None for a file this version cannot read (it is then rewritten)."""
    try:
        stored = ujson.loads(data)
    except ValueError:
        return None
    if not isinstance(stored, dict) or stored.get("version") != VERSION:
        return None
    return catalog_of({"model": stored})


def seeded(settings: SessionSettings, catalog: dict[str, Any] | None) -> SessionSettings:
    """A new session's settings offering the remembered catalog (unchanged without one)."""
    if catalog is None:
        return settings
    if "current" not in catalog:  # the picker's current value must be one it offers
        catalog = {**catalog, "current": ref_of(catalog["available"][0])}
    return settings.with_backend_settings({"model": catalog})


def known(settings: SessionSettings) -> bool:
    """The session's picker lists the engine's models (not only the placeholder)."""
    return any(value != DEFAULT_MODEL for value, _ in settings.models)

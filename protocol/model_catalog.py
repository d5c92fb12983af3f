"""The model catalog remembered between runs (docs/sessions.md, "The model list from the start").

Today's engine lists every model only in a create/resume snapshot; a bridge that
waited for one would offer "Default model" until the first prompt started the
backend. The last catalog seen is kept under ``ZCODE_HOME`` and offered from the
first ``session/new``; the next create refreshes it. This module is the file's
format and the unstable ACP ``models`` view; ``actors/model_catalog.py`` reads and
writes the file off the event loop.
"""

from __future__ import annotations

from typing import Any

import ujson

from .session_config import SessionSettings

FILE_NAME = "acp-model-catalog.json"
VERSION = 1


def catalog_of(settings: Any) -> dict[str, Any] | None:
    """``{available, current?}`` from a settings payload that lists today's catalog (entries keyed by
    ``ref``); None for the seed's shape or a payload without models."""
    model = settings.get("model") if isinstance(settings, dict) else None
    if not isinstance(model, dict) or not isinstance(model.get("available"), list):
        return None
    available = model["available"]
    entries = [item for item in available if isinstance(item, dict) and isinstance(item.get("ref"), dict)
               and item["ref"].get("modelId") and item["ref"].get("providerId")]
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
        catalog = {**catalog, "current": dict(catalog["available"][0]["ref"])}
    return settings.with_backend_settings({"model": catalog})

"""The lazy-session file: ACP placeholder id → backend session (docs/sessions.md, "What is stored where").

``<ZCODE_HOME>/v2/acp-lazy-sessions.json`` holds
``{"<placeholder>": {"cwd": str, "zcodeSid"?: str, "createdAt": ms, "title"?: str, "archived"?: true,
"deleted"?: true}}`` (``title``: a rename the engine could not do, kept here and shown by
``session/list``; ``archived``: ``_session/archive``, which hides it from the default list).
A ``session/delete`` leaves a tombstone (``deleted: true``, keyed by the editor's
id, keeping the backend id) so that every bridge sharing the file stops
listing, loading and resuming it. These are the pure rules: parsing (a corrupt file is an error the caller turns into
"empty"), merging what is on disk with what this process knows, and pruning
entries never used for 30 days. Used entries never expire.
"""

from __future__ import annotations

from typing import Any

import ujson

MAX_UNUSED_AGE_MS = 30 * 24 * 3600 * 1000


class CorruptStore(ValueError):
    """The file exists but is not a lazy-session map."""


def parse(text: str | bytes) -> dict[str, dict[str, Any]]:
    if not text.strip():
        return {}
    try:
        data = ujson.loads(text)
    except ValueError as exc:
        raise CorruptStore(str(exc)) from None
    if not isinstance(data, dict):
        raise CorruptStore("top level is not an object")
    entries = {}
    for key, entry in data.items():
        if isinstance(entry, dict) and isinstance(entry.get("cwd"), str):
            entries[key] = entry
    return entries


def created_at(entry: dict[str, Any]) -> float:
    value = entry.get("createdAt")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def merge(on_disk: dict[str, dict[str, Any]], ours: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Our entries win, except that a backend id already on disk is never lost."""
    merged = dict(on_disk)
    for key, entry in ours.items():
        previous = merged.get(key)
        if previous and previous.get("zcodeSid") and not entry.get("zcodeSid"):
            entry = {**entry, "zcodeSid": previous["zcodeSid"]}
        if previous and is_deleted(previous) and not is_deleted(entry):
            entry = {**entry, "deleted": True}  # another bridge deleted it: that stands
        merged[key] = entry
    return merged


def kept_titles(entries: dict[str, dict[str, Any]]) -> dict[str, str]:
    """The titles the bridge keeps itself (a rename the engine cannot do), by the editor's id."""
    return {key: entry["title"] for key, entry in entries.items()
            if isinstance(entry.get("title"), str) and entry["title"] and not is_deleted(entry)}


def archived_ids(entries: dict[str, dict[str, Any]]) -> set[str]:
    """The sessions ``_session/archive`` archived (and no unarchive brought back), by the editor's id."""
    return {key for key, entry in entries.items() if entry.get("archived") is True and not is_deleted(entry)}


def is_deleted(entry: dict[str, Any]) -> bool:
    return entry.get("deleted") is True


def tombstone(entry: dict[str, Any] | None, session_id: str, now_ms: float) -> dict[str, Any]:
    """The entry that records ``session_id`` as deleted (a backend id deleted directly keys itself)."""
    base = dict(entry) if entry else {"cwd": "/", "createdAt": int(now_ms), "zcodeSid": session_id}
    base["deleted"] = True
    return base


def deleted_backend_ids(entries: dict[str, dict[str, Any]]) -> set[str]:
    """Backend session ids that ``session/list`` must no longer show."""
    return {str(entry["zcodeSid"]) for entry in entries.values() if is_deleted(entry) and entry.get("zcodeSid")}


def prune(entries: dict[str, dict[str, Any]], now_ms: float) -> dict[str, dict[str, Any]]:
    return {
        key: entry for key, entry in entries.items()
        if entry.get("zcodeSid") or now_ms - created_at(entry) < MAX_UNUSED_AGE_MS
    }


def dumps(entries: dict[str, dict[str, Any]]) -> bytes:
    return ujson.dumps(entries, ensure_ascii=False, escape_forward_slashes=False, indent=2).encode("utf-8")


def dumps_line(entries: dict[str, dict[str, Any]]) -> bytes:
    """One journal line (no indentation, newline-terminated)."""
    return ujson.dumps(entries, ensure_ascii=False, escape_forward_slashes=False).encode("utf-8") + b"\n"

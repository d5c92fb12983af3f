"""A compaction as the stable ``compaction_update`` / ``compaction_summary_chunk`` updates.

ACP v1 (the schema of the TypeScript SDK 2.4.0) lets an agent show a context compaction as an
entity of its own, addressed by ``compactionId``: a first ``compaction_update {status:
"in_progress"}`` fixes its place in the timeline, ``compaction_summary_chunk`` appends to its
summary, and a last ``compaction_update`` gives its end (``completed``, ``cancelled``,
``failed``, with ``error``). Only for a client that declares
``clientCapabilities.session.compaction`` (``{}``); any other sees what it saw before (the
``/compact`` command's answer text, the ``_session/compact`` result).
"""

from __future__ import annotations

from typing import Any

IN_PROGRESS = "in_progress"


def supports_compaction(capabilities: Any) -> bool:
    session = capabilities.get("session") if isinstance(capabilities, dict) else None
    compaction = session.get("compaction") if isinstance(session, dict) else None
    return compaction is True or isinstance(compaction, dict)


def started(compaction_id: str) -> list[dict[str, Any]]:
    return [{"sessionUpdate": "compaction_update", "compactionId": compaction_id, "status": IN_PROGRESS}]


def ended(compaction_id: str, status: str, summary: str | None = None, error: str | None = None) -> list[dict[str, Any]]:
    updates: list[dict[str, Any]] = []
    if summary:
        updates.append({"sessionUpdate": "compaction_summary_chunk", "compactionId": compaction_id,
                        "content": {"type": "text", "text": summary}})
    last: dict[str, Any] = {"sessionUpdate": "compaction_update", "compactionId": compaction_id, "status": status}
    if error:
        last["error"] = error
    updates.append(last)
    return updates


def summary_of(result: Any) -> str | None:
    """The engine's own summary in its answer to ``session/compact`` (the seed's ``response``)."""
    response = result.get("response") if isinstance(result, dict) else None
    return response.strip() if isinstance(response, str) and response.strip() else None

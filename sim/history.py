"""History in today's engine's spelling (docs/simulator.md, Dialects).

The simulator stores messages in the seed's shape (``info.id``, tool part ``id``);
today's engine presents them with ``info.messageId``, ``info.semantics.kind`` and
parts carrying ``partId`` (and ``callId`` for tools). Only the new spelling is sent.
"""

from __future__ import annotations

from typing import Any

SEMANTICS = {"user": "user_input", "assistant": "assistant_response", "system": "system_notice"}


def present(message: dict[str, Any]) -> dict[str, Any]:
    info = message.get("info") or {}
    message_id = info.get("id")
    role = info.get("role")
    parts = []
    for index, part in enumerate(message.get("parts") or []):
        shown: dict[str, Any] = {"partId": f"{message_id}_p{index}"}
        for key, value in part.items():
            shown["callId" if key == "id" else key] = value
        parts.append(shown)
    return {"info": {"messageId": message_id, "role": role, "semantics": {"kind": SEMANTICS.get(role, role)}},
            "parts": parts}

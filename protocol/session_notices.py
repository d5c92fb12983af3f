"""The bridge's own notices to the user: the stable ``notice`` update, or an agent message.

A notice is what the bridge says itself, not the model: the turn reached its limit of model
turns, a steer was merged, the previous turn has not stopped yet. A client that declares
``clientCapabilities.session.notices`` (``{}``; ACP v1, in the schema of the TypeScript SDK
2.4.0) gets ``notice {severity, title}``, which it shows apart from the answer. Any other
client gets it as an agent message of its own, set apart from the text around it by blank
lines: a client that joins every agent message chunk into one text (most do, whatever
their ``messageId``) would otherwise glue it to the answer ("alphaZCode stopped: …").
"""

from __future__ import annotations

from typing import Any

INFO = "info"
WARNING = "warning"
SEPARATOR = "\n\n"


def supports_notices(capabilities: Any) -> bool:
    session = capabilities.get("session") if isinstance(capabilities, dict) else None
    notices = session.get("notices") if isinstance(session, dict) else None
    return notices is True or isinstance(notices, dict)


def notice_update(text: str, message_id: str, supported: bool, severity: str = INFO) -> dict[str, Any]:
    if supported:
        return {"sessionUpdate": "notice", "severity": severity, "title": text}
    return {"sessionUpdate": "agent_message_chunk", "messageId": message_id,
            "content": {"type": "text", "text": f"{SEPARATOR}{text}{SEPARATOR}"}}

"""The bridge's own notices to the user as the stable ``notice`` update.

A notice is what the bridge says itself, not the model: the turn reached its limit of model
turns, a steer was merged, a prompt waits for a compaction. A client that declares
``clientCapabilities.session.notices`` (``{}``; ACP v1, in the schema of the TypeScript SDK
2.4.0) gets ``notice {severity, title}``, which it shows apart from the answer. Any other
client gets it as agent message text set off as its own paragraph (``translator.notice_text``).
"""

from __future__ import annotations

from typing import Any

INFO = "info"
WARNING = "warning"


def supports_notices(capabilities: Any) -> bool:
    session = capabilities.get("session") if isinstance(capabilities, dict) else None
    notices = session.get("notices") if isinstance(session, dict) else None
    return notices is True or isinstance(notices, dict)


def notice(text: str, severity: str = INFO) -> dict[str, Any]:
    return {"sessionUpdate": "notice", "severity": severity, "title": text.strip()}

"""The ACP extension methods the Session runs: one handler each, one table.

Each is also accepted with a leading ``_``, as SDKs send them (``handler_for``). The Supervisor
knows only the names; the Session's handler reads the params once (``Handler.validate``) and
hands the call to its ``EnginePath`` (handler.py).
"""

from __future__ import annotations

from typing import Any

from zcode_acp.actors.session.extensions import conversation, settings, steering, tasks, v4_only
from zcode_acp.actors.session.extensions.handler import Handler

HANDLERS: dict[str, Handler[Any]] = {handler.name: handler for handler in (
    conversation.Fork(), conversation.Goal(), conversation.Compact(), conversation.Rewind(),
    conversation.RenameSession(),
    steering.SteerText(), steering.Steering(),
    settings.SetMode(), settings.SetThoughtLevel(),
    tasks.CancelBackgroundTask(), tasks.AsyncTaskStop(),
    v4_only.Queue(), v4_only.QueueEdit(), v4_only.QueueRemove(), v4_only.QueueSendNow(), v4_only.Retry(),
    v4_only.EditPrompt(), v4_only.FileChanges(),
)}


def extension_name(method: str) -> str | None:
    """``session/fork`` or ``_session/fork`` → ``session/fork``; None if not one of ours."""
    name = method[1:] if method.startswith("_") else method
    return name if name in HANDLERS else None

"""The simulator's state: sessions, turns, background tasks."""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

# After session/resume the history becomes visible gradually over this long.
HISTORY_FILL = float(os.environ.get("ZCODE_SIM_HISTORY_FILL", "0.15"))

# Sessions persist here (one JSON file each), so a new simulator process finds them.
DATA_DIR = os.environ.get("ZCODE_SIM_DATA")


@dataclass
class SimTurn:
    turn_id: str
    greenlet: Any = None
    stopped: bool = False
    # A turn no stop ends (a stuck sub-agent): only session/close or the process's death do.
    unstoppable: bool = False
    # Ended by session/close: no leftovers, no turn.completed.
    closed: bool = False
    # The 0.16 engine: the id a v4 stop must quote, and text steered into the turn, not yet absorbed.
    execution_id: str = ""
    announced: bool = False  # turn.started already sent (the 0.16 engine may send it before the send reply)
    guides: list[dict[str, Any]] = field(default_factory=list)
    # What today's turn.completed reports: the input id the send chose, the answer's text, how many
    # tools ran, when the turn began (monotonic seconds).
    input_id: str | None = None
    response: str = ""
    tool_calls: int = 0
    began: float = field(default_factory=time.monotonic)


@dataclass
class SimTask:
    task_id: str
    tool_call_id: str
    tool_name: str
    description: str
    cancelled: bool = False
    greenlet: Any = None


@dataclass
class SimSession:
    session_id: str
    workspace: dict[str, Any]
    mode: str = "yolo"
    model: str = "glm-5"
    thought: str = "high"
    title: str = "New session"
    seq: int = 0
    subscribed: bool = False
    events: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    todos: list[dict[str, Any]] = field(default_factory=list)
    lock: SimTurn | None = None
    turns: int = 0
    context_used: int = 0
    updated_at: int = field(default_factory=lambda: int(time.time() * 1000))
    failures: dict[str, int] = field(default_factory=dict)
    goal: dict[str, Any] | None = None
    tasks: dict[str, SimTask] = field(default_factory=dict)
    active: bool = True
    resumed_at: float = 0.0
    last_used: float = field(default_factory=time.monotonic)
    # The 0.16 engine: cumulative usage (session/usage), a model selection lost by a resume under
    # another workspace key, inputs queued behind the running turn, v4 commands seen, and a
    # one-shot foreign-key failure a scenario arms for the next steer.
    usage_total: dict[str, int] = field(default_factory=dict)
    model_lost: bool = False
    queue: list[str] = field(default_factory=list)
    revision: int = 0
    commands: dict[str, dict[str, Any]] = field(default_factory=dict)
    fk_once: bool = False
    compaction: SimTurn | None = None  # the 0.16 engine: the compaction running in the background
    # The 0.16 engine: the trace id create names, the deliveryKind subscribe chose (echoed on every
    # event), and when the session was created (its snapshot's createdAt).
    trace_id: str = ""
    delivery_kind: str = ""
    created_at: int = 0
    mcp_servers: list[dict[str, Any]] = field(default_factory=list)  # registered at create/resume, not connected

    def visible_messages(self) -> list[dict[str, Any]]:
        """Right after a resume the history fills up gradually (a real backend's quirk)."""
        elapsed = time.monotonic() - self.resumed_at
        if not self.resumed_at or elapsed >= HISTORY_FILL or not self.messages:
            return self.messages
        return self.messages[: int(len(self.messages) * elapsed / HISTORY_FILL)]


def hex_id(size: int = 12) -> str:
    """The hex tail of an engine id (``sess_…``, ``turn_…``)."""
    return uuid.uuid4().hex[:size]


def required(value: Any, path: str) -> None:
    """A required string parameter, refused as zod's ``.strict()`` schemas refuse it."""
    if not isinstance(value, str) or not value:
        raise SimError(-32602, f"Invalid params: {path}: Required")


class SimError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

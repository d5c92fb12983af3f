"""A conversation's blocking sub-agents as the ACP subagents RFD's child sessions (unstable).

The v4 counterpart of the legacy translator's routing (protocol/translator.py), with the same
builders and ids (protocol/subagents.py), for a client that declares
``clientCapabilities.subagents``. What the engine's ``subagent`` row holds
(``zcode-protocol-v4/rows.ts``, ``subagentRowSchema``): ``parentToolCallId`` (the Agent/Task call
that spawned it), ``subagentType``, ``status`` running|success|failed|cancelled, ``summaryText``,
optionally ``childSessionId`` (the engine's own child session, whose rows live in
``conversation/<childSessionId>``, never in the parent's), ``backgrounded``/``workId``. It has no
prompt or description: those are the Agent/Task call's ``input`` (its ``toolCall`` row, which
comes first).

* the row opens (any status but a final one, or final in a replayed history) → ``subagent_update``
  running, then the call's ``prompt`` as ``session_message``s (parent's view, child's view);
* the row ends, or its Agent/Task card settles first, or the engine goes away → ``idle``,
  ``stopReason: end_turn`` on ``success`` (a completed card), else ``_meta.zcode.outcome: failed``;
* a background sub-agent (``backgrounded``, or a call with ``run_in_background``) stays a
  background-task card, as on the legacy path.

The child id is the legacy one, ``<parent ACP session>/subagent/<parentToolCallId>``, so a client
sees the same child on either path. The sub-agent's own calls are not routed here: they are in its
own conversation, which this bridge does not subscribe (docs/v4.md, "Not built yet"). Pure.
"""

from __future__ import annotations

from typing import Any

from .. import subagents
from .conversation_signals import Update


ENDED = frozenset(("success", "failed", "cancelled"))


class ChildSessions:
    """Which sub-agents were announced as children, and which of those still run."""

    __slots__ = ("_running", "parent")

    def __init__(self, parent: str | None = None) -> None:
        self.parent = parent
        """The ACP session whose sub-agents are children; None: the client did not declare subagents."""
        self._running: dict[str, bool] = {}  # child id → not yet ended

    def _child(self, row: dict[str, Any]) -> str | None:
        call = row.get("parentToolCallId")
        if self.parent is None or row.get("backgrounded") is True:
            return None
        return subagents.child_session_id(self.parent, call if isinstance(call, str) else f"subagent-{row['rowId']}")

    def known(self, row: dict[str, Any]) -> None:
        """A row of a snapshot taken as known (a subscription after a resume): its child was announced."""
        child = self._child(row)
        if child is not None:
            self._running.setdefault(child, row.get("status") not in ENDED)

    def row(self, row: dict[str, Any], call_input: Any, out: list[Update]) -> None:
        """A ``subagent`` row appeared or changed; ``call_input`` is its Agent/Task call's input, if known."""
        child = self._child(row)
        tool_input = call_input if isinstance(call_input, dict) else {}
        if child is None or tool_input.get("run_in_background") is True:
            return
        if child not in self._running:
            shown = dict(tool_input)
            if not shown.get("subagent_type") and isinstance(row.get("subagentType"), str):
                shown["subagent_type"] = row["subagentType"]  # the engine's word when the input has none
            call = child.rpartition("/")[2]
            out.append(subagents.announce(child, shown, call))
            out.extend(subagents.prompt_messages(self.parent or "", child, call, tool_input))
            self._running[child] = True
        status = row.get("status")
        if status in ENDED:
            self._end(child, status == "success", out)

    def call_settled(self, tool_call_id: str, completed: bool, out: list[Update]) -> None:
        """An Agent/Task card reached its final status: its child ends with it, if the row has not said so."""
        if self.parent is not None:
            self._end(subagents.child_session_id(self.parent, tool_call_id), completed, out)

    def close_all(self, out: list[Update]) -> None:
        """The engine went away mid-turn: every child still running ends, failed (it can never finish now)."""
        for child in [c for c, running in self._running.items() if running]:
            self._end(child, False, out)

    def _end(self, child: str, completed: bool, out: list[Update]) -> None:
        if self._running.get(child):
            self._running[child] = False
            out.append(subagents.finished(child, completed))

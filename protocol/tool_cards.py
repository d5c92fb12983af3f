"""One tool card's state machine, the same on both engine paths (issue 30).

A card opens once (``tool_call``), may go ``pending → in_progress``, streams its output
(a terminal gets only the new bytes as ``_meta.terminal_output``; any other card's content is
replaced whole, so it carries all the output so far), and settles exactly once, ``completed`` or
``failed`` (a terminal card with ``_meta.terminal_exit``); a card a turn leaves open is closed
``failed`` by the turn's end. After its terminal status a card is silent.

The legacy translator (``translator.py``) feeds a ``Card`` from the engine's ``tool.updated``
events, the v4 one (``v4/conversation_cards.py``) from ``toolCall`` rows; each keeps only the
reading of its input. The frames are built by ``updates.py``'s builders. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import tools, updates
from .updates import Update, terminal_exit, terminal_output, tool_call_update

FINAL = frozenset(("completed", "failed"))

SUBAGENT_CALLS = frozenset(("Agent", "Task"))  # the tool calls that run a sub-agent


@dataclass(slots=True)
class Card:
    tool_call_id: str
    name: str
    input: Any
    status: str = "pending"
    terminal: bool = False
    """A Bash card of a client that renders terminals: its output goes out as ``terminal_output``."""
    background: bool = False
    """The call runs in the background (legacy: ``run_in_background``; v4: the row is ``backgrounded``)."""
    shown: str = ""
    """The output as far as the client has been sent it (the legacy path: stdout)."""
    stderr_shown: str = ""
    """The legacy path's stderr tail as far as it was sent (a v4 row has one output text)."""
    streamed: bool = False
    """Some output already went out as terminal data."""
    launched: bool = False
    """A background launch returned: its task or work, not the turn, closes the card."""
    child: str | None = None
    """A sub-agent's own call, shown in this child session (protocol/subagents.py)."""

    @property
    def final(self) -> bool:
        return self.status in FINAL

    def meta(self) -> dict[str, Any]:
        return {"claudeCode": {"toolName": self.name}}

    def opened(self, *, with_input: bool = True) -> Update:
        """The ``tool_call`` that opens the card: its title, kind, input, locations; an edit's diff
        (so a permission asked for it shows what it would do); a terminal for a terminal card."""
        tool_input = self.input if isinstance(self.input, dict) else None
        start = updates.tool_call(self.tool_call_id, tools.tool_title(self.name, tool_input), tools.tool_kind(self.name),
                                  self.status, self.meta(),
                                  raw_input=tool_input if with_input else None,
                                  locations=tools.tool_locations(tool_input) if with_input and tool_input is not None
                                  else None)
        diff = tools.diff_content(self.name, tool_input) if tool_input is not None else []
        if diff:
            start["content"] = diff
        if self.terminal:
            start["content"] = [{"type": "terminal", "terminalId": self.tool_call_id}]
            start["_meta"]["terminal_info"] = {"terminal_id": self.tool_call_id}
        if self.background:
            start["_meta"]["background"] = True
        return start

    def advance(self, status: str, **fields: Any) -> list[Update]:
        """A status that is not terminal (``in_progress``), with any other field that changed."""
        if self.final or status in FINAL:
            return []
        if status != self.status:
            self.status = status
            fields = {"status": status, **fields}
        return [tool_call_update(self.tool_call_id, **fields)] if fields else []

    def stream_terminal(self, data: str) -> list[Update]:
        """New bytes for a terminal card (what the reader found new since ``shown``)."""
        if not data or self.final:
            return []
        self.streamed = True
        return [terminal_output(self.tool_call_id, data)]

    def show(self, text: str, **fields: Any) -> list[Update]:
        """A running card's output so far: the new suffix on a terminal, else the whole text as content."""
        if self.final:
            return []
        if self.terminal:
            data = tools.new_suffix(self.shown, text)
            self.shown = text
            return self.stream_terminal(data)
        if text == self.shown:
            return []
        self.shown = text
        return [tool_call_update(self.tool_call_id, content=tools.text_content(text), **fields)]

    def settle(self, failed: bool, text: str, *, exit_code: int | None = None,
               raw_output: dict[str, Any] | None = None, meta: dict[str, Any] | None = None,
               fields: dict[str, Any] | None = None) -> list[Update]:
        """The card's one terminal status. A terminal card: the output it has not shown, then its exit;
        any other: its result as content (an edit's diff when it succeeded, else the text), with
        ``fields`` that changed with it (a title, an input)."""
        if self.final:
            return []
        status = "failed" if failed else "completed"
        self.status = status
        extra: dict[str, Any] = {"rawOutput": raw_output} if raw_output is not None else {}
        card_meta = {**self.meta(), **(meta or {})}
        if self.name in SUBAGENT_CALLS and not self.background:
            sub = tools.subagent_meta(text)
            if sub:
                card_meta["subagent"] = sub  # a synchronous sub-agent's usage
        if self.terminal:
            out = self._unshown_output(text)
            if exit_code is None:
                exit_code = 1 if failed else 0
            return out + [terminal_exit(self.tool_call_id, status, exit_code, **extra, _meta=card_meta)]
        content = [] if failed else tools.diff_content(self.name, self.input if isinstance(self.input, dict) else None)
        if not content and text:
            content = tools.text_content(text)
        return [tool_call_update(self.tool_call_id, status=status, **(fields or {}), content=content, **extra,
                                 _meta=card_meta)]

    def _unshown_output(self, text: str) -> list[Update]:
        """A terminal card's last words: what of ``text`` it has not shown yet (when ``text`` goes on
        from what it showed; output rewritten since is not shown again)."""
        if not text.startswith(self.shown):
            return []
        out = [terminal_output(self.tool_call_id, text[len(self.shown):])] if len(text) > len(self.shown) else []
        self.streamed = self.streamed or bool(out)
        self.shown = text
        return out

    def hand_over(self, text: str, raw_output: dict[str, Any] | None) -> list[Update]:
        """A background launch returned (the legacy path's Bash ``run_in_background``): the card stays
        ``in_progress``, marked ``_meta.background``, with what the launch printed; its task closes it."""
        self.status = "in_progress"
        self.launched = True
        extra: dict[str, Any] = {"rawOutput": raw_output} if raw_output is not None else {}
        if self.terminal:
            out = self._unshown_output(text)
            return out + [tool_call_update(self.tool_call_id, status="in_progress", **extra,
                                           _meta={"background": True, **self.meta()})]
        content = tools.diff_content(self.name, self.input) or (tools.text_content(text) if text else [])
        return [tool_call_update(self.tool_call_id, status="in_progress", content=content, **extra,
                                 _meta={**self.meta(), "background": True})]

    def close(self) -> list[Update]:
        """The turn ended (or the engine went away) with the card open: it fails, once."""
        if self.final or self.launched:
            return []
        self.status = "failed"
        return [updates.tool_call_failed(self.tool_call_id)]

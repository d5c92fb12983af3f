"""The tool and sub-agent cards of a conversation: rows → cards with their status machine.

A ``toolCall`` row is a card under its ``toolCallId``: opened once, updated when its status or
input change, its output streamed (a terminal for a client that renders them, else the content
so far), one final status, then silent; a replayed history shows a settled call as one card
with its result. A ``subagent`` row is a card of its own, or shown by its Agent call's card.
``ToolCards`` is the lower layer of ``ConversationTranslator`` (``conversation.py``), which
owns the state these methods read (declared below); pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import tools, updates
from ..translator import terminal_exit, terminal_output
from .conversation_children import ChildSessions
from .work_cards import WorkCards
from .conversation_signals import Translation, Update


TOOL_STATUSES = {
    "inputStreaming": "pending",
    "pendingApproval": "pending",
    "running": "in_progress",
    "success": "completed",
    "error": "failed",
    "cancelled": "failed",
}


SUBAGENT_STATUSES = {"running": "in_progress", "success": "completed", "failed": "failed", "cancelled": "failed"}


FINAL = frozenset(("completed", "failed"))


SUBAGENT_CALLS = frozenset(("Agent", "Task"))  # the tool calls that run a sub-agent


@dataclass(slots=True)
class _Card:
    status: str
    input: Any = None
    lingers: bool = False
    """A backgrounded tool call: its work card, not the turn, closes it."""
    terminal: bool = False
    """A Bash card of a client that renders terminals: its output goes out as ``terminal_output``."""
    shown: str = ""
    """The tool's output as far as the client has been sent it (``output.text`` grows while it runs)."""


def output_text(row: dict[str, Any]) -> str:
    output = row.get("output")
    text = output.get("text") if isinstance(output, dict) else None
    return text if isinstance(text, str) else ""


class ToolCards:
    """Cards of tool calls and sub-agents; the translator (conversation.py) sets this state up."""

    _cards: dict[str, _Card]
    _row_cards: dict[int, str]
    _launches: dict[str, str]
    _works: WorkCards
    children: ChildSessions
    _terminal: bool
    _replaying: bool

    def _is_terminal(self, row: dict[str, Any]) -> bool:
        # A call replayed settled ran no terminal this client could watch: a plain card with its
        # result, as the legacy path replays one (protocol/history.py).
        replayed_settled = self._replaying and TOOL_STATUSES.get(str(row.get("status"))) in FINAL
        return self._terminal and row.get("toolName") == "Bash" and not replayed_settled

    @staticmethod
    def _tool_output(card_id: str, card: _Card, text: str, out: Translation) -> None:
        """What the running tool printed since the client last saw its output.

        A terminal gets only what is new (it appends); any other card's content is replaced
        whole, so it carries all the output so far (as the legacy path shows a tool's tail).
        """
        if card.terminal:
            data = tools.new_suffix(card.shown, text)
            card.shown = text
            if data:
                out.updates.append(terminal_output(card_id, data))
        elif text != card.shown:
            card.shown = text
            out.updates.append({"sessionUpdate": "tool_call_update", "toolCallId": card_id,
                                "content": tools.text_content(text)})

    def _tool_row(self, row: dict[str, Any], out: Translation) -> None:
        card_id = row.get("toolCallId")
        if not isinstance(card_id, str):
            return
        name = row.get("toolName") if isinstance(row.get("toolName"), str) else None
        tool_input = row.get("input")
        status = TOOL_STATUSES.get(str(row.get("status")), "pending")
        self._row_cards[row["rowId"]] = card_id
        if isinstance(row.get("workId"), str):
            self._launches[row["workId"]] = card_id
        if (row.get("backgrounded") is True and name == "Bash" and status in FINAL
                and card_id not in self._works.closed_card_ids()):
            status = "in_progress"  # the launch returned; its work carries on in this card (work_cards.py)
        card = self._cards.get(card_id)
        if card is None:
            start = updates.tool_call(card_id, tools.tool_title(name, tool_input), tools.tool_kind(name), status,
                                      {"claudeCode": {"toolName": name or ""}})
            if isinstance(tool_input, dict):
                start["rawInput"] = tool_input
                start["locations"] = tools.tool_locations(tool_input)
                diff = tools.diff_content(name, tool_input)
                if diff:
                    start["content"] = diff
            terminal = self._is_terminal(row)
            if terminal:
                start["content"] = [{"type": "terminal", "terminalId": card_id}]
                start["_meta"]["terminal_info"] = {"terminal_id": card_id}
            out.updates.append(start)
            card = self._cards[card_id] = _Card(status, tool_input, row.get("backgrounded") is True, terminal)
            if status not in FINAL:
                self._tool_output(card_id, card, output_text(row), out)
                return
            if not terminal:  # a call first seen settled (a replayed history): one card with its result
                out.updates.pop()
                self._settled_card(start, card, row, out)
                return
            status_changed = False
        else:
            if card.status in FINAL:
                return
            status_changed = status != card.status
        fields: dict[str, Any] = {}
        if status_changed:
            fields["status"] = status
        if tool_input != card.input and isinstance(tool_input, dict):
            fields["title"] = tools.tool_title(name, tool_input)
            fields["rawInput"] = tool_input
            fields["locations"] = tools.tool_locations(tool_input)
        if status in FINAL and card.terminal:
            self._terminal_end(card_id, card, row, status, fields, out)
            return
        if status in FINAL:
            content = self._tool_result(row)
            if content:
                fields["content"] = content
            if isinstance(row.get("output"), dict):
                fields["rawOutput"] = row["output"]
            output = row.get("output")
            text = output.get("text") if isinstance(output, dict) else None
            sub = tools.subagent_meta(text) if name in SUBAGENT_CALLS and isinstance(text, str) else None
            if sub and row.get("backgrounded") is not True:  # a synchronous sub-agent's usage, as the legacy card has it
                fields["_meta"] = {"claudeCode": {"toolName": name}, "subagent": sub}
        card.status, card.input = status, tool_input
        card.lingers = row.get("backgrounded") is True
        if fields:
            out.updates.append({"sessionUpdate": "tool_call_update", "toolCallId": card_id, **fields})
        if status in FINAL and name in SUBAGENT_CALLS:  # its child ends with it, as on the legacy path
            self.children.call_settled(card_id, status == "completed", out.updates)
        if status not in FINAL:
            self._tool_output(card_id, card, output_text(row), out)

    def _settled_card(self, start: Update, card: _Card, row: dict[str, Any], out: Translation) -> None:
        """A non-terminal card that opens settled carries its result in its ``tool_call``, as a
        replayed legacy history has it, rather than in an update right after."""
        closing = Translation()
        card.status = "pending"  # so the settle below is a change
        self._tool_row(row, closing)
        settle, *after = closing.updates  # after: an Agent call's child ending with it (conversation_children.py)
        settle.pop("sessionUpdate")
        settle.pop("toolCallId")
        meta = {**start["_meta"], **settle.pop("_meta", {})}
        out.updates.append({**start, **settle, "_meta": meta})
        out.updates.extend(after)

    def _terminal_end(self, card_id: str, card: _Card, row: dict[str, Any], status: str, fields: dict[str, Any],
                      out: Translation) -> None:
        """A terminal card settles: the output it has not shown yet, then its exit (as the legacy path ends one)."""
        fields.pop("status", None)
        if fields:
            out.updates.append({"sessionUpdate": "tool_call_update", "toolCallId": card_id, **fields})
        text = output_text(row)
        if not text and isinstance(row.get("error"), dict) and isinstance(row["error"].get("message"), str):
            text = row["error"]["message"]
        if text.startswith(card.shown) and len(text) > len(card.shown):
            out.updates.append(terminal_output(card_id, text[len(card.shown):]))
        card.shown = text if text.startswith(card.shown) else card.shown
        card.status, card.input = status, row.get("input")
        card.lingers = row.get("backgrounded") is True
        output = row.get("output") if isinstance(row.get("output"), dict) else None
        exit_code = tools.result_exit_code(output)
        if exit_code is None:
            exit_code = 0 if status == "completed" else 1
        extra: dict[str, Any] = {"rawOutput": output} if output is not None else {}
        out.updates.append(terminal_exit(card_id, status, exit_code, **extra,
                                         _meta={"claudeCode": {"toolName": row.get("toolName") or ""}}))

    @staticmethod
    def _tool_result(row: dict[str, Any]) -> list[dict[str, Any]]:
        error = row.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str) and error["message"]:
            return tools.text_content(error["message"])
        output = row.get("output")
        if isinstance(output, dict) and isinstance(output.get("text"), str) and output["text"]:
            return tools.text_content(output["text"])
        return []

    def _subagent_row(self, row: dict[str, Any], out: Translation) -> None:
        card_id = f"subagent-{row['rowId']}"
        call = self._cards.get(row["parentToolCallId"]) if isinstance(row.get("parentToolCallId"), str) else None
        self.children.row(row, call.input if call is not None else None, out.updates)
        if self._shown_by_its_call(row, card_id):
            return
        self._row_cards[row["rowId"]] = card_id
        status = SUBAGENT_STATUSES.get(str(row.get("status")), "in_progress")
        summary = row.get("summaryText")
        content = tools.text_content(summary) if status in FINAL and isinstance(summary, str) and summary else []
        card = self._cards.get(card_id)
        if card is None:
            meta = {k: row[k] for k in ("parentToolCallId", "childSessionId", "subagentType") if isinstance(row.get(k), str)}
            start = updates.tool_call(card_id, f"Subagent: {row.get('subagentType') or 'agent'}", "other", status,
                                      {"zcode": meta})
            if content:
                start["content"] = content
            out.updates.append(start)
            self._cards[card_id] = _Card(status, lingers=row.get("backgrounded") is True)
            return
        card.lingers = row.get("backgrounded") is True
        if card.status in FINAL or card.status == status:
            return
        update: Update = {"sessionUpdate": "tool_call_update", "toolCallId": card_id, "status": status}
        if content:
            update["content"] = content
        card.status = status
        out.updates.append(update)

    def _shown_by_its_call(self, row: dict[str, Any], card_id: str) -> bool:
        """A sub-agent whose Agent call has a card here is shown by that card, as on the legacy path
        (one card per sub-agent; its own tool calls name that card as their parent)."""
        parent = row.get("parentToolCallId")
        return card_id not in self._cards and isinstance(parent, str) and parent in self._cards

    def has_card(self, card_id: str) -> bool:
        """Whether this translator opened the card (a tool row's, a sub-agent's, a work's)."""
        return card_id in self._cards or card_id in self._works.card_ids()

    def close_open_cards(self) -> list[Update]:
        """The engine went away mid-turn: every card still open fails, once (it can never settle now)."""
        out = Translation()
        out.updates.extend(self._works.close_all())  # a launch card closes as its work's, with its meta
        for card_id in self._works.closed_card_ids():
            card = self._cards.get(card_id)
            if card is not None and card.status not in FINAL:
                card.status = "failed"
        for card_id in list(self._cards):
            self._close(card_id, out)
        self.children.close_all(out.updates)
        return out.updates

    def _close(self, card_id: str, out: Translation) -> None:
        card = self._cards.get(card_id)
        if card is not None and card.status not in FINAL:
            card.status = "failed"
            out.updates.append(updates.tool_call_failed(card_id))

"""The tool and sub-agent cards of a conversation: rows → cards with their status machine.

A ``toolCall`` row is a card under its ``toolCallId``, read into the steps of the card state
machine both engine paths share (``protocol/tool_cards.py``): opened once, updated when its status
or input change, its output streamed, one final status, then silent; a replayed history shows a settled call as one card
with its result. A ``subagent`` row is a card of its own, or shown by its Agent call's card.
``ToolCards`` is the lower layer of ``ConversationTranslator`` (``conversation.py``), which
owns the state these methods read (declared below); pure.
"""

from __future__ import annotations

from typing import Any

from .. import tools, updates
from ..tool_cards import FINAL as FINAL  # re-exported: conversation.py reads it
from ..tool_cards import SUBAGENT_CALLS, Card
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


def output_text(row: dict[str, Any]) -> str:
    output = row.get("output")
    text = output.get("text") if isinstance(output, dict) else None
    return text if isinstance(text, str) else ""


def row_card(row: dict[str, Any], terminal: bool) -> Card:
    """The card of a ``toolCall`` row, as the row says it is now (a new card, or one attached to)."""
    name = row.get("toolName")
    status = TOOL_STATUSES.get(str(row.get("status")), "pending")
    return Card(str(row["toolCallId"]), name if isinstance(name, str) else "", row.get("input"), status,
                terminal=terminal, launched=row.get("backgrounded") is True)


class ToolCards:
    """Cards of tool calls and sub-agents; the translator (conversation.py) sets this state up."""

    _cards: dict[str, Card]
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

    def _tool_row(self, row: dict[str, Any], out: Translation) -> None:
        """A ``toolCall`` row → the steps of its card (protocol/tool_cards.py): open, advance,
        output, settle. ``launched`` marks a backgrounded call, which its work card closes."""
        card_id = row.get("toolCallId")
        if not isinstance(card_id, str):
            return
        tool_input = row.get("input")
        status = TOOL_STATUSES.get(str(row.get("status")), "pending")
        self._row_cards[row["rowId"]] = card_id
        if isinstance(row.get("workId"), str):
            self._launches[row["workId"]] = card_id
        backgrounded = row.get("backgrounded") is True
        if (backgrounded and row.get("toolName") == "Bash" and status in FINAL
                and card_id not in self._works.closed_card_ids()):
            status = "in_progress"  # the launch returned; its work carries on in this card (work_cards.py)
        card = self._cards.get(card_id)
        if card is None:
            card = self._cards[card_id] = row_card(row, self._is_terminal(row))
            card.status = status
            if status in FINAL and not card.terminal:  # first seen settled (a replayed history): one card with its result
                out.updates.append(self._settled_card(card, row))
                if card.name in SUBAGENT_CALLS:  # its child ends with it (conversation_children.py)
                    self.children.call_settled(card_id, status == "completed", out.updates)
                return
            out.updates.append(card.opened(with_input=isinstance(tool_input, dict)))
            if status in FINAL:
                card.status = "in_progress"  # a terminal card opened settled: its exit follows
        if card.final:
            return
        card.launched = card.background = backgrounded
        fields: dict[str, Any] = {}
        if tool_input != card.input and isinstance(tool_input, dict):
            card.input = tool_input
            fields = {"title": tools.tool_title(card.name, tool_input), "rawInput": tool_input,
                      "locations": tools.tool_locations(tool_input)}
        if status not in FINAL:
            out.updates.extend(card.advance(status, **fields))
            out.updates.extend(card.show(output_text(row)))
            return
        if fields and card.terminal:  # a terminal's exit carries no input: it goes first
            out.updates.append(updates.tool_call_update(card_id, **fields))
            fields = {}
        output = row.get("output") if isinstance(row.get("output"), dict) else None
        out.updates.extend(card.settle(status == "failed", self._result_text(row, card.terminal), raw_output=output,
                                       exit_code=tools.result_exit_code(output), fields=fields))
        if card.name in SUBAGENT_CALLS:  # its child ends with it, as on the legacy path
            self.children.call_settled(card_id, status == "completed", out.updates)

    def _settled_card(self, card: Card, row: dict[str, Any]) -> Update:
        """A non-terminal card that opens settled carries its result in its ``tool_call``, as a
        replayed legacy history has it, rather than in an update right after."""
        start = card.opened(with_input=isinstance(card.input, dict))
        card.status = "pending"  # so the settle below is the card's one terminal status
        card.background = row.get("backgrounded") is True
        output = row.get("output") if isinstance(row.get("output"), dict) else None
        [settle] = card.settle(TOOL_STATUSES.get(str(row.get("status"))) == "failed", self._result_text(row, False),
                               raw_output=output)
        settle.pop("sessionUpdate")
        settle.pop("toolCallId")
        if not settle.get("content"):
            settle.pop("content")
        meta = {**start["_meta"], **settle.pop("_meta", {})}
        return {**start, **settle, "_meta": meta}

    @staticmethod
    def _result_text(row: dict[str, Any], terminal: bool) -> str:
        """What a settled row shows: a terminal its output (else the error), any other card the error
        first (the reason it failed), else the output."""
        error = row.get("error")
        message = error.get("message") if isinstance(error, dict) else None
        message = message if isinstance(message, str) else ""
        text = output_text(row)
        if terminal:
            return text or message
        return message or text

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
            self._cards[card_id] = Card(card_id, "", None, status, launched=row.get("backgrounded") is True)
            return
        card.launched = row.get("backgrounded") is True
        if card.status in FINAL or card.status == status:
            return
        update = updates.tool_call_update(card_id, status=status)
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
        if card is not None and card.status not in FINAL:  # the engine is gone: even a launched card fails
            card.launched = False
            out.updates.extend(card.close())

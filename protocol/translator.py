"""Backend turn events → ACP ``session/update`` payloads (docs/protocol-mapping.md, "Events → `session/update`").

One ``TurnTranslator`` lives for one prompt turn. It reads the turn's
``tool.updated`` events into steps of its tool cards, whose state machine
(open once, settle once, cumulative output tails sent as new suffixes only) is
``tool_cards.py``'s, the same the v4 path's rows feed.

``feed(event)`` takes one ``session/event`` params dict (already attributed to
this turn) and returns the ACP ``update`` objects it produces, in order.
Turn boundaries (``turn.started``/``completed``/``failed``) are the Turn's
business, not the translator's: they produce nothing here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from json.encoder import encode_basestring
from typing import Any

from . import framing, jsonrpc, session_notices, subagents, tools, updates
from .tool_cards import Card
from .events import MODEL_STREAMING, SESSION_UPDATED, STREAM_RECOVERY_UPDATED, TOOL_UPDATED, payload
from .i18n import EN, t
from .recovery import RetryCard
from .usage import context_usage_update


def agent_text(text: str, message_id: str) -> dict[str, Any]:
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}, "messageId": message_id}


PARAGRAPH = "\n\n"


def notice_text(text: str, after_text: bool = True) -> str:
    """A notice sent as agent message text, set off as its own paragraph: many clients ignore
    ``messageId`` and join every chunk, so the answer must never glue to it ("alphaZCode stopped")
    nor it to the next text. ``after_text`` False: nothing was shown before it, no break first."""
    return (PARAGRAPH if after_text else "") + text.strip() + PARAGRAPH


def notice_chunk(text: str, message_id: str) -> dict[str, Any]:
    """A notice the Session sends between or around turns (text may precede it)."""
    return agent_text(notice_text(text), message_id)


def between_turns_notice(text: str, capabilities: Any, message_id: str) -> dict[str, Any]:
    """The bridge's own word between turns: a ``notice`` for a client that declared
    ``session.notices``, else an agent message set off as its own paragraph (protocol/session_notices.py)."""
    if session_notices.supports_notices(capabilities):
        return session_notices.notice(text)
    return notice_chunk(text, message_id)


_MARK = "\u2063delta\u2063"  # never escaped, so it can be found in the encoded line


class TextChunkLines:
    """``agent_message_chunk`` notifications as bytes from a pre-encoded template.

    A text delta is the hot path (docs/performance.md): building three nested
    dicts and encoding them with ujson costs ~1.5 µs, the template around the
    escaped delta ~0.1 µs. The template is cut from the slow path's own output,
    so the bytes are the same (``tests/protocol/test_hot_path.py``).
    """

    __slots__ = ("_head", "_message_id", "_session_id", "_tail")

    def __init__(self, session_id: str) -> None:
        self._session_id = session_id
        self._message_id: str | None = None
        self._head = self._tail = b""

    def line(self, message_id: str, delta: str) -> bytes:
        if message_id != self._message_id:
            sample = framing.encode(jsonrpc.session_update(self._session_id, agent_text(_MARK, message_id)))
            head, tail = sample.split(encode_basestring(_MARK).encode("utf-8"))
            self._head, self._tail, self._message_id = head, tail, message_id
        return self._head + encode_basestring(delta).encode("utf-8") + self._tail


@dataclass
class TurnTranslator:
    message_id: str
    terminal_output: bool = False
    cards: dict[str, Card] = field(default_factory=dict)
    saw_tool_result: bool = False
    plan: list[dict[str, str]] | None = None  # the last plan this turn showed (or was given)
    last_usage: dict[str, Any] | None = None  # the last context meter this turn showed
    _declared: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    _segment: int = 0
    _text_shown: bool = False  # text since the last notice: the next notice starts a paragraph
    lang: str = EN  # the language of the cards the bridge titles itself (protocol/i18n)
    notices: bool = False  # a client declared session.notices: the bridge's notices as ``notice``
    subagents: bool = False  # a client declared subagents: sub-agents as child sessions (protocol/subagents.py)
    session_id: str = ""  # the parent session, whose id the child session ids are derived from
    _children: dict[str, bool] = field(default_factory=dict)  # child session → still running
    _waiting: dict[str, set[str]] = field(default_factory=dict)  # child session → its cards a dialog waits on
    retry: RetryCard = field(init=False)  # the engine's own retries, while they last (protocol/recovery.py)

    def __post_init__(self) -> None:
        self.retry = RetryCard(self.message_id, self.lang)

    # -- text ------------------------------------------------------------

    def _message_id(self) -> str:
        return f"{self.message_id}-{self._segment}" if self._segment else self.message_id

    def notice(self, text: str, severity: str = session_notices.INFO) -> dict[str, Any]:
        """What the bridge says itself, not the model (protocol/session_notices.py)."""
        self._segment += 1
        if self.notices:
            update = session_notices.notice(text, severity)
        else:
            update = agent_text(notice_text(text, self._text_shown), f"{self.message_id}-notice-{self._segment}")
        self._segment += 1
        self._text_shown = False
        return update

    # -- entry point -----------------------------------------------------------

    def text_delta(self, event: dict[str, Any]) -> tuple[str, str] | None:
        """(message id, delta) when ``feed(event)`` would be exactly one ``agent_text``; else None."""
        if event.get("type") != MODEL_STREAMING:
            return None
        body = event.get("payload")
        if type(body) is not dict or body.get("kind") != "text_delta":
            return None
        delta = body.get("delta")
        if type(delta) is not str or not delta or (self.subagents and "parentToolCallId" in body):
            return None
        self._text_shown = True
        return self._message_id(), delta

    def feed(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        return self._route(self._feed(event))

    def _feed(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        kind = event.get("type")
        body = payload(event)
        if kind == MODEL_STREAMING:
            if self.retry.open and body.get("kind") in ("text_delta", "reasoning_delta", "tool_call"):
                return self.retry.progress() + self._streaming(body)  # the model is back: the retry is over
            return self._streaming(body)
        if kind == STREAM_RECOVERY_UPDATED:
            return self.retry.stream_recovery(body)
        if kind == TOOL_UPDATED:
            if body.get("kind") == "batch":
                return self._batch(body)
            return self._tool(body)
        if kind == SESSION_UPDATED:
            return self.retry.session_updated(body) + self.usage(context_usage_update(body))
        return []

    def usage(self, update: dict[str, Any] | None) -> list[dict[str, Any]]:
        """A ``usage_update`` unless it repeats the last one this turn showed."""
        if not update or update == self.last_usage:
            return []
        self.last_usage = update
        return [update]

    def _streaming(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        kind = body.get("kind")
        parent = body.get("parentToolCallId") if self.subagents else None
        if isinstance(parent, str) and kind in ("text_delta", "reasoning_delta"):
            return self._child_text(parent, kind, body.get("delta"))
        if kind == "text_delta":
            delta = body.get("delta")
            if isinstance(delta, str) and delta:
                self._text_shown = True
                return [agent_text(delta, self._message_id())]
        elif kind == "reasoning_delta":
            delta = body.get("delta")
            if isinstance(delta, str) and delta:
                return [{
                    "sessionUpdate": "agent_thought_chunk",
                    "content": {"type": "text", "text": delta},
                    "messageId": f"{self._message_id()}-thought",
                }]
        elif kind == "tool_call":
            tool_call_id = body.get("toolCallId")
            if isinstance(tool_call_id, str):
                tool_input = body.get("input")
                self._declared[tool_call_id] = (
                    str(body.get("toolName") or "Tool"),
                    tool_input if isinstance(tool_input, dict) else {},
                )
        return []

    # -- tool cards ------------------------------------------------------------

    def _open(self, tool_call_id: str, body: dict[str, Any]) -> tuple[Card, dict[str, Any]]:
        name, tool_input = self._declared.pop(tool_call_id, (None, {}))
        name = body.get("toolName") or name or "Tool"
        if isinstance(body.get("input"), dict) and not body.get("inputOmitted"):
            tool_input = body["input"]
        card = Card(tool_call_id, str(name), tool_input, terminal=self.terminal_output and name == "Bash",
                    background=bool(tool_input.get("run_in_background")))
        self.cards[tool_call_id] = card
        self._segment += 1  # text after a tool card is a new message
        return card, card.opened()

    def ensure_card(self, tool_call_id: str, tool_name: str, tool_input: dict[str, Any]) -> list[dict[str, Any]]:
        """Open the card an interaction refers to, unless it is already shown."""
        if tool_call_id in self.cards:
            return []
        _, start = self._open(tool_call_id, {"toolName": tool_name, "input": tool_input})
        return self._route([start])

    # -- sub-agents as child sessions (protocol/subagents.py) ------------------------------------

    def _child_text(self, parent: str, kind: str, delta: Any) -> list[dict[str, Any]]:
        if not isinstance(delta, str) or not delta:
            return []
        child = subagents.child_session_id(self.session_id, parent)
        message_id = f"{self.message_id}-{parent}" + ("-thought" if kind == "reasoning_delta" else "")
        update = agent_text(delta, message_id)
        if kind == "reasoning_delta":
            update["sessionUpdate"] = "agent_thought_chunk"
        return [subagents.in_child(update, child)]

    def dialog_waits(self, tool_call_id: str, waiting: bool) -> list[dict[str, Any]]:
        """A dialog about a sub-agent's own call opened (its child ``requires_action``) or was settled
        (``running`` again once no other dialog of that child waits). A dialog about the Agent/Task
        call itself is the parent's (the RFD: a parent's request to delegate stays a parent interaction)."""
        card = self.cards.get(tool_call_id)
        child = card.child if card is not None else None
        if not self.subagents or child is None or not self._children.get(child):
            return []
        cards = self._waiting.setdefault(child, set())
        before = bool(cards)
        if waiting:
            cards.add(tool_call_id)
        else:
            cards.discard(tool_call_id)
        if bool(cards) == before:
            return []
        return [subagents.state(child, "requires_action" if cards else "running")]

    def _route(self, out: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Put a sub-agent's updates in its child session, announced first, and end the child with
        its Agent/Task card. Without the client's capability, ``out`` as it is."""
        if not self.subagents or not out:
            return out
        routed: list[dict[str, Any]] = []
        for update in out:
            tool_call_id = update.get("toolCallId")
            card = self.cards.get(tool_call_id) if isinstance(tool_call_id, str) else None
            child = update.get(subagents.CHILD) or (card.child if card is not None else None)
            if child is not None:
                if child not in self._children:  # traffic for a call this turn has not announced
                    self._children[child] = True
                    routed.append(subagents.announce(child, {}, child.rpartition("/")[2]))
                routed.append(subagents.in_child(update, child))
                continue
            routed.append(update)
            if card is None or card.name not in subagents.SUBAGENT_TOOLS or card.background:
                continue
            own = subagents.child_session_id(self.session_id, card.tool_call_id)
            if own not in self._children:
                self._children[own] = True
                routed.append(subagents.announce(own, card.input, tools.tool_title(card.name, card.input)))
                routed.extend(subagents.prompt_messages(self.session_id, own, card.tool_call_id, card.input))
            if card.final and self._children[own]:
                self._children[own] = False
                routed.append(subagents.finished(own, card.status == "completed"))
        return routed

    def _tool(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        tool_call_id = body.get("toolCallId")
        if not isinstance(tool_call_id, str):
            return []
        out: list[dict[str, Any]] = []
        card = self.cards.get(tool_call_id)
        if card is None:
            card, start = self._open(tool_call_id, body)
            parent = body.get("parentToolCallId")
            if self.subagents and isinstance(parent, str) and parent != tool_call_id:
                card.child = subagents.child_session_id(self.session_id, parent)
            out.append(start)
        if card.final:
            return out
        kind = body.get("kind")
        if kind == "started":
            out.extend(self._start(card))
        elif kind == "progress":
            out.extend(self._progress(card, body))
        elif kind == "result":
            out.extend(self._result(card, body.get("result")))
            if card.name == "TodoWrite" and not tools.result_failed(body.get("result")):
                out.extend(self.plan_from_todos(card.input.get("todos")))  # the plan follows the todos live
        elif kind == "error":
            out.extend(self._error(card, body.get("error")))
        return out

    def _start(self, card: Card) -> list[dict[str, Any]]:
        return card.advance("in_progress") if card.status == "pending" else []

    def _progress(self, card: Card, body: dict[str, Any]) -> list[dict[str, Any]]:
        out = self._start(card)
        stdout_tail, stderr_tail = body.get("stdoutTail"), body.get("stderrTail")
        stdout: str = stdout_tail if isinstance(stdout_tail, str) else card.shown
        stderr: str = stderr_tail if isinstance(stderr_tail, str) else card.stderr_shown
        if card.terminal:
            data = tools.new_suffix(card.shown, stdout) + tools.new_suffix(card.stderr_shown, stderr)
            card.shown, card.stderr_shown = stdout, stderr
            out.extend(card.stream_terminal(data))
        elif (stdout, stderr) != (card.shown, card.stderr_shown):
            # Content replaces what a card shows, so it carries the current tail of both streams.
            card.stderr_shown = stderr
            text = stdout + ("\n" if stderr and stdout and not stdout.endswith("\n") else "") + stderr
            out.extend(card.show(text, rawOutput={"stdout": stdout, "stderr": stderr}))
            card.shown = stdout
        return out

    def _result(self, card: Card, result: Any) -> list[dict[str, Any]]:
        self.saw_tool_result = True
        text = tools.result_text(result)
        failed = tools.result_failed(result)
        raw = tools.raw_output(result).get("rawOutput")
        if card.background and card.name == "Bash" and not failed:
            return card.hand_over(text, raw)  # a background launch returned: its task closes the card
        return card.settle(failed, text, exit_code=tools.result_exit_code(result), raw_output=raw)

    def _error(self, card: Card, error: Any) -> list[dict[str, Any]]:
        self.saw_tool_result = True
        if isinstance(error, dict):
            text = str(error.get("message") or error.get("error") or error)
        else:
            text = str(error or t(self.lang, "tool.failed"))  # the engine said nothing: our words
        return card.settle(True, text, exit_code=1, raw_output={"error": text})

    def _batch(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        ids = body.get("toolCallIds")
        if not isinstance(ids, list):
            return []
        status = "failed" if isinstance(body.get("errorCount"), int) and body["errorCount"] > 0 else "completed"
        out = []
        for tool_call_id in ids:
            card = self.cards.get(tool_call_id) if isinstance(tool_call_id, str) else None
            if card is None or card.final or card.launched:
                continue
            card.status = status
            if card.terminal:
                out.append(updates.terminal_exit(tool_call_id, status, 1 if status == "failed" else 0))
            else:
                out.append(updates.tool_call_update(tool_call_id, status=status))
        return out

    # -- hand-over ----------------------------------------------------------------

    def plan_from_todos(self, todos: Any) -> list[dict[str, Any]]:
        """A ``plan`` update when the todos differ from the plan last shown."""
        entries = updates.plan_entries(todos)
        if entries is None or entries == self.plan or (not entries and not self.plan):
            return []
        self.plan = entries
        return [updates.plan(entries)]

    def close_open_cards(self) -> list[dict[str, Any]]:
        """A turn that ended abnormally: every card still open (except those a
        background task took over) closes ``failed``, once."""
        updates = self.retry.close("failed")
        for card in sorted(self.open_cards(), key=lambda card: card.child is None):  # a child's before it ends
            updates.extend(card.close())
        return self._route(updates)

    def close_card(self, tool_call_id: str) -> list[dict[str, Any]]:
        """Close one card ``failed`` if it is still open here (a dialog abandoned)."""
        card = self.cards.get(tool_call_id)
        return self._route(card.close()) if card is not None else []

    def open_cards(self) -> list[Card]:
        return [card for card in self.cards.values() if not card.final]

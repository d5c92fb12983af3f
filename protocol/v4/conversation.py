"""A conversation topic's changes → ACP ``session/update`` payloads, as deltas.

``ConversationTranslator.translate`` takes the change records conversation_apply.py
returns and says what to send: text and thought chunks carry only what is new (a row's
text is remembered by how much of it went out), tool cards follow their status machine
(opened once, updated when status or input change, one terminal status, then silent),
and session-wide keys become ``session_info_update`` (title), ``plan``,
``usage_update`` (context meter) and ``current_mode_update``. What is not an update but
something the session must act on comes back as a signal: a turn that ended (with its
stop reason, or the engine's error), interactions opened or closed (dialogs to show or
withdraw; answering them is ``commands.resolve_interaction``), and the engine's input
routing (what a prompt sent now would do).

A snapshot (``Reset``) is diffed against what was already announced, so a recovery in
the middle of a turn sends only what the client missed. The first snapshot either replays
the rows (``replay_history=True``: ``session/load``) or is taken as already known.

Row kinds and what they become:

* ``assistantText`` → ``agent_message_chunk``, ``reasoning`` → ``agent_thought_chunk``
  (``messageId`` ``row-<rowId>``: one row is one message);
* ``toolCall`` → a tool card under its ``toolCallId``; ``subagent`` → a card
  ``subagent-<rowId>`` naming its ``parentToolCallId`` in ``_meta``, so a client can nest it
  (none when its Agent/Task call has a card: that card shows it); for a client that declares
  ``subagents``, also a child session (``conversation_children.py``);
* ``timelineMarker`` → a short notice as its own agent message;
* ``userInput`` → ``user_message_chunk`` only in the replayed history or when asked to echo (the client
  that sent a prompt already shows it); ``turnHeader``, ``hookInvocation``, ``artifact``:
  nothing yet.
* ``backgroundWorks`` entries → task cards (``work_cards.py``).

Tool and sub-agent cards are the lower layer, ``conversation_cards.py``; the update and
signal types are ``conversation_signals.py``.

Pure: no I/O, no clock; one translator per session, fed in frame order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import updates
from . import conversation_view as view
from .conversation_children import ChildSessions
from .conversation_retry import ApiRetryCard
from .work_cards import WorkCards
from ..tool_cards import Card
from .conversation_cards import FINAL, SUBAGENT_STATUSES, ToolCards, output_text, row_card
from .conversation_cards import TOOL_STATUSES as TOOL_STATUSES  # re-exported: the tests read it
from .conversation_signals import InteractionClosed as InteractionClosed
from .conversation_signals import InteractionOpened as InteractionOpened
from .conversation_signals import RoutingChanged as RoutingChanged
from .conversation_signals import Signal as Signal
from .conversation_signals import Translation as Translation
from .conversation_signals import TurnEnded as TurnEnded
from .conversation_signals import TurnOpened as TurnOpened
from .conversation_signals import TurnSettled as TurnSettled
from .conversation_signals import Update
from .conversation_apply import (
    Change,
    LiveNotice,
    NotModelled,
    Reset,
    RowAppended,
    RowReplaced,
    RowsRemoved,
    StateReplaced,
    TextAppended,
    TextsAppended,
    pack_json,
    unpack_json,
)
from ..i18n import EN, t


PLAN_STATUSES = {"pending": "pending", "inProgress": "in_progress", "completed": "completed"}


def message_id(row_id: int) -> str:
    return f"row-{row_id}"


def _text_chunk(kind: str, text: str, row_id: int) -> Update:
    update = "agent_thought_chunk" if kind == "reasoning" else "agent_message_chunk"
    return {"sessionUpdate": update, "content": {"type": "text", "text": text}, "messageId": message_id(row_id)}


# Markers of an act the bridge answers in its own words when it is the one asking (a model
# switch: "Model set to …"; a compaction: "Conversation compacted.", actors/session/extensions.py);
# the engine names the command behind a marker (``sourceCommandId``, rows.ts).
SELF_ANSWERED_MARKERS = frozenset({"modelChange", "compact"})


def marker_notice(marker: Any, lang: str = EN) -> str | None:
    """A timeline marker in a few words, or None for one not worth a line."""
    if not isinstance(marker, dict):
        return None
    kind = marker.get("type")
    if kind == "compact":
        status = str(marker.get("status"))
        return t(lang, f"v4.marker.compact.{status}") if status in ("running", "success", "failed", "cancelled") else None
    if kind == "retryNotice":
        return t(lang, "v4.marker.retry", attempt=marker.get("attempt"), reason=marker.get("reasonCode"))
    if kind == "modelChange" and isinstance(marker.get("toModel"), str):
        return t(lang, "v4.marker.model", model=marker["toModel"])
    if kind == "goalSet" and isinstance(marker.get("objective"), str):
        return t(lang, "command.goal_is", objective=marker["objective"])
    if kind == "forkNotice":
        return t(lang, "v4.marker.fork")
    if kind == "checkpointRestored":
        return t(lang, "v4.marker.checkpoint")
    return None


class ConversationTranslator(ToolCards):
    """One session's announced state, and the updates each batch of changes adds to it."""

    def __init__(self, *, replay_history: bool = False, echo_user_input: bool = False, lang: str = EN,
                 terminal_output: bool = False, retry_prefix: str = "v4",
                 own_command: Callable[[str], bool] | None = None, subagents_of: str | None = None) -> None:
        self._lang = lang  # of the notices the bridge writes (protocol/i18n)
        # Whether a command id is one this bridge sent: a marker it caused was answered in the
        # bridge's own words already (``SELF_ANSWERED_MARKERS``), so it gets no second line.
        self._own_command = own_command or (lambda command_id: False)
        self._terminal = terminal_output  # the client renders terminals (``_meta.terminal_output``)
        self._replay = replay_history
        self._echo = echo_user_input
        self._baselined = False
        self._replaying = False
        self._announced: dict[str, Any] = {}
        self._packed: bytes | None = None  # _announced and _last_text while the conversation rests (``rest``)
        self._sent: dict[int, int] = {}  # row id → characters of its text already sent
        self._cards: dict[str, Card] = {}
        self._row_cards: dict[int, str] = {}
        self._markers: dict[int, str | None] = {}
        # The client's sub-agents as child sessions of this ACP session (conversation_children.py).
        self.children = ChildSessions(subagents_of)
        self._works = WorkCards(lang)  # background works → task cards (protocol/v4/work_cards.py)
        self._launches: dict[str, str] = {}  # work id → the card of the tool call that launched it
        self._interactions: set[str] = set()
        self._last_text: dict[str, Any] | None = None  # the current turn's newest assistantText row
        self._retry = ApiRetryCard(retry_prefix, lang)  # the engine's own retries (control.apiRetry)

    def rebaseline(self) -> None:
        """The next snapshot is taken as known, not diffed against what was announced: it comes on a
        subscription made after a resume, whose rows the engine read back from its store under ids
        of its own, so a diff would announce earlier turns' text again as new output."""
        self._baselined = False
        self._sent = {}

    @property
    def _state(self) -> dict[str, Any]:
        """The session-wide keys as announced (unpacked first if they rest packed)."""
        if self._packed is not None:
            self._unpack()
        return self._announced

    @_state.setter
    def _state(self, state: dict[str, Any]) -> None:
        if self._packed is not None:
            self._unpack()
        self._announced = state

    def rest(self) -> bool:
        """Hold what it remembers of the state (and the turn's last words) as compressed JSON
        until the next change: the owner's ``ConversationState.pack`` beside it, when no turn
        runs. Whether it rests packed."""
        if self._packed is None:
            packed = pack_json([self._announced, self._last_text])
            if packed is None:
                return False
            self._packed, self._announced, self._last_text = packed, {}, None
        return True

    def _unpack(self) -> None:
        assert self._packed is not None
        # The last words come back as a copy of their row: the row's next change names it again.
        self._announced, self._last_text = unpack_json(self._packed)
        self._packed = None

    def translate(self, changes: list[Change], out: Translation | None = None) -> Translation:
        """The updates and signals ``changes`` make, added to ``out`` (a new ``Translation`` by default)."""
        out = Translation() if out is None else out
        if self._packed is not None:
            self._unpack()
        for change in changes:
            if type(change) is TextsAppended:  # first: most of a streaming turn
                self._texts_appended(change, out)
            elif type(change) is TextAppended:
                self._text_appended(change, out)
            elif isinstance(change, Reset):
                self._reset(change, out)
            elif isinstance(change, RowAppended):
                self._row(change.row, None, out)
            elif isinstance(change, RowReplaced):
                self._row(change.row, change.previous, out)
            elif isinstance(change, RowsRemoved):
                self._removed(change, out)
            elif isinstance(change, StateReplaced):
                self._state_key(change.key, change.value, change.previous, out)
                self._state[change.key] = change.value
            elif isinstance(change, LiveNotice | NotModelled):
                continue
        return out

    # -- snapshots -----------------------------------------------------------------------

    def _reset(self, reset: Reset, out: Translation) -> None:
        if not self._baselined and not self._replay:
            self._baseline(reset, out)
            return
        # Prompts are echoed while the history is replayed; after that, only if asked.
        self._replaying = not self._baselined
        self._baselined = True
        previous, self._state = self._state, dict(reset.state)
        for row in reset.rows:
            self._row(row, None, out)
        self._replaying = False
        for key in sorted(previous.keys() | reset.state.keys()):
            if previous.get(key) != reset.state.get(key):
                self._state_key(key, reset.state.get(key), previous.get(key), out)

    def _baseline(self, reset: Reset, out: Translation) -> None:
        """Attach to a conversation already on screen: remember it, announce nothing but open questions."""
        self._baselined = True
        self._state = dict(reset.state)
        for row in reset.rows:
            row_id, kind = row["rowId"], row.get("kind")
            if kind in ("assistantText", "reasoning") and isinstance(row.get("text"), str):
                self._sent[row_id] = len(row["text"])
            elif kind == "toolCall" and isinstance(row.get("toolCallId"), str):
                card = self._cards[row["toolCallId"]] = row_card(row, self._is_terminal(row))
                card.shown = output_text(row)
                self._row_cards[row_id] = row["toolCallId"]
                if isinstance(row.get("workId"), str):
                    self._launches[row["workId"]] = row["toolCallId"]
            elif kind == "subagent":
                self.children.known(row)
            if kind == "subagent" and not self._shown_by_its_call(row, f"subagent-{row_id}"):
                status = SUBAGENT_STATUSES.get(str(row.get("status")), "in_progress")
                self._cards[f"subagent-{row_id}"] = Card(f"subagent-{row_id}", "", None, status,
                                                         launched=row.get("backgrounded") is True)
                self._row_cards[row_id] = f"subagent-{row_id}"
            elif kind == "timelineMarker":
                self._markers[row_id] = marker_notice(row.get("marker"), self._lang)
        self._works.baseline(reset.state.get("backgroundWorks"), self._launch_card)
        self._interactions_changed((), view.pending_interactions(reset.state), out)

    # -- rows ----------------------------------------------------------------------------

    def _row(self, row: dict[str, Any], previous: dict[str, Any] | None, out: Translation) -> None:
        kind, row_id = row.get("kind"), row["rowId"]
        if kind == "turnHeader":
            self._header(row, previous, out)
        if kind == "turnHeader" and previous is None:
            self._last_text = None  # a new turn: its words are yet to come
        if kind in ("assistantText", "reasoning"):
            if kind == "assistantText":
                self._last_text = row
            text = row.get("text")
            if isinstance(text, str):
                sent = self._sent.get(row_id, 0)
                # Only what the client has not seen; a row's text only grows while it
                # streams (the engine replaces a row only to change its state).
                if len(text) > sent:
                    out.updates.append(_text_chunk(str(kind), text[sent:], row_id))
                self._sent[row_id] = max(sent, len(text))
        elif kind == "toolCall":
            self._tool_row(row, out)
        elif kind == "subagent":
            self._subagent_row(row, out)
        elif kind == "timelineMarker":
            notice = None if self._answered_by_the_bridge(row) else marker_notice(row.get("marker"), self._lang)
            if notice and self._markers.get(row_id) != notice:
                out.updates.append(updates_notice(notice, row_id))
            self._markers[row_id] = notice
        elif kind == "userInput" and previous is None and row_id not in self._sent and (self._echo or self._replaying):
            if row.get("origin") == "backgroundResult":
                return  # a work's result handed to the model (the legacy path's model-only notification): the user never typed it
            text = row.get("text")
            if isinstance(text, str) and text:
                out.updates.append(updates.user_text(text, message_id(row_id)))
                self._sent[row_id] = len(text)

    @staticmethod
    def _header(row: dict[str, Any], previous: dict[str, Any] | None, out: Translation) -> None:
        """A turn opened or settled, as its ``turnHeader`` row says (signals the Session answers by)."""
        source = row.get("sourceCommandId") if isinstance(row.get("sourceCommandId"), str) else None
        state, before = row.get("state"), previous.get("state") if previous is not None else None
        if state == "running" and before != "running":
            out.signals.append(TurnOpened(source))
        elif isinstance(state, str) and state != "running" and before == "running":
            out.signals.append(TurnSettled(source, state))

    def _answered_by_the_bridge(self, row: dict[str, Any]) -> bool:
        marker = row.get("marker")
        source = row.get("sourceCommandId")
        return (isinstance(marker, dict) and marker.get("type") in SELF_ANSWERED_MARKERS
                and isinstance(source, str) and self._own_command(source))

    def _texts_appended(self, change: TextsAppended, out: Translation) -> None:
        """A run of appends to one row: what ``_text_appended`` makes of each, in one go for a
        streaming text (one update an append, the message id made once)."""
        row_id, path, texts, row = change
        kind = row.get("kind")
        if path == "text" and (kind == "assistantText" or kind == "reasoning"):
            if kind == "assistantText":
                self._last_text = row  # the live row: it grows in place
            update = "agent_message_chunk" if kind == "assistantText" else "agent_thought_chunk"
            message_id = f"row-{row_id}"
            out.updates += [{"sessionUpdate": update, "content": {"type": "text", "text": text}, "messageId": message_id}
                            for text in texts]
            self._sent[row_id] = self._sent.get(row_id, 0) + sum(map(len, texts))
        else:
            for text in texts:
                self._text_appended(TextAppended(row_id, path, text, row), out)

    def _text_appended(self, change: TextAppended, out: Translation) -> None:
        row_id, path, text, row = change
        kind = row.get("kind")
        if path == "text" and (kind == "assistantText" or kind == "reasoning"):
            if kind == "assistantText":
                self._last_text = row  # the live row: it grows in place
            out.updates.append({"sessionUpdate": "agent_message_chunk" if kind == "assistantText" else "agent_thought_chunk",
                                "content": {"type": "text", "text": text}, "messageId": f"row-{row_id}"})
            self._sent[row_id] = self._sent.get(row_id, 0) + len(text)
        elif path == "output.text" and kind == "toolCall":
            card_id = row.get("toolCallId")
            card = self._cards.get(card_id) if isinstance(card_id, str) else None
            if card is not None:
                out.updates.extend(card.show(output_text(row)))
        # Tool input streams in too; the card shows it when the row settles (``row.upserted``),
        # so a client is not sent the same growing arguments again and again.

    def _removed(self, change: RowsRemoved, out: Translation) -> None:
        # ACP cannot take a message back; the cards of the cut branch that are still open
        # are closed, so no client waits on them for ever.
        for row in change.removed:
            self._sent.pop(row["rowId"], None)
            self._markers.pop(row["rowId"], None)
            card_id = self._row_cards.pop(row["rowId"], None)
            if card_id is not None:
                self._close(card_id, out)


    # -- session-wide keys ----------------------------------------------------------------

    def _state_key(self, key: str, value: Any, previous: Any, out: Translation) -> None:
        now, before = {key: value}, {key: previous}
        if key == "meta":
            title = view.title(now)
            if title and title != view.title(before):
                out.updates.append(updates.session_title(title))
        elif key == "plan":
            items = view.plan(now)
            if items is not None or view.plan(before) is not None:
                entries = [{"content": i.content, "status": PLAN_STATUSES.get(i.status, "pending"), "priority": "medium"}
                           for i in items or ()]
                out.updates.append(updates.plan(entries))
        elif key == "usage":
            window = view.context_window(now)
            if window is not None and window != view.context_window(before):
                out.updates.append({"sessionUpdate": "usage_update", "used": window.used, "size": window.size})
        elif key == "config":
            mode = view.collaboration_mode(now)
            if mode and mode != view.collaboration_mode(before):
                out.updates.append(updates.current_mode(mode))
        elif key == "control" and previous is not None:
            # Without a previous control there is no turn this client saw start (a replayed
            # history ends in a finished phase): nothing ended for it.
            control = view.control(now)
            if not control.ended:
                out.updates += self._retry.changed(control.api_retry)
            self._control(control, view.control(before), out)
        elif key == "pendingInteractions":
            self._interactions_changed(view.pending_interactions(before), view.pending_interactions(now), out)
        elif key == "inputRouting":
            routing = view.input_routing(now)
            if previous is None or routing != view.input_routing(before):
                out.signals.append(RoutingChanged(routing))
        elif key == "backgroundWorks":
            out.updates.extend(self._works.changed(value, self._launch_card))
            for card_id in self._works.closed_card_ids():  # a launch card its work closed is settled
                card = self._cards.get(card_id)
                if card is not None and card.status not in FINAL:
                    card.status = "completed"

    def _control(self, control: view.Control, before: view.Control, out: Translation) -> None:
        if not control.ended or (before.ended and before.phase == control.phase):
            return
        # The turn is over: a card it left open will never be closed by the engine.
        out.updates += self._retry.turn_ended(control.stop_reason is None)
        for card_id, card in self._cards.items():
            if not card_id.startswith("work-"):
                out.updates.extend(card.close())  # a launched card stays: its work closes it
        # A failed turn's last words: all a failure without ``lastError`` says (TurnEnded.words).
        words = self._last_text.get("text") if self._last_text is not None and control.stop_reason is None else None
        out.signals.append(TurnEnded(control.stop_reason, control.last_error if control.stop_reason is None else None,
                                     words.strip() if isinstance(words, str) else ""))

    def _interactions_changed(
        self, before: tuple[view.PendingInteraction, ...], now: tuple[view.PendingInteraction, ...], out: Translation
    ) -> None:
        del before  # what was announced is what counts, not what the previous state said
        current = {i.interaction_id: i for i in now}
        for interaction_id in sorted(self._interactions - current.keys()):
            out.signals.append(InteractionClosed(interaction_id))
        for interaction in now:
            if interaction.interaction_id not in self._interactions:
                out.signals.append(InteractionOpened(interaction))
        self._interactions = set(current)

    def _launch_card(self, work: dict[str, Any]) -> tuple[str, bool] | None:
        """The card of the tool call that launched ``work`` (its row names the work), if this client saw it,
        and whether it is a terminal (then the work's end is the terminal's exit, as on the legacy path)."""
        card_id = self._launches.get(str(work.get("workId")))
        anchor = work.get("anchorRowId")
        if card_id is None and isinstance(anchor, int):  # the work's anchor: the backgrounded call's row
            card_id = self._row_cards.get(anchor)
        card = self._cards.get(card_id) if card_id is not None else None
        return (card_id, card.terminal) if card_id is not None and card is not None and card.launched else None


def updates_notice(text: str, row_id: int) -> Update:
    """A timeline marker's line: its own agent message, so it never runs into the reply's text."""
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}, "messageId": f"notice-{row_id}"}

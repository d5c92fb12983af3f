"""What a conversation's translation gives back: the updates to send, and the signals a Session
acts on (a turn's end, interactions opened or closed, the input routing). Shared by
``conversation.py`` and ``conversation_cards.py``; pure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import conversation_view as view

Update = dict[str, Any]


@dataclass(frozen=True, slots=True)
class TurnEnded:
    stop_reason: str | None
    """``end_turn`` or ``cancelled``; None when the turn failed (answer with ``error``)."""
    error: dict[str, Any] | None
    words: str = ""
    """The turn's last assistant text: what it said before it ended (a failed turn without a
    ``lastError`` — an error ending of ``turn.completed`` — has no other words)."""


@dataclass(frozen=True, slots=True)
class TurnOpened:
    """A ``turnHeader`` row appeared running: the engine started a turn, for the ``sendText`` it
    names (``sourceCommandId``, rows.ts; None for a turn no command asked for)."""
    source_command_id: str | None


@dataclass(frozen=True, slots=True)
class TurnSettled:
    """A ``turnHeader`` row left ``running`` (``completedSuccess``, ``completedInterrupted`` or
    ``failed``): that turn is over even when ``control`` never left its running phase (the
    engine merged its end and the next turn's start into one patch, coalesce.ts)."""
    source_command_id: str | None
    state: str


@dataclass(frozen=True, slots=True)
class InteractionOpened:
    interaction: view.PendingInteraction


@dataclass(frozen=True, slots=True)
class InteractionClosed:
    interaction_id: str


@dataclass(frozen=True, slots=True)
class RoutingChanged:
    routing: view.InputRouting


Signal = TurnEnded | TurnOpened | TurnSettled | InteractionOpened | InteractionClosed | RoutingChanged


@dataclass(slots=True)
class Translation:
    updates: list[Update] = field(default_factory=list)
    signals: list[Signal] = field(default_factory=list)

"""The engine's countdowns on dialogs, watched to the end (issue 31: never a silent empty answer).

Where the engine runs a countdown on a question or a permission (``pendingInteractions[].autoResolution``)
the dialog says when it answers by itself (v4/path.py ``with_countdown``). When the interaction then
leaves the conversation past its deadline and no answer of this bridge resolved it, the engine
answered by itself — a question with no answers, a permission with its first option — and the
user is told so, in the session's language. Closed before the deadline, another client answered:
nothing to say. A plain part of the v4 Session.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from zcode_acp.protocol.v4.conversation_view import PendingInteraction

# The deadline is the engine's clock, the check the bridge's (same machine): this much slack.
CLOCK_SLACK_MS = 1000.0


@dataclass(slots=True)
class Countdowns:
    _deadlines: dict[str, tuple[str, float]] = field(default_factory=dict)  # id → (kind, deadline ms)
    _answered: set[str] = field(default_factory=set)

    def opened(self, interaction: PendingInteraction) -> None:
        if interaction.countdown_deadline_at is not None:
            self._deadlines[interaction.interaction_id] = (interaction.kind, interaction.countdown_deadline_at)

    def answered(self, interaction_id: str) -> None:
        """This bridge sent the user's answer (``resolveInteraction``)."""
        if interaction_id in self._deadlines:
            self._answered.add(interaction_id)

    def closed(self, interaction_id: str, now_ms: float) -> str | None:
        """The catalog key of the notice owed for an interaction that just left the conversation, or None."""
        entry = self._deadlines.pop(interaction_id, None)
        answered = interaction_id in self._answered
        self._answered.discard(interaction_id)
        if entry is None or answered or now_ms < entry[1] - CLOCK_SLACK_MS:
            return None
        return "v4.countdown.answered.permission" if entry[0] == "permission" else "v4.countdown.answered.question"

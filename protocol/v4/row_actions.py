"""Which row a retry, an edit or a fork may name: the engine's own ``row.actions`` (rows.ts).

The engine grants each row ``actions {canEdit, canRetry, canFork}`` (only the true keys are
sent) and refuses a command whose target lacks the action (``fork-edit-retry.ts``,
``resolveRowActionTarget``): an edit of any prompt but the latest real user one
(``guard.latestQueryEditOnly``), a retry of anything but the latest assistant reply
(``guard.latestAssistantRetryOnly``), a fork of a segment that is not stable
(``guard.forkTargetNotStable``). The bridge picks its target by the same grants, so it sends
only what the engine can take, and says why when nothing can be named.

Pure: rows in, a ``RowTarget`` or a ``Refusal`` (the guard's reason code) out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from .commands import RowTarget

Action = Literal["canEdit", "canRetry", "canFork"]

# The engine's reason code for a target that lacks each action (fork-edit-retry.ts).
GUARDS: dict[str, str] = {
    "canEdit": "guard.latestQueryEditOnly",
    "canRetry": "guard.latestAssistantRetryOnly",
    "canFork": "guard.forkTargetNotStable",
}
# The catalog key (protocol/i18n) that says each guard's refusal in the user's words.
MESSAGE_KEYS: dict[str, str] = {
    "guard.latestQueryEditOnly": "v4.guard.edit",
    "guard.latestAssistantRetryOnly": "v4.guard.retry",
    "guard.forkTargetNotStable": "v4.guard.fork",
}
# Other refusals a user may meet, said the same way (goal-compact.ts: one compaction at a time).
OTHER_MESSAGE_KEYS: dict[str, str] = {"compactOperationLock": "v4.compact.locked"}


@dataclass(frozen=True, slots=True)
class Refusal:
    reason_code: str  # one of GUARDS' values

    @property
    def message_key(self) -> str:
        return MESSAGE_KEYS[self.reason_code]


def grants(row: Any, action: Action) -> bool:
    actions = row.get("actions") if isinstance(row, dict) else None
    return isinstance(actions, dict) and actions.get(action) is True


def _target(row: dict[str, Any]) -> RowTarget | None:
    row_id, entity_id = row.get("rowId"), row.get("entityId")
    if isinstance(row_id, int) and not isinstance(row_id, bool) and isinstance(entity_id, str) and entity_id:
        return RowTarget(row_id, entity_id)
    return None


def target(rows: Iterable[Any], action: Action, row_id: int | None = None) -> RowTarget | Refusal:
    """The row ``action`` may name: the newest that grants it, or, with ``row_id``, that row when it does.

    A retry names its turn by any of the turn's rows (the client knows its prompt's row): the
    granted row of the same turn is the target, since the engine retries from the reply."""
    listed = [row for row in rows if isinstance(row, dict)]
    if row_id is not None and action == "canRetry":
        named = next((row for row in listed if row.get("rowId") == row_id), None)
        turn = named.get("turnId") if named is not None else None
        listed = [row for row in listed if turn is not None and row.get("turnId") == turn]
    elif row_id is not None:
        listed = [row for row in listed if row.get("rowId") == row_id]
    for row in reversed(listed):
        if grants(row, action):
            found = _target(row)
            if found is not None:
                return found
    return Refusal(GUARDS[action])


def guard_message_key(reason_code: Any) -> str | None:
    """The catalog key for an engine's refusal by one of these guards (or another the user can act on), else None."""
    if not isinstance(reason_code, str):
        return None
    return MESSAGE_KEYS.get(reason_code) or OTHER_MESSAGE_KEYS.get(reason_code)

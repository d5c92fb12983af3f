"""``v4/command``: typed builders for the envelope, and what an acknowledgement means.

Every change a client asks of the engine is one ``v4/command`` request
``{commandId, clientId, sessionId, type, payload, issuedAt}``; the engine answers with an
ack ``{commandId, status, reasonCode?, message?, revisionAtDecision, result?}``.

* Commands the engine checks against the state they were decided on (compare-and-set)
  carry ``baseRevision``, the snapshot's ``revision`` the client saw; those that point at
  a row also carry ``baseLogEpoch`` (row ids only mean something within one log epoch).
  A command that needs them and lacks them is refused by the engine before anything
  happens, so building one is a programming error here (``ValueError``).
* ``commandId`` is the idempotency key: resending the same id after a lost ack is safe
  (the engine answers ``duplicate`` with the first decision's result), and
  ``v4/commands/query`` tells what became of it. ``issuedAt`` is telemetry only.

Ids and times are arguments: this module makes no uuid and reads no clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal

COMMANDS_REQUIRING_BASE_REVISION: frozenset[str] = frozenset(
    (
        "applyFileRewind",
        "forkAssistant",
        "editUserQuery",
        "retryTurn",
        "setAssistantFeedback",
        "sendQueuedNow",
        "editQueueItem",
        "reorderQueueItem",
        "deleteQueueItem",
        "setAutoDrain",
        "switchModelConfig",
        "switchCollaborationMode",
        "setFollowupMode",
        "pauseGoal",
        "resumeGoal",
    )
)
ROW_TARGETING_COMMANDS: frozenset[str] = frozenset(
    ("applyFileRewind", "forkAssistant", "editUserQuery", "retryTurn", "setAssistantFeedback", "setHighspeedMetrics")
)
# The modes installed 3.14.4 takes (zcodeSessionModeSchema); the newer public source adds ``guarded``,
# which 3.14.4 refuses (``proto.invalidPayload``), so it is never sent.
COLLABORATION_MODES: frozenset[str] = frozenset(("build", "edit", "plan", "yolo"))
Delivery = Literal["startNow", "queue", "guide"]


@dataclass(frozen=True, slots=True)
class RowTarget:
    """A row as commands name it: its id in this log epoch and the entity it shows."""

    row_id: int
    entity_id: str

    def wire(self) -> dict[str, Any]:
        return {"rowId": self.row_id, "entityId": self.entity_id}


@dataclass(frozen=True, slots=True)
class Command:
    type: str
    session_id: str | None
    """None only for ``createSession``."""
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Base:
    """What the client last saw: the snapshot's ``revision`` and ``logEpoch``."""

    revision: int
    log_epoch: str | None = None


def envelope(command: Command, *, command_id: str, client_id: str, issued_at: float, base: Base | None = None) -> dict[str, Any]:
    """The ``v4/command`` params. ``base`` is used where the engine demands it, left out elsewhere."""
    params: dict[str, Any] = {
        "commandId": command_id,
        "clientId": client_id,
        "sessionId": command.session_id,
        "type": command.type,
        "payload": command.payload,
        "issuedAt": issued_at,
    }
    needs_revision = command.type in COMMANDS_REQUIRING_BASE_REVISION
    needs_epoch = command.type in ROW_TARGETING_COMMANDS
    if needs_revision or needs_epoch:
        if base is None:
            raise ValueError(f"{command.type} is decided against a revision: pass base")
        params["baseRevision"] = base.revision
    if needs_epoch:
        if not base or not base.log_epoch:
            raise ValueError(f"{command.type} targets a row: base needs the log epoch")
        params["baseLogEpoch"] = base.log_epoch
    return params


# -- the commands -------------------------------------------------------------------------


def _optional(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


def create_session(
    workspace_id: str,
    *,
    first_text: str | None = None,
    attachments: list[dict[str, Any]] | None = None,
    mcp_servers: list[dict[str, Any]] | None = None,
    config: dict[str, Any] | None = None,
) -> Command:
    """A new session; with ``first_text`` its first turn starts at once (else a draft)."""
    first = None if first_text is None else _optional(text=first_text, attachments=attachments)
    payload = _optional(workspaceId=workspace_id, firstInput=first, mcpServers=mcp_servers, config=config)
    return Command("createSession", None, payload)


def send_text(
    session_id: str,
    text: str,
    *,
    attachments: list[dict[str, Any]] | None = None,
    requested_delivery: Delivery | None = None,
    held_queue: Literal["clearQueueAndSend", "keepQueueAndSend"] | None = None,
    held_queue_item_ids: list[str] | None = None,
) -> Command:
    """A prompt. While a turn runs the engine's ``inputRouting`` decides (queue, guide, refuse)
    unless ``requested_delivery`` overrides it for this one input; ``attachments`` are refs
    from ``attachments.upload_plan`` committed uploads. When the routing is ``choice`` (a
    paused queue), ``held_queue`` says what to do with it, and ``held_queue_item_ids`` the
    items the user saw, so an item added meanwhile is not cleared unseen."""
    payload = _optional(
        text=text,
        attachments=attachments,
        requestedDelivery=requested_delivery,
        heldQueueDisposition=held_queue,
        expectedHeldQueueItemIds=held_queue_item_ids,
    )
    return Command("sendText", session_id, payload)


def stop(session_id: str, *, expected_foreground_execution_id: str | None = None) -> Command:
    """Stop what runs; with the id (from ``control.activeWorks``) only if that is still what runs."""
    return Command("stop", session_id, _optional(expectedForegroundExecutionId=expected_foreground_execution_id))


def compact(session_id: str) -> Command:
    return Command("compact", session_id, {})


def resolve_interaction(
    session_id: str,
    interaction_id: str,
    *,
    option_id: str | None = None,
    free_text: str | None = None,
    action: Literal["accept", "decline", "cancel"] | None = None,
    content: dict[str, Any] | None = None,
) -> Command:
    """Answer a pending interaction. The first answer wins; a later one is ``noop``."""
    answer = _optional(optionId=option_id, freeText=free_text, action=action, content=content)
    return Command("resolveInteraction", session_id, {"interactionId": interaction_id, "answer": answer})


def switch_model_config(session_id: str, provider: str, model: str, thought: str) -> Command:
    return Command("switchModelConfig", session_id, {"provider": provider, "model": model, "thought": thought})


def switch_collaboration_mode(session_id: str, mode: str) -> Command:
    if mode not in COLLABORATION_MODES:
        raise ValueError(f"collaboration mode {mode!r} is not one of {sorted(COLLABORATION_MODES)}")
    return Command("switchCollaborationMode", session_id, {"mode": mode})


def set_followup_mode(session_id: str, mode: Literal["queue", "guide"]) -> Command:
    """What a prompt sent while a turn runs does by default: wait in the queue, or guide the turn."""
    return Command("setFollowupMode", session_id, {"mode": mode})


def cancel_background_work(session_id: str, work_id: str) -> Command:
    return Command("cancelBackgroundWork", session_id, {"workId": work_id})


def rename_session(session_id: str, title: str) -> Command:
    return Command("renameSession", session_id, {"title": title})


def delete_session(session_id: str) -> Command:
    return Command("deleteSession", session_id, {})


def fork_assistant(session_id: str, target: RowTarget) -> Command:
    """A new session continuing from a stable assistant row (the ack's result names it)."""
    return Command("forkAssistant", session_id, {"target": target.wire()})


def retry_turn(session_id: str, target: RowTarget) -> Command:
    return Command("retryTurn", session_id, {"target": target.wire()})


def apply_file_rewind(session_id: str, target: RowTarget) -> Command:
    """Undo a turn's file changes in the workspace, keeping the conversation."""
    return Command("applyFileRewind", session_id, {"target": target.wire()})


def edit_user_query(
    session_id: str, target: RowTarget, new_text: str, *, workspace_mode: Literal["preserve", "rewind"] | None = None
) -> Command:
    """Replace an earlier prompt and rerun from it; ``rewind`` restores that turn's files first."""
    return Command("editUserQuery", session_id, _optional(target=target.wire(), newText=new_text, workspaceMode=workspace_mode))


def send_queued_now(session_id: str, queue_item_id: str) -> Command:
    return Command("sendQueuedNow", session_id, {"queueItemId": queue_item_id})


def edit_queue_item(session_id: str, queue_item_id: str, new_text: str) -> Command:
    return Command("editQueueItem", session_id, {"queueItemId": queue_item_id, "newText": new_text})


def reorder_queue_item(session_id: str, queue_item_id: str, before_queue_item_id: str | None) -> Command:
    """Move an item before another; ``None`` moves it to the end."""
    return Command("reorderQueueItem", session_id, {"queueItemId": queue_item_id, "beforeQueueItemId": before_queue_item_id})


def delete_queue_item(session_id: str, queue_item_id: str) -> Command:
    return Command("deleteQueueItem", session_id, {"queueItemId": queue_item_id})


def set_auto_drain(session_id: str, auto_drain: bool) -> Command:
    return Command("setAutoDrain", session_id, {"autoDrain": auto_drain})


# -- acknowledgements ----------------------------------------------------------------------

AckStatus = Literal["accepted", "rejected", "stale", "duplicate", "noop", "failed"]
_STATUSES = frozenset(("accepted", "rejected", "stale", "duplicate", "noop", "failed"))


@dataclass(frozen=True, slots=True)
class CommandAck:
    command_id: str
    status: AckStatus
    reason_code: str | None
    message: str | None
    revision_at_decision: int
    result: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class AckInvalid:
    detail: str


def parse_ack(value: Any) -> CommandAck | AckInvalid:
    """A ``v4/command`` result (or one ``v4/commands/query`` item's ``result``)."""
    if not isinstance(value, dict):
        return AckInvalid("the ack is not an object")
    command_id, status, revision = value.get("commandId"), value.get("status"), value.get("revisionAtDecision")
    if not isinstance(command_id, str):
        return AckInvalid("the ack has no commandId")
    if not isinstance(status, str) or status not in _STATUSES:
        return AckInvalid(f"status {status!r}")
    if not isinstance(revision, int | float) or isinstance(revision, bool):
        return AckInvalid("the ack has no revisionAtDecision")
    reason, message, result = value.get("reasonCode"), value.get("message"), value.get("result")
    if status not in ("accepted", "duplicate") and not isinstance(reason, str):
        # The engine always names why it did not accept; an ack that does not is not its.
        return AckInvalid(f"a {status} ack without reasonCode")
    return CommandAck(
        command_id,
        status,  # type: ignore[arg-type]  # checked against _STATUSES above
        reason if isinstance(reason, str) else None,
        message if isinstance(message, str) else None,
        int(revision),
        result if isinstance(result, dict) else None,
    )


class Verdict(Enum):
    SUCCEEDED = "succeeded"
    """Accepted now, or earlier (``duplicate`` replays the first decision)."""
    NO_EFFECT = "no_effect"
    """``noop``: nothing to do (already so, already resolved, the stop target changed)."""
    RETRY_AFTER_REFRESH = "retry_after_refresh"
    """``stale`` the first time: re-read the state and send it again, once, with a new id."""
    REFUSED = "refused"
    """``rejected``, ``failed``, or ``stale`` again after the retry."""


def judge(ack: CommandAck, *, retried: bool = False) -> Verdict:
    """What the client should do about an ack (issue 22: stale → refresh and retry once)."""
    if ack.status in ("accepted", "duplicate"):
        return Verdict.SUCCEEDED
    if ack.status == "noop":
        return Verdict.NO_EFFECT
    if ack.status == "stale" and not retried:
        return Verdict.RETRY_AFTER_REFRESH
    return Verdict.REFUSED


def caught_up(ack: CommandAck, sent: Base | None, seen: Base) -> bool:
    """Whether a ``stale`` command may be sent again: the state seen now is the one the engine decided
    against (``revisionAtDecision``), and, when the log epoch was what it refused (``proto.staleLogEpoch``,
    checked before the revision: command-inbox.ts), the epoch seen is no longer the one sent."""
    if seen.revision < ack.revision_at_decision:
        return False
    if ack.reason_code == "proto.staleLogEpoch" and sent is not None:
        return seen.log_epoch is not None and seen.log_epoch != sent.log_epoch
    return True


# -- v4/commands/query ----------------------------------------------------------------------

MAX_QUERY_KEYS = 64


def query_params(keys: list[tuple[str | None, str]]) -> dict[str, Any]:
    """``v4/commands/query`` params for ``(sessionId, commandId)`` pairs (1 to 64)."""
    if not 1 <= len(keys) <= MAX_QUERY_KEYS:
        raise ValueError(f"a query names 1 to {MAX_QUERY_KEYS} commands, not {len(keys)}")
    return {"commands": [{"sessionId": session_id, "commandId": command_id} for session_id, command_id in keys]}


@dataclass(frozen=True, slots=True)
class QueryItem:
    session_id: str | None
    command_id: str
    ack: CommandAck | None
    """None when the engine does not know the command (it never arrived: send it again)."""


def parse_query_result(value: Any) -> list[QueryItem] | AckInvalid:
    if not isinstance(value, dict) or not isinstance(value.get("results"), list):
        return AckInvalid("the query result has no results array")
    items: list[QueryItem] = []
    for entry in value["results"]:
        key = entry.get("key") if isinstance(entry, dict) else None
        if not isinstance(key, dict) or not isinstance(key.get("commandId"), str):
            return AckInvalid("a query result without its key")
        session_id = key.get("sessionId")
        if session_id is not None and not isinstance(session_id, str):
            return AckInvalid("a query key's sessionId is neither a string nor null")
        result = entry.get("result")
        if result == "unknown":
            items.append(QueryItem(session_id, key["commandId"], None))
            continue
        ack = parse_ack(result)
        if isinstance(ack, AckInvalid):
            return ack
        items.append(QueryItem(session_id, key["commandId"], ack))
    return items

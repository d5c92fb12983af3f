"""``v4/command`` and ``v4/commands/query``: commands decided against the state, answered by acks.

An ack is ``{commandId, status, revisionAtDecision, reasonCode (unless accepted or
duplicate), message?, result?}`` (``zcode-protocol-v4/command.ts``). How the engine
decides, from its source and the captures (tests/fixtures/engine-captures/):

* ``commandId`` is the idempotency key: the same one again (for the same session) is
  ``duplicate`` with the first decision's result, and nothing is done twice;
* a payload that fails the command's schema is ``rejected proto.invalidPayload`` (the
  message lists the problems the way zod does), an unknown session ``rejected
  proto.sessionNotFound``; a ``baseRevision`` other than the state's is ``stale
  proto.staleRevision``; a row target that is gone (or whose ``entityId`` differs, or
  whose ``baseLogEpoch`` is not the log's) is ``stale proto.staleTarget``;
* an action the snapshot's ``availability`` refuses is ``rejected`` with that reason code;
  a change to what already is is ``noop config.unchanged``; a stop naming no execution
  while nothing runs is ``accepted`` (nothing done), and one quoting an execution that
  no longer runs (or while idle) ``noop guard.stopTargetChanged``;
* a ``sendText`` follows ``inputRouting``: ``startNow`` when idle, otherwise the requested
  delivery (or the session's ``followupMode``): ``guide`` steers it into the running
  turn, ``queue`` adds an item to the engine's queue, drained in order when turns end
  (``autoDrain``; a stop pauses it);
* a second answer to an interaction is ``noop interaction.alreadyResolved`` (the first
  answer wins); an interaction never asked is ``stale proto.staleTarget``;
* a type this simulator does not play is ``failed fault.command.notImplemented``.

Frames a command causes are sent after its ack (``plane.DataPlane`` holds them).
"""

from __future__ import annotations

from typing import Any

from .command_base import Ack, Decision, need, zod_issue
from .errors import INVALID_PARAMS, V4Error
from .projection import ConversationProjection, ExpectedInput
from .queue_commands import QueueCommands

QUERY_MAX = 64
_UNCHANGED = "config.unchanged"
# command.ts: the commands whose envelope must carry baseRevision, and those of them that target a row
# (which must carry the log's epoch too). Other commands' bases are not judged (command-inbox.ts decide).
REQUIRING_BASE_REVISION = frozenset((
    "applyFileRewind", "forkAssistant", "editUserQuery", "retryTurn", "setAssistantFeedback", "sendQueuedNow",
    "editQueueItem", "reorderQueueItem", "deleteQueueItem", "setAutoDrain", "switchModelConfig",
    "switchCollaborationMode", "setFollowupMode", "pauseGoal", "resumeGoal", "setHighspeedMetrics"))
ROW_TARGETING = frozenset(("applyFileRewind", "forkAssistant", "editUserQuery", "retryTurn", "setAssistantFeedback",
                           "setHighspeedMetrics"))
# What only the source newer than installed 3.14.4 accepts (command.ts, zcodeSessionModeSchema).
NEWER_COMMANDS = frozenset(("setHighspeedMetrics",))
NEWER_MODES = frozenset(("guarded",))
HELD_REQUIRED = ("heldQueueDispositionRequired",
                 "held queue requires heldQueueDisposition (clearQueueAndSend | keepQueueAndSend)")
HELD_STALE = ("guard.heldQueueConfirmationStale", "paused queue changed after send confirmation opened")

__all__ = ["Ack", "CommandHandler", "Decision"]


class CommandHandler(QueueCommands):
    """Decides every ``v4/command`` (one ack each, remembered for duplicates and queries)."""

    def command(self, params: dict[str, Any]) -> Ack:
        command_id = params.get("commandId")
        if not isinstance(command_id, str) or not command_id:
            return {"commandId": str(command_id or ""), "status": "rejected", "reasonCode": "proto.invalidEnvelope",
                    "message": "commandId must be a non-empty string", "revisionAtDecision": 0}
        session_id = params.get("sessionId") if isinstance(params.get("sessionId"), str) else None
        key = (session_id, command_id)
        known = self.decided.get(key)
        projection = self.sessions.get(session_id)
        revision = projection.revision if projection else 0
        if known is not None:
            duplicate: Ack = {"commandId": command_id, "status": "duplicate", "revisionAtDecision": revision}
            if "result" in known:
                duplicate["result"] = known["result"]
            return duplicate
        ack = self._decide(params, command_id, projection, revision)
        self.decided[key] = ack
        return ack

    def query(self, params: dict[str, Any]) -> dict[str, Any]:
        keys = params.get("commands") if isinstance(params, dict) else None
        if not isinstance(keys, list) or not 1 <= len(keys) <= QUERY_MAX:
            raise V4Error(INVALID_PARAMS, f"Invalid params: commands must hold 1 to {QUERY_MAX} keys")
        results = []
        for key in keys:
            if not isinstance(key, dict) or not isinstance(key.get("commandId"), str):
                raise V4Error(INVALID_PARAMS, "Invalid params: each key needs a commandId")
            session_id = key.get("sessionId") if isinstance(key.get("sessionId"), str) else None
            found = self.decided.get((session_id, key["commandId"]))
            results.append({"key": {"sessionId": session_id, "commandId": key["commandId"]},
                            "result": found if found is not None else "unknown"})
        return {"results": results}

    def expire_interactions(self, now_ms: float) -> None:
        """The engine's countdowns: past its deadline a permission takes its first option, and a question
        goes on accepted with no answers (the engine's question auto-resolution)."""
        for projection in list(self.sessions.conversations.values()):
            for item in projection.state["pendingInteractions"]:
                countdown = item.get("autoResolution") or {}
                if countdown.get("state") == "visibleCountdown" and countdown.get("deadlineAt", now_ms + 1) <= now_ms:
                    options = item["payload"].get("options") or [{}]
                    answer = {"optionId": options[0].get("optionId", "")} if item["kind"] == "permission" else {
                        "action": "accept", "content": {"answers": {}}}
                    self._resolve(projection, item, answer)

    # -- deciding ------------------------------------------------------------------------

    def _decide(self, params: dict[str, Any], command_id: str, projection: ConversationProjection | None,
                revision: int) -> Ack:
        kind = params.get("type")
        payload = params.get("payload") if isinstance(params.get("payload"), dict) else {}
        handler = getattr(self, f"_c_{kind}", None) if isinstance(kind, str) else None
        ack: Ack = {"commandId": command_id, "status": "accepted", "revisionAtDecision": revision}
        try:
            if not self.newer_source and (kind in NEWER_COMMANDS or (
                    kind == "switchCollaborationMode" and payload.get("mode") in NEWER_MODES)):
                # 3.14.4's envelope union has no such command / mode: the envelope fails to parse.
                what = f"mode {payload.get('mode')!r}" if kind == "switchCollaborationMode" else f"type {kind!r}"
                raise Decision("rejected", "proto.invalidPayload", f"Invalid command envelope: unknown {what}")
            if handler is None:
                raise Decision("failed", "fault.command.notImplemented", f"command type {kind!r} is not simulated")
            if kind == "sendText":
                need(payload, "text", str, "string")  # the engine checks the payload before the session
            if kind != "createSession":
                if projection is None:
                    raise Decision("rejected", "proto.sessionNotFound")
                self._check_base(params, payload, projection)
            result = handler(params, payload, projection)
        except Decision as decision:
            ack.update(status=decision.status, reasonCode=decision.reason_code)
            if decision.message is not None:
                ack["message"] = decision.message
            return ack
        if isinstance(result, dict):
            ack["result"] = result
        if kind in ("createSession", "setFollowupMode", "switchCollaborationMode"):  # as captured
            ack["memoryEnabled"] = False
        return ack

    def _check_base(self, params: dict[str, Any], payload: dict[str, Any], projection: ConversationProjection) -> None:
        """command-inbox.ts ``decide``: only the commands that need a base are judged; the epoch of a
        row-targeting command first (``proto.staleLogEpoch``), then the revision (``proto.staleRevision``)."""
        kind = params.get("type")
        if kind not in REQUIRING_BASE_REVISION:
            return
        if params.get("baseRevision") is None:
            raise Decision("rejected", "proto.missingBaseRevision")
        if kind in ROW_TARGETING and params.get("baseLogEpoch") != projection.log.log_epoch:
            raise Decision("stale", "proto.staleLogEpoch")
        if params.get("baseRevision") != projection.revision:
            raise Decision("stale", "proto.staleRevision")

    # -- the commands --------------------------------------------------------------------

    def _c_createSession(self, params: dict[str, Any], payload: dict[str, Any], _: Any) -> dict[str, Any]:
        workspace = need(payload, "workspaceId", str, "string")
        first = payload.get("firstInput")
        if first is not None and not (isinstance(first, dict) and isinstance(first.get("text"), str)):
            raise Decision("rejected", "proto.invalidPayload", zod_issue("firstInput.text", "string", first))
        seed = self.port.create_session(workspace)
        projection = self.sessions.open(seed, workspace)
        if first is not None:  # the session's first turn starts at once (else it stays a draft)
            attachments = [self._attachment(reference) for reference in first.get("attachments") or []]
            self._start(projection, first["text"], params["commandId"], params.get("clientId"), attachments)
        return {"type": "createSession", "sessionId": seed.session_id}

    def _attachment(self, reference: Any) -> dict[str, Any]:
        upload = self.attachments.resolve(reference)
        if upload is None:
            raise Decision("rejected", "proto.invalidPayload", f"unknown attachment ref {reference!r}")
        return {"ref": upload.ref, "fileName": upload.file_name, "mime": upload.mime, "bytes": upload.total_bytes}

    def _c_sendText(self, params: dict[str, Any], payload: dict[str, Any],
                    projection: ConversationProjection) -> dict[str, Any]:
        text = payload["text"]
        attachments = [self._attachment(reference) for reference in payload.get("attachments") or []]
        command_id, client_id = params["commandId"], params.get("clientId")
        input_id = self._input_id()
        if projection.state["inputRouting"]["mode"] == "reject":
            raise Decision("rejected", projection.state["inputRouting"].get("reasonCode", "input.rejected"))
        if projection.state["inputRouting"]["mode"] == "choice":
            self._held_disposition(projection, payload)
        queue = projection.state["queue"]
        if not projection.busy and (not queue["items"] or not queue["autoDrain"]):
            # Idle, and nothing queued ahead (or the queue is held and the user chose to send past it).
            self._start(projection, text, command_id, client_id, attachments)
            return {"type": "inputAccepted", "delivery": "startNow", "inputId": command_id}
        requested = payload.get("requestedDelivery")
        if requested not in ("guide", "queue"):
            requested = "guide" if projection.state["config"].get("followupMode") == "guide" else "queue"
        guided = requested == "guide" and projection.running and not attachments
        self._enqueue(projection, text, command_id, client_id, attachments, payload.get("requestedDelivery"),
                      admitted="guide" if guided else "queue")
        if guided:
            # Acked ``queue`` all the same (session-flow.ts: the ack says only startNow or queue); the item
            # waits in ``queue.items`` admitted ``guide`` until the running turn takes it in.
            projection.guides[input_id] = ExpectedInput(text, command_id, client_id, attachments)
            self.port.guide(projection.session_id, text, input_id)
        # session-flow.ts: the ack's inputId is the command's own id.
        return {"type": "inputAccepted", "delivery": "queue", "inputId": command_id}

    @staticmethod
    def _held_disposition(projection: ConversationProjection, payload: dict[str, Any]) -> None:
        """input-admission.ts ``applyHeldQueueDisposition``: a held queue needs the user's choice; a
        confirmation made against other items is stale; ``clearQueueAndSend`` empties the queue first."""
        disposition = payload.get("heldQueueDisposition")
        if disposition not in ("clearQueueAndSend", "keepQueueAndSend"):
            raise Decision("failed", *HELD_REQUIRED)
        expected = payload.get("expectedHeldQueueItemIds")
        items = projection.state["queue"]["items"]
        if isinstance(expected, list) and (len(set(expected)) != len(expected) or
                                           {item["queueItemId"] for item in items} != set(expected)):
            raise Decision("failed", *HELD_STALE)
        if disposition == "clearQueueAndSend":
            projection.set("queue", {"items": [], "autoDrain": True})

    def _c_stop(self, params: dict[str, Any], payload: dict[str, Any], projection: ConversationProjection) -> None:
        works = projection.state["control"]["activeWorks"] if projection.running else []
        expected = payload.get("expectedForegroundExecutionId")
        if expected is not None and all(w.get("foregroundExecutionId") != expected for w in works):
            raise Decision("noop", "guard.stopTargetChanged")  # idle, or another execution runs now
        if not works:
            return  # no target named and nothing runs: accepted, nothing to do (the engine's own stop)
        queue = projection.state["queue"]
        if queue["items"]:
            projection.set("queue", {**queue, "autoDrain": False, "pauseReason": "stopped"})
        projection.stopping()
        self.port.stop(projection.session_id)
        # No result: the engine's ack result union (command.ts) has no "stop" member.

    def _c_compact(self, params: dict[str, Any], payload: dict[str, Any], projection: ConversationProjection) -> None:
        """goal-compact.ts: a compaction running or queued already locks a second one (``failed
        compactOperationLock``); while a turn runs (or the queue is held) it is queued, accepted with no
        result, and runs when its turn in the queue comes."""
        command_id = params["commandId"]
        compacting = projection.running and any(w.get("kind") == "compact"
                                                for w in projection.state["control"]["activeWorks"])
        if compacting or any(item["kind"] == "compact" for item in projection.state["queue"]["items"]):
            raise Decision("failed", "compactOperationLock", "a compaction is already running or queued")
        self._allowed(projection, "compact")
        queue = projection.state["queue"]
        if projection.busy or (queue["items"] and not queue["autoDrain"]):
            self._enqueue(projection, "/compact", command_id, params.get("clientId"), [], None, kind="compact")
            return
        projection.compact_command = command_id
        self.port.compact(projection.session_id)

    def _c_resolveInteraction(self, params: dict[str, Any], payload: dict[str, Any],
                              projection: ConversationProjection) -> dict[str, Any]:
        interaction_id = need(payload, "interactionId", str, "string")
        answer = need(payload, "answer", dict, "object")
        item = projection.interaction(interaction_id)
        if item is None:
            if interaction_id in projection.answered:
                raise Decision("noop", "interaction.alreadyResolved")  # the first answer won (ours or the host's)
            raise Decision("stale", "proto.staleTarget")
        self._resolve(projection, item, answer)
        resolved_by = {"clientId": str(params.get("clientId") or "")}
        if isinstance(answer.get("optionId"), str):
            resolved_by["optionId"] = answer["optionId"]
        return {"type": "resolveInteraction", "resolvedBy": resolved_by}

    def _resolve(self, projection: ConversationProjection, item: dict[str, Any], answer: dict[str, Any]) -> None:
        request_id = projection.request_id_of(item["interactionId"])
        if request_id is None:
            return
        projection.feed({"type": f"{item['kind']}.resolved", "payload": {"requestId": request_id}})
        self.port.resolve_interaction(projection.session_id, request_id, item["kind"], answer)

    def _c_snoozeInteractionAutoResolution(self, params: dict[str, Any], payload: dict[str, Any],
                                           projection: ConversationProjection) -> None:
        if not projection.snooze(need(payload, "interactionId", str, "string")):
            raise Decision("stale", "proto.staleTarget")

    def _c_switchModelConfig(self, params: dict[str, Any], payload: dict[str, Any],
                             projection: ConversationProjection) -> None:
        provider = need(payload, "provider", str, "string")
        model = need(payload, "model", str, "string")
        thought = need(payload, "thought", str, "string")
        config = projection.state["config"]
        if (config["provider"], config["model"], config["thought"]) == (provider, model, thought):
            raise Decision("noop", _UNCHANGED)
        # The port's own change event reaches the projection first: it names this command on the
        # marker it leaves (rows.ts: a marker a user's act made carries ``sourceCommandId``).
        projection.deciding_command = params.get("commandId") if isinstance(params.get("commandId"), str) else None
        try:
            if not self.port.switch_model(projection.session_id, provider, model, thought):
                raise Decision("rejected", "config.modelUnavailable")
            projection.switch_config({**config, "provider": provider, "model": model, "thought": thought})
        finally:
            projection.deciding_command = None

    def _c_switchCollaborationMode(self, params: dict[str, Any], payload: dict[str, Any],
                                   projection: ConversationProjection) -> None:
        mode = need(payload, "mode", str, "string")
        config = projection.state["config"]
        if config["mode"] == mode:
            raise Decision("noop", _UNCHANGED)
        if not self.port.switch_mode(projection.session_id, mode):
            raise Decision("rejected", "config.modeUnavailable")
        projection.switch_config({**config, "mode": mode, "planEnabled": mode == "plan"})

    def _c_setFollowupMode(self, params: dict[str, Any], payload: dict[str, Any],
                           projection: ConversationProjection) -> None:
        mode = payload.get("mode")
        if mode not in ("queue", "guide"):
            raise Decision("rejected", "proto.invalidPayload", zod_issue("mode", '"queue" | "guide"', mode))
        projection.switch_config({**projection.state["config"], "followupMode": mode})

    def _c_cancelBackgroundWork(self, params: dict[str, Any], payload: dict[str, Any],
                                projection: ConversationProjection) -> None:
        work_id = need(payload, "workId", str, "string")
        work = next((w for w in projection.state["backgroundWorks"] if w["workId"] == work_id), None)
        if work is None:
            raise Decision("stale", "proto.staleTarget")
        if work["status"] != "running" or not self.port.cancel_background(projection.session_id, work_id):
            raise Decision("noop", "background.notRunning")

    def _c_renameSession(self, params: dict[str, Any], payload: dict[str, Any],
                         projection: ConversationProjection) -> None:
        title = need(payload, "title", str, "string")
        self.port.rename(projection.session_id, title)
        projection.set("meta", {"title": title, "titleSource": "custom"})

    def _c_deleteSession(self, params: dict[str, Any], payload: dict[str, Any],
                         projection: ConversationProjection) -> None:
        self.port.delete(projection.session_id)
        projection.set("control", {**projection.state["control"], "sessionEnded": True})
        projection.commit()
        self.sessions.close(projection.session_id)

    def _c_forkAssistant(self, params: dict[str, Any], payload: dict[str, Any],
                         projection: ConversationProjection) -> dict[str, Any]:
        row = self._target(payload, projection)
        self._allowed(projection, "fork")
        if not (row.get("actions") or {}).get("canFork"):
            raise Decision("failed", "guard.forkTargetNotStable",
                           f"forkAssistant targetRowId {row['rowId']} is not a stable last assistant segment")
        seed = self.port.fork(projection.session_id, row["turnId"])
        workspace = self.sessions.workspace_of.get(projection.session_id, "")
        child = self.sessions.open(seed, workspace, parent_session_id=projection.session_id)
        child.copy_rows([r for r in projection.rows.rows if r["rowId"] <= row["rowId"]])
        child.fork_notice(projection.session_id, row["rowId"])
        child.commit()
        projection.fork_created(seed.session_id, row["rowId"])
        return {"type": "forkAssistant", "sessionId": seed.session_id}

    def _rerun(self, projection: ConversationProjection, row: dict[str, Any], text: str | None,
               command_id: str, client_id: Any) -> None:
        if projection.busy:
            raise Decision("rejected", "turn.running")
        turn_rows = [r for r in projection.rows.rows if r["turnId"] == row["turnId"]]
        header = next((r for r in turn_rows if r["kind"] == "turnHeader"), None)
        user = next((r for r in turn_rows if r["kind"] == "userInput"), None)
        if header is None or user is None:
            raise Decision("stale", "proto.staleTarget")
        self.port.truncate(projection.session_id, row["turnId"])
        projection.cut_from(header["rowId"])
        projection.commit()
        self._start(projection, user["text"] if text is None else text, command_id,
                    client_id if isinstance(client_id, str) else None, list(user.get("attachments") or []),
                    origin="editRerun")

    def _c_applyFileRewind(self, params: dict[str, Any], payload: dict[str, Any],
                           projection: ConversationProjection) -> None:
        self._target(payload, projection)  # a target that is gone is stale, as captured
        raise Decision("failed", "fault.command.notImplemented", "file rewinds are not simulated")

    def _c_retryTurn(self, params: dict[str, Any], payload: dict[str, Any],
                     projection: ConversationProjection) -> None:
        row = self._target(payload, projection)
        if not (row.get("actions") or {}).get("canRetry"):
            raise Decision("failed", "guard.latestAssistantRetryOnly",
                           f"retryTurn targetRowId {row['rowId']} is not the latest assistant reply")
        self._rerun(projection, row, None, params["commandId"], params.get("clientId"))

    def _c_editUserQuery(self, params: dict[str, Any], payload: dict[str, Any],
                         projection: ConversationProjection) -> None:
        row = self._target(payload, projection)
        new_text = need(payload, "newText", str, "string")
        if not (row.get("actions") or {}).get("canEdit"):
            raise Decision("failed", "guard.latestQueryEditOnly",
                           f"editUserQuery targetRowId {row['rowId']} is not the latest real user query")
        self._rerun(projection, row, new_text, params["commandId"], params.get("clientId"))

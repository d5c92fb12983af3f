"""Session: one ACP session and, once used, its backend session (its layers: core.py).

This top layer holds settings, extension methods and slash commands, and the end (backend lost,
teardown, stop)."""

from __future__ import annotations

import uuid
from typing import Any

import gevent.event

from zcode_acp.protocol.errors import (
    INTERNAL_ERROR,
    RpcError,
)
from zcode_acp.protocol.quota import quota_update
from zcode_acp.protocol.i18n import t
from zcode_acp.protocol.translator import agent_text, notice_text

from zcode_acp.actors.base import handles
from zcode_acp.actors.delivery import deliver
from zcode_acp.actors.messages import (
    BackendLost,
    CancelInteractions,
    CancelTurn,
    CloseTasks,
    Extension,
    QuotaForFailure,
    QuotaNews,
    Reply,
    SetSetting,
    Teardown,
    UnregisterRoute,
)
from zcode_acp.actors.session.extensions.handler import ExtensionRequest
from zcode_acp.actors.session.extensions.table import HANDLERS
from zcode_acp.actors.session.lifecycle import Phase

from zcode_acp.actors.session.loading import SessionLoading


class Session(SessionLoading):
    """One ACP session: the actor the Supervisor starts."""

    # -- settings, extensions, commands ----------------------------------------------------------------

    @handles(SetSetting)
    def on_set_setting(self, message: SetSetting) -> None:
        def done(result: Any) -> None:
            answer = self.controls.config_answer() if message.answer == "config" else {}
            message.conn.tell(Reply(message.request_id, answer, None))

        self.controls.set_setting(message.config_id, message.value, done, message.fail)

    @handles(Extension)
    def on_extension(self, message: Extension) -> None:
        def answer(result: Any) -> None:
            message.conn.tell(Reply(message.request_id, result if isinstance(result, dict) else {}, None))

        handler = HANDLERS[message.name]
        try:
            call = handler.validate(message.params)  # the one check of its params: -32602 naming the field
        except RpcError as exc:
            message.fail(exc)
            return
        request = ExtensionRequest(message.name, self.controls, message.conn, message.request_id, answer,
                                   message.fail, self.config.lang)
        self.path.run_extension(handler, call, request)  # the handler's method for this path

    @handles(QuotaForFailure)
    def on_quota_for_failure(self, message: QuotaForFailure) -> None:
        """The QuotaWatch's snapshot for a v4 turn the plan's limit stopped (or the wait ran out)."""
        self.quota_for_failure(message)

    @handles(QuotaNews)
    def on_quota_news(self, message: QuotaNews) -> None:
        """The plan's quota changed (actors/quota.py): the snapshot to the clients that read
        ``quota_update``, the alerts as a notice to the others (docs/quota.md)."""
        readers = [c for c in self.clients if c.actor_urn in message.quota_clients] if message.document else []
        others = [c for c in self.clients if c not in readers]
        deliver(readers, self.session_id, [quota_update(message.document)])
        if message.alerts:  # its own message, ending in a paragraph break: the next text never glues to it
            deliver(others, self.session_id,
                    [agent_text(notice_text("\n\n".join(message.alerts), after_text=False),
                                f"quota-{uuid.uuid4().hex[:12]}")])

    # -- the end -----------------------------------------------------------------------------------------

    @handles(BackendLost)
    def on_backend_lost(self, message: BackendLost) -> None:
        self.lifecycle.lost()  # the next use resumes on a new backend process
        self.sequencer.reset()
        self.lifecycle.fail_waiters(RpcError(INTERNAL_ERROR, message.reason))
        self.path.lost(RpcError(INTERNAL_ERROR, message.reason))
        self.controls.compaction_lost({"message": t(self.config.lang, "backend.lost_during_compaction",
                                                     reason=message.reason)})
        for turn in list(self.turns.values()):
            turn.tell(BackendLost(message.reason))  # each closes its own cards
        self.deliver(self.close_cards_between_turns())
        # Its open dialogs are withdrawn; an answer can never reach the next process.
        self.router.tell(CancelInteractions(self.session_id, message.reason))

    @handles(Teardown)
    def on_teardown(self, message: Teardown) -> gevent.event.AsyncResult | None:
        """Cancel every turn (each stops its backend turn) before the backend goes away. A create
        in flight (a first run learning the models) gives the caller what its answer will settle."""
        was_live = self.lifecycle.live
        if self.lifecycle.phase is Phase.MATERIALIZING:
            self.create_settled = gevent.event.AsyncResult()
        self.lifecycle.close()
        self.router.tell(CancelInteractions(self.session_id, message.reason))
        self.path.close()
        futures = [turn.ask(CancelTurn(), block=False) for turn in self.turns.values()]
        for future in futures:
            try:
                future.get(timeout=1.0)
            except Exception:
                pass
        self.lifecycle.fail_waiters(self.lifecycle.closed_error())
        self.deliver(self.close_cards_between_turns())
        try:  # tasks belong to the session: their cards fail with it
            if self.tasks is not None:
                self.tasks.ask(CloseTasks(), timeout=1.0)
        except Exception:
            pass
        if self.backend_session_id:
            if message.close_backend and was_live:
                # ACP session/close: the engine closes its session too (an engine without the method says -32601).
                self._call("session/close", {"sessionId": self.backend_session_id})
            self.backend.tell(UnregisterRoute(self.backend_session_id, self.actor_ref))
        return self.create_settled

    def on_stop(self) -> None:
        for turn in self.turns.values():
            turn.stop(block=False)
        self.turns.clear()
        if self.tasks is not None:
            self.tasks.stop(block=False)

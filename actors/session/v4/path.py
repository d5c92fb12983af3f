"""A Session on the engine's v4 data plane (``ZCODE_ACP_ENGINE_API=v4``, docs/v4.md).

The Session keeps its lifecycle (the legacy ``session/create``/``session/resume`` make
the engine session: its schema has no v4 resume, and the engine serves every session it
holds on v4 too); instead of ``session/subscribe`` it subscribes to the conversation
topic, and from then on this part owns the v4 side:

* ``V4Feed`` — the topic: frames in pipe order, reassembly, CRC, snapshots, deltas,
  gaps and bad frames answered by ``v4/conversation/resync``, stale subscriptions ignored;
  its translator makes the ACP updates, so the cards of a v4 session have one owner: it;
* ``V4Commands`` — ``v4/command`` acks (duplicate, noop, stale retried once, a lost ack
  queried);
* ``V4Prompts`` — the prompts owed an answer, answered when ``control`` says their turn
  ended, after its last update (both leave this actor, in order, for the same client).

It works through the Session's ``SessionPort`` (actors/session/path.py), like the other parts;
``V4Engine`` (v4/engine.py) is the layer above, the Session's ``EnginePath``.
"""

from __future__ import annotations

import functools
import logging
import uuid
from collections.abc import Callable
from typing import Any


from zcode_acp.protocol.errors import RpcError
from zcode_acp.protocol.tools import text_content
from zcode_acp.protocol.translator import notice_chunk
from zcode_acp.protocol.v4 import commands as v4
from zcode_acp.protocol.v4.conversation import ConversationTranslator, TurnEnded
from zcode_acp.protocol.v4.conversation_view import pending_interactions
from zcode_acp.protocol.v4.conversation_view import control as control_of
from zcode_acp.protocol.v4.interaction_answers import matching, resolve_command
from zcode_acp.protocol.v4.conversation_apply import Reset

from zcode_acp.actors.messages import V4Expire, V4Resolve
from zcode_acp.actors.session.v4.extras import queue_items
from zcode_acp.actors.session.v4.heldqueue import held_disposition
from zcode_acp.actors.session.v4.prompts import Answer, OwedPrompt
from zcode_acp.protocol.i18n import t

from zcode_acp.actors.session.v4.subscription import V4Subscription, cold, countdown_notice, now_ms, CANCEL_GRACE_SECONDS

log = logging.getLogger(__name__)


class V4Path(V4Subscription):
    # -- prompts -------------------------------------------------------------------------------

    def hold(self, conn: Any, request_id: Any) -> OwedPrompt:
        """A prompt owed from the moment it arrives, while the engine session is made: a cancel
        meanwhile answers it at once, and it is never sent."""
        owed = OwedPrompt(conn, request_id)
        self.quota.cancel()  # a new prompt stops the countdown to a retry: the user goes on otherwise
        self.prompts.hold(owed)
        self._activity()
        return owed

    def held_failed(self, owed: OwedPrompt, error: RpcError) -> None:
        """The engine session could not be made: the held prompt fails (unless already answered)."""
        if self.prompts.release(owed):
            self._answer([Answer(owed, None, error)])

    def prompt(self, owed: OwedPrompt, text: str, attachments: list[dict[str, Any]]) -> None:
        if self.session.compaction_holds_prompt():  # our compaction runs: the prompt starts after it, still held
            self.held.append((owed, text, attachments))
            return
        if self.muted:  # a stopped turn runs on: the prompt waits for its end or the fallback's close
            # (Sent at once after a cancel, as Zed does: nothing of it lands under the stopped turn,
            # and it is told why it waits only if that turn outlives the grace: V4Expire.)
            self.held.append((owed, text, attachments))
            if self.cancel_due is None and self.fallback.notice_due():
                self.session.deliver([notice_chunk(t(self.session.config.lang, "notice.stopping"), uuid.uuid4().hex)])
            return
        if not self.prompts.release(owed):
            return  # answered while it waited (cancelled, or its session lost)
        self.prompts.sent(owed)
        self._activity()
        if attachments:  # uploaded first: a command carries them by ref only (v4/attachments.py)
            self.uploads.upload(str(self.session.backend_session_id), attachments,
                                lambda refs, error: self._uploaded(owed, text, refs, error))
            return
        self._send_text(owed, text, None, resumed=False)

    def _uploaded(self, owed: OwedPrompt, text: str, refs: list[dict[str, Any]] | None,
                  error: RpcError | None) -> None:
        if error is not None:
            self._answer([self.prompts.refused(owed, error)])
            return
        self._send_text(owed, text, refs or None, resumed=False)

    def _send_text(self, owed: OwedPrompt, text: str, refs: list[dict[str, Any]] | None, resumed: bool) -> None:
        # A queue the engine holds (routing ``choice``) needs a word on it, or the engine refuses the
        # prompt: it goes past the queue, which the bridge resumes (v4/heldqueue.py).
        held = held_disposition(self.feed.state.state) if self.feed is not None else {}
        command = v4.send_text(str(self.session.backend_session_id), text, attachments=refs, **held)

        def admitted(ack: v4.CommandAck | None, error: RpcError | None) -> None:
            if error is not None and not resumed and cold(error):
                # The engine let the session go from memory (its resident pool): v4 has no resume, so
                # the legacy one loads it back, the topic is subscribed again, and the prompt sent once more.
                log.info("session %s: the engine holds the session no more; resuming it", self.session.session_id)
                self.session.lost()
                self.session.when_live(lambda: self._send_text(owed, text, refs, resumed=True),
                                       lambda failure: self._answer([self.prompts.refused(owed, failure)]))
                return
            self._admitted(owed, ack, error)

        self.commands.send(command, admitted)

    def _admitted(self, owed: OwedPrompt, ack: v4.CommandAck | None, error: RpcError | None) -> None:
        if error is not None:
            self._answer([self.prompts.refused(owed, error)])
            return
        result = ack.result if ack is not None else None
        delivery = result.get("delivery") if isinstance(result, dict) else None
        notice = self.prompts.admitted(owed, delivery if isinstance(delivery, str) else None,
                                       ack.command_id if ack is not None else None)
        if owed.cancelled and delivery == "queue":  # cancelled while it was being admitted
            self._cancel_queued(owed)
            return
        if notice:
            self.session.deliver([notice_chunk(notice, uuid.uuid4().hex)])

    def release_held(self) -> None:
        """Our compaction is over: the prompts it held go to the engine, in the order they came
        (those a cancel answered meanwhile are not sent: ``prompt`` finds them released)."""
        held, self.held = self.held, []
        for owed, text, attachments in held:
            self.prompt(owed, text, attachments)

    def _drop_held(self, error: RpcError | None) -> None:
        held, self.held = self.held, []
        for owed, _text, _attachments in held:
            if self.prompts.release(owed):
                self._answer([Answer(owed, None if error else {"stopReason": "cancelled"}, error)])

    def cancel(self, error: RpcError | None = None, owed: OwedPrompt | None = None) -> None:
        """``session/cancel`` (or ``$/cancel_request`` of ``owed``): stop what runs, and answer its
        prompts now, as the legacy path does: nothing more of the stopped turn is sent (not the
        engine's "Permission denied" of a dialog the cancel closed), and a prompt sent next waits
        for that turn's end, so nothing of it lands under the cancelled one."""
        if owed is not None:
            owed.error = error
        else:
            self.quota.cancel()  # the countdown to a retry at the window's reset stops too
        self._answer(self.prompts.cancel_waiting(owed))  # never sent: answered now
        if owed is None and self.prompts.queued:
            self._cancel_queued()
        if not self.prompts.running and not self.prompts.admitting:
            return
        if owed is None:
            self.prompts.cancel_requested()
        else:
            owed.cancelled = True
        # A timer message (V4Expire), not a wait: the stopped turn usually ends well before it.
        self.cancel_due = now_ms() + CANCEL_GRACE_SECONDS * 1000
        self.session.remind(CANCEL_GRACE_SECONDS + 0.01, V4Expire())
        self.session.remind(self.fallback.arm(now_ms()) + 0.01, V4Expire())
        # What runs now, when the state names it: the engine then stops only that (a queued input
        # that started meanwhile is not stopped by a cancel meant for the one before: a noop).
        running = control_of(self.feed.state.state) if self.feed is not None else None
        execution = next((w.foreground_execution_id for w in running.active_works if w.foreground_execution_id),
                         None) if running is not None and running.running else None
        command = v4.stop(str(self.session.backend_session_id), expected_foreground_execution_id=execution)

        def stopped(ack: v4.CommandAck | None, error: RpcError | None) -> None:
            if error is not None:
                log.warning("session %s: stop refused: %s", self.session.session_id, error.message)
            elif ack is not None and ack.status == "noop" and self.prompts.running:
                # Nothing runs any more: the turn's end is already on its way (or was missed).
                self._answer(self.prompts.turn_ended(TurnEnded("cancelled", None)))

        self.commands.send(command, stopped)
        self.answer_cancelled()

    def _cancel_queued(self, only: OwedPrompt | None = None) -> None:
        """The prompts in the engine's queue are cancelled with the turn (actors/session/v4/unqueue.py)."""
        answers = self.prompts.unqueue(only)
        self.unqueue.add([answer.owed.command_id for answer in answers if answer.owed.command_id])
        self._answer(answers)
        self._unqueue()

    def _unqueue(self) -> None:
        if self.feed is None or not self.unqueue.pending:
            return
        for command in self.unqueue.sweep(str(self.session.backend_session_id), self.feed.state.state):
            self.commands.send(command, functools.partial(self._unqueued, command.type))

    def _unqueued(self, kind: str, ack: v4.CommandAck | None, error: RpcError | None) -> None:
        if error is not None:  # its prompt is answered already; the item may run, unowned
            log.warning("session %s: %s refused: %s", self.session.session_id, kind, error.message)

    def cancel_request(self, conn: Any, request_id: Any, error: RpcError) -> bool:
        owed = self.prompts.find(conn.actor_urn, request_id)
        if owed is None:
            return False
        self.cancel(error, owed)
        return True

    def unqueue_on_ack(self, queue_item_id: str) -> Callable[[v4.CommandAck], None] | None:
        """What answers the prompt a queue item came from (``cancelled``), once its delete is acked."""
        item = next((i for i in queue_items(self.feed.state.state) if i.get("queueItemId") == queue_item_id),
                    None) if self.feed is not None else None
        source = item.get("sourceCommandId") if item else None
        if not isinstance(source, str):
            return None

        def on_ack(ack: v4.CommandAck) -> None:
            if ack.status in ("accepted", "duplicate"):
                answer = self.prompts.unqueued(source)
                self._answer([answer] if answer else [])
        return on_ack

    def with_countdown(self, frame: dict[str, Any], tool_call: dict[str, Any]) -> dict[str, Any]:
        """The dialog's ``toolCall`` for the legacy request ``frame``, saying when the engine answers it
        by itself when it runs a countdown on it (``pendingInteractions[].autoResolution``)."""
        pending = pending_interactions(self.feed.state.state) if self.feed is not None else ()
        item = matching(pending, frame)
        if item is None or item.countdown_deadline_at is None:
            return tool_call
        notice = countdown_notice(item, self.session.config.lang)
        return {**tool_call, "content": [*(tool_call.get("content") or []), *text_content(notice)]}

    def resolve(self, message: V4Resolve) -> None:
        """A dialog's first answer: ``resolveInteraction`` on the pending interaction it stands for,
        then, right behind it on the pipe, the engine's legacy request answered once with the same
        answer (docs/decisions.md, "Dialogs on the v4 path"). Not after the ack: the engine goes on
        with the turn as soon as it takes the command, and the request must not outlive the turn."""
        pending = pending_interactions(self.feed.state.state) if self.feed is not None else ()
        item = matching(pending, message.frame)
        command = resolve_command(str(self.session.backend_session_id), item, message.result) if item else None
        if item is not None and command is not None:
            self.countdowns.answered(item.interaction_id)
            self.commands.send(command, functools.partial(self._resolved, item.interaction_id))
        self.session.answer_backend(message.generation, message.request_ids, message.result)

    def _resolved(self, interaction_id: str, ack: v4.CommandAck | None, error: RpcError | None) -> None:
        if error is not None:  # the legacy answer, already sent, is the one that counts
            log.warning("session %s: resolveInteraction %s refused: %s", self.session.session_id, interaction_id,
                        error.message)
        elif ack is not None and ack.status == "noop":
            log.info("session %s: interaction %s was already resolved", self.session.session_id, interaction_id)

    def declines_dialogs(self) -> bool:
        return self.muted  # the cancel answered the stopped turn (cancel): its late questions are declined

    def owns_card(self, card_id: str) -> bool:
        return self.feed is not None and self.feed.translator.has_card(card_id)

    def close(self) -> None:
        """Teardown: the running turn is stopped, its open cards fail, every prompt owed answers cancelled."""
        if self.prompts.running and self.session.backend_session_id:
            self.commands.send(v4.stop(self.session.backend_session_id), lambda ack, error: None)
        if self.feed is not None:
            self.session.deliver(self.feed.translator.close_open_cards())
        self._answer(self.prompts.drop_all(None))
        self.quota.flush()
        self._drop_held(None)
        self.end_subscriptions()  # before any legacy session/close: the engine may then let the session go

    def replay(self) -> list[dict[str, Any]]:
        """``session/load``: the conversation the snapshot holds, as updates (prompts included).

        One snapshot, not a history read: the engine already sends the newest rows whole.
        """
        if self.feed is None:
            return []
        state = self.feed.state
        translator = ConversationTranslator(replay_history=True, lang=self.session.config.lang,
                                            terminal_output=self.session.terminal_output(),
                                            subagents_of=self.subagents_of())
        return translator.translate([Reset(dict(state.state), tuple(state.rows))]).updates

    def lost(self, error: RpcError) -> None:
        if self.feed is not None:  # its cards first: the prompts' answers come after their last update
            self.session.deliver(self.feed.translator.close_open_cards())
        self._answer(self.prompts.drop_all(error))
        self.quota.flush()
        self._drop_held(error)
        self.feed = None  # a new process: a new subscription, from a snapshot
        self.until_ready = None
        self.muted = False
        self.fresh = self.announce_settings = False  # the next process resumes it
        self.mode_wait = None

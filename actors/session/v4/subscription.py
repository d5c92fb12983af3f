"""The v4 path's lower layer: the engine session, its subscriptions, and what their frames say.

``V4Subscription`` makes the engine session (``createSession``), subscribes its conversation and
its workspace's config, feeds the frames through ``V4Feed`` in pipe order (resyncs, the assembly
timer), delivers the updates, and turns the signals into answers: a turn's end, a compaction's
end, the opening mode reached. ``v4/path.py`` (``V4Path``) builds the prompts, cancels, extension
methods, dialogs and the end on it (docs/v4.md, "The v4 backend path")."""

from __future__ import annotations

import functools
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any


from zcode_acp.protocol import air
from zcode_acp.protocol.errors import INTERNAL_ERROR, RpcError
from zcode_acp.protocol.sessions import ZCODE_PROTOCOL, iso_time
from zcode_acp.protocol.subagents import supports_subagents
from zcode_acp.protocol.translator import notice_chunk
from zcode_acp.protocol.v4 import commands as v4
from zcode_acp.protocol.v4 import compaction_marker
from zcode_acp.protocol.v4.conversation import InteractionClosed, InteractionOpened, TurnEnded, TurnOpened, TurnSettled
from zcode_acp.protocol.v4.conversation_view import PendingInteraction
from zcode_acp.protocol.v4.conversation_view import collaboration_mode
from zcode_acp.protocol.v4.conversation_view import control as control_of

from zcode_acp.actors.messages import Reply, V4Expire
from zcode_acp.actors.session.path import SessionPort
from zcode_acp.actors.session.v4.attachments import V4Uploads
from zcode_acp.actors.session.v4.close import closing_calls
from zcode_acp.actors.session.v4.commands import V4Commands
from zcode_acp.actors.session.v4.countdowns import Countdowns
from zcode_acp.actors.session.v4.extras import V4Extras
from zcode_acp.actors.session.v4.feed import Step, V4Feed
from zcode_acp.actors.session.v4.extras import queue_items
from zcode_acp.actors.session.v4.heldqueue import V4HeldQueue, queue_held
from zcode_acp.actors.session.v4.mode import adopt_modes
from zcode_acp.actors.session.v4.stopfallback import StopFallback
from zcode_acp.actors.session.v4.opening import opening_mode
from zcode_acp.actors.session.v4.notices import TurnNotice, titles, turn_notice
from zcode_acp.actors.session.v4.prompts import Answer, OwedPrompt, V4Prompts
from zcode_acp.actors.session.v4.quota import V4Quota
from zcode_acp.actors.session.v4.unqueue import V4Unqueue
from zcode_acp.actors.session.v4.workspace import ConfigStep, V4WorkspaceConfig
from zcode_acp.protocol.i18n import t

log = logging.getLogger(__name__)


# How long after a stop a prompt kept behind the stopped turn is told why it waits: an engine
# that ends the turn at the stop (the usual case) runs the prompt before then, unannounced.
CANCEL_GRACE_SECONDS = 0.15
# How long a made session waits for the frame that shows its opening mode (v4/mode.py) after the
# switch's ack; the frame follows the ack at once unless it was lost.
MODE_GRACE_SECONDS = 1.0


def now_ms() -> float:
    return time.time() * 1000.0


def countdown_notice(interaction: PendingInteraction, lang: str = "en") -> str:
    """The engine runs a countdown on this question: say when it answers by itself."""
    seconds = max(0, round(((interaction.countdown_deadline_at or 0) - now_ms()) / 1000))
    key = "v4.countdown.permission" if interaction.kind == "permission" else "v4.countdown.question"
    return t(lang, key, seconds=seconds)


def compaction_reason(ended: TurnEnded) -> str:
    """The compaction's turn ended: how, in the words of the legacy ``state.updated`` reason."""
    if ended.stop_reason == "end_turn":
        return "session_compacted"
    return "session_compact_cancelled" if ended.stop_reason == "cancelled" else "session_compact_failed"


def settled_end(settled: TurnSettled, rows: list[dict[str, Any]]) -> TurnEnded:
    """A turn's end as its ``turnHeader`` says it (rows.ts states), for a turn whose ``control`` end
    never came: a failure has only the turn's last words (the patch that would carry ``lastError``
    was merged into the next turn's)."""
    if settled.state == "completedSuccess":
        return TurnEnded("end_turn", None)
    if settled.state == "completedInterrupted":
        return TurnEnded("cancelled", None)
    text = next((row.get("text") for row in reversed(rows) if row.get("kind") == "assistantText"), None)
    return TurnEnded(None, None, text.strip() if isinstance(text, str) else "")
def compact_command(answer: dict[str, Any] | None) -> str | None:
    """The ``v4/command compact`` id of an accepted compaction (its marker's ``sourceCommandId``), from
    the engine's answer to it (None: no compaction of ours runs, or it is not answered yet)."""
    compact = answer.get("compact") if isinstance(answer, dict) else None
    command_id = compact.get("operationId") if isinstance(compact, dict) else None
    return command_id if isinstance(command_id, str) and command_id else None


def cold(error: RpcError) -> bool:
    """The engine refused a command because the session is not in its memory (``proto.sessionNotFound``):
    a session it keeps in its store but let go of (docs/v4.md, "Lifecycle")."""
    return isinstance(error.data, dict) and error.data.get("reasonCode") == "proto.sessionNotFound"


class V4Subscription:
    def __init__(self, session: SessionPort) -> None:
        self.session = session  # the Session, through its port only
        self.connection_id = f"zcode-acp-{uuid.uuid4().hex[:12]}"
        self.feed: V4Feed | None = None
        self.workspace: V4WorkspaceConfig | None = None  # the catalog and slash commands (v4/workspace.py)
        self.commands = V4Commands(self, self.connection_id, session.config.lang)
        self.uploads = V4Uploads(self, self.connection_id, lambda: str(self.session.cwd or ""))
        self.countdowns = Countdowns()  # the engine's dialog countdowns, to say when one answered by itself
        self.prompts = V4Prompts(session.config.lang)
        self.extras = V4Extras(self.commands, lambda: self.feed.state if self.feed is not None else None,
                               lambda: str(self.session.backend_session_id), session.config.lang)
        self.expiry_armed: float | None = None
        self.until_ready: Callable[[], None] | None = None  # the subscribe's answer, owed once a snapshot is in
        self.usage_mark: dict[str, Any] | None = None  # the engine's cumulative usage when the last turn ended
        # prompts waiting out our compaction (still owed: a cancel meanwhile answers them, and they are not sent)
        self.held: list[tuple[OwedPrompt, str, list[dict[str, Any]]]] = []
        self.cancel_due: float | None = None  # when a prompt kept behind a stopped turn is told why
        self.muted = False  # a cancelled turn answered before its end: its late updates are not sent
        self.fallback = StopFallback(session.config.stop_fallback)  # such a turn, running on, is closed
        self.unqueue = V4Unqueue()  # the queued prompts a session/cancel cancelled, to delete from the engine's queue
        self.held_queue = V4HeldQueue()  # a queue the engine held after a failure, resumed (v4/heldqueue.py)
        self.fresh = False  # made by createSession and not live yet: its mode is the engine's default (v4/opening.py)
        self.announce_settings = False  # settings changes go to clients (not while a resume is still answering)
        # live once the feed shows this mode (or at the deadline): (mode, ready, deadline in ms)
        self.mode_wait: tuple[str, Callable[[], None], float] | None = None
        self.settled: TurnSettled | None = None  # the last turn's header left running; control has not ended it yet
        # a turn the plan's limit stopped: its answer names the window; the retry at its reset (v4/quota.py)
        self.quota = V4Quota(session, self.commands, lambda: self.feed.state.rows if self.feed is not None else [],
                             self._replied)

    @property
    def busy(self) -> bool:
        return self.prompts.busy or self.quota.busy

    def turn_running(self) -> bool:
        """A turn runs in the engine (``control`` in a running phase): text can be steered into it."""
        return self.feed is not None and control_of(self.feed.state.state).running

    # -- the port V4Commands uses ------------------------------------------------------------

    def engine_call(self, method: str, params: dict[str, Any], then: Callable[[Any, Any], None],
                timeout: float | None = None) -> None:
        self.session.call(method, params, then, timeout)

    def v4_base(self) -> v4.Base:
        return self.feed.base() if self.feed is not None else v4.Base(0)

    def v4_wake(self, seconds: float) -> None:
        self.session.remind(seconds + 0.01, V4Expire())

    # -- the engine session --------------------------------------------------------------------

    def create(self, workspace_path: str, mcp_servers: list[Any], done: Callable[[Any, Any], None]) -> None:
        """``createSession`` (a draft: the first prompt is its first ``sendText``).

        Not the legacy ``session/create``: the engine writes a legacy-made session's row
        at its first legacy send, so a v4 ``sendText`` to it fails (a captured foreign-key
        error). ``done`` gets the answer in ``session/create``'s shape.
        """
        command = v4.create_session(workspace_path, mcp_servers=mcp_servers or None)
        self.fresh = self.announce_settings = True  # session/new was answered long ago: its clients hear of changes

        def acked(ack: v4.CommandAck | None, error: RpcError | None) -> None:
            session_id = ack.result.get("sessionId") if ack is not None and ack.result else None
            if error is not None or not isinstance(session_id, str):
                done(None, (error or RpcError(INTERNAL_ERROR, "createSession named no session")).to_dict())
                return
            # An engine that takes v4 commands speaks the ZCode Protocol (0.16+): the marker its
            # legacy create answer carries, so the Session never calls a method 0.16 removed.
            made: dict[str, Any] = {
                "protocol": {"name": ZCODE_PROTOCOL},
                "session": {"sessionId": session_id,
                            "workspace": {"workspacePath": workspace_path, "workspaceKey": workspace_path}}}
            # The catalog: the engine's workspace-config topic carries only the mode option and the
            # slash commands (the desktop's host supplies its model picker), and a createSession ack
            # none; the legacy resume's snapshot lists every model, as a legacy create's does. Of a
            # session the engine holds in memory (this one, just made) a resume is a read: it finds
            # the record and answers its snapshot, changing nothing (server-operations.ts,
            # activateSessionForResume) — docs/decisions.md, "The v4 catalog".
            self.engine_call("session/resume", {"sessionId": session_id, "workspace": made["session"]["workspace"]},
                         functools.partial(self._catalog_read, made, done))

        self.commands.send(command, acked)

    @staticmethod
    def _catalog_read(made: dict[str, Any], done: Callable[[Any, Any], None], result: Any, error: Any) -> None:
        """The resume's settings (the whole catalog) in the made answer; without them the session still opens.

        Not its mode: that is the engine's default for a draft, which the opening switch replaces with
        the Session's own (v4/opening.py); taken here, it would become the Session's mode and no switch
        would be sent."""
        if error is None and isinstance(result, dict) and isinstance(result.get("settings"), dict):
            made["settings"] = {key: value for key, value in result["settings"].items() if key != "mode"}
        done(made, None)

    # -- the subscription ----------------------------------------------------------------------

    def end_subscriptions(self) -> None:
        """The engine may let the session go: each topic unsubscribed, then the connection closed
        (``v4/close.py``). Once: a later use subscribes afresh, from a snapshot."""
        topics = [(part.topic, part.subscription.subscription_id) for part in (self.feed, self.workspace)
                  if part is not None]
        if self.feed is None and self.workspace is None:
            return
        self.feed = self.workspace = None
        self.until_ready = None
        for method, params in closing_calls(self.connection_id, topics):
            self.engine_call(method, params, functools.partial(self._closed, method))

    def _closed(self, method: str, result: Any, error: Any) -> None:
        if error is not None:  # an engine without the method (or the topic already gone): nothing more to do
            log.debug("session %s: %s refused: %s", self.session.session_id, method,
                      error.get("message") if isinstance(error, dict) else error)

    def subagents_of(self) -> str | None:
        """This session, when its clients show sub-agents as its child sessions (protocol/subagents.py)."""
        return self.session.session_id if supports_subagents(self.session.capabilities) else None

    def subscribe(self, done: Callable[[Any, Any], None], resumed: bool = True) -> None:
        """Subscribe the conversation topic of the Session's backend session; ``done(result, error)``.

        ``resumed``: the Session resumed the engine session before this (its ``_subscribe``): the
        snapshot behind the ack is taken as known, never replayed as new output (the stop
        fallback's close and resume, a cold session, a new engine process). A resync the engine
        refused subscribes again without one, and its snapshot is diffed (the text the gap lost)."""
        backend_id = self.session.backend_session_id
        if self.feed is None or self.feed.topic != f"conversation/{backend_id}":
            self.feed = V4Feed(str(backend_id), self.connection_id, self.session.config.lang,
                               self.session.terminal_output(), own_command=self.commands.issued)
        elif resumed:
            self.feed.translator.rebaseline()
        feed = self.feed
        feed.translator.children.parent = self.subagents_of()

        def answered(result: Any, error: Any) -> None:
            if error is not None or feed is not self.feed:
                done(result, error)
                return
            # Live once the state means something: the snapshot behind the ack (a load replays it),
            # and the workspace's config (the catalog a settings change is checked against).
            self.until_ready = functools.partial(done, result, None)
            self._do(feed.subscribed(result, now_ms()))

        self._subscribe_workspace()
        self.engine_call("v4/conversation/subscribe", feed.subscribe_params(), answered,
                     timeout=self.session.config.subscribe_timeout)

    def _subscribe_workspace(self) -> None:
        """``workspace-config/<workspaceKey>``: the engine's model catalog and slash commands."""
        key = self.session.workspace_of(None).get("workspaceKey") or self.session.cwd
        if self.workspace is not None and self.workspace.topic == f"workspace-config/{key}":
            return
        config = self.workspace = V4WorkspaceConfig(str(key), self.connection_id)

        def answered(result: Any, error: Any) -> None:
            if config is not self.workspace:
                return
            if error is not None:  # an engine without the topic: the pickers keep what they offer
                log.warning("session %s: %s refused: %s", self.session.session_id, config.topic,
                            error.get("message") if isinstance(error, dict) else error)
                config.given_up = True
                self._do(Step())
                return
            self._configured(config.subscribed(result, now_ms()))

        self.engine_call("v4/conversation/subscribe", config.subscribe_params(), answered,
                     timeout=self.session.config.subscribe_timeout)

    def _configured(self, step: ConfigStep) -> None:
        for reason in step.ignored:
            log.debug("session %s: workspace config frame ignored: %s", self.session.session_id, reason)
        for surface in step.surfaces:  # as a create answer's catalog and commands; a resume's answer tells them itself
            self.session.surface_seen(self.announce_settings, surface)
        if step.resync is not None and self.workspace is not None:
            config = self.workspace

            def resynced(result: Any, error: Any) -> None:
                if config is self.workspace and error is None:
                    self._configured(config.subscribed(result, now_ms()))

            self.engine_call("v4/conversation/resync", step.resync, resynced, timeout=self.session.config.subscribe_timeout)
        self._do(Step())  # the Session may be live now

    def frames(self, frames: list[dict[str, Any]]) -> None:
        config = [f for f in frames if str(f.get("topic") or "").startswith("workspace-config/")]
        if config:
            if self.workspace is not None:
                self._configured(self.workspace.frames(config, now_ms()))
            frames = [f for f in frames if not str(f.get("topic") or "").startswith("workspace-config/")]
        if self.feed is not None and frames:
            self.feed.translator.children.parent = self.subagents_of()  # the clients may have changed
            self._do(self.feed.frames(frames, now_ms()))
            if self.feed is not None:  # acted on: an idle conversation holds its rows packed
                self.feed.rest()

    def expire(self, message: V4Expire) -> None:
        self.expiry_armed = None
        if self.feed is not None:
            self._do(self.feed.expire(now_ms()))
        self._mode_reached(now_ms())
        self.commands.caught_up(now_ms())
        self.quota.expire(now_ms())
        if self.cancel_due is not None and now_ms() >= self.cancel_due:
            self.cancel_due = None
            if self.muted and self.held and self.fallback.notice_due():  # a prompt waits for the stopped turn
                self.session.deliver([notice_chunk(t(self.session.config.lang, "notice.stopping"), uuid.uuid4().hex)])
        if self.fallback.overdue(now_ms()):
            self._fall_back()

    def answer_cancelled(self) -> None:
        """The cancelled prompts whose turn has not ended yet are answered now. The stopped turn's
        cards close, and nothing more of it follows the answer (as on the legacy path): its late
        frames are applied, not sent, until it ends."""
        overdue = self.prompts.cancel_overdue()
        if overdue and self.feed is not None:
            self.session.deliver(self.feed.translator.close_open_cards())
            self.muted = True
        self._answer(overdue)

    def _fall_back(self) -> None:
        """The stopped turn still runs past the fallback: close and resume the engine session (as the
        legacy path does), then send the prompts that waited for it."""
        self.fallback.over()
        if not self.muted:
            return  # it ended in time
        log.warning("session %s: the stopped turn still runs %gs after its stop; closing and resuming the session",
                    self.session.session_id, self.session.config.stop_fallback)
        self.muted = False  # the close ends it: what follows is the next turn's
        self.session.close_and_resume()
        self.session.when_live(self.release_held, lambda failure: self._drop_held(failure))

    def _do(self, step: Step) -> None:
        for reason in step.ignored:
            log.debug("session %s: v4 frame ignored: %s", self.session.session_id, reason)
        for update in step.updates:  # a new title says when it happened, as on the legacy path
            if update.get("sessionUpdate") == "session_info_update" and isinstance(update.get("title"), str):
                update.setdefault("updatedAt", iso_time(now_ms()))
        if self.mode_wait is not None:  # the opening switch names the mode the client already shows
            step.updates[:] = [u for u in step.updates if not (u.get("sessionUpdate") == "current_mode_update"
                                                                and u.get("currentModeId") == self.mode_wait[0])]
        step.updates = adopt_modes(step.updates, self.session.settings)  # a mode is told once (v4/mode.py)
        if not self.muted:
            self.session.deliver_feed(step.updates)
        for title in titles(step.updates):  # the hub's list and the notices name the session by it
            self.session.titled(title)
        for signal in step.signals:
            if isinstance(signal, TurnEnded):
                if self.session.compaction_running() and not self.prompts.running and \
                        compact_command(self.session.compaction_answer()) is None:
                    # (no command id to find its marker by: the end of a turn nobody's prompt ran is its end)
                    self._turn_usage()
                    self.session.compaction_ended(compaction_reason(signal))
                    continue
                self.fallback.over()  # a turn ended: no stopped one left to close
                stopped_turn_over, self.muted = self.muted, False  # what follows is the next turn's
                ended = turn_notice(signal, self.feed.state.rows) if self.feed is not None else None
                self.settled = None
                drains = self.feed is None or not queue_held(self.feed.state.state)
                answers = self.prompts.turn_ended(signal, self._turn_usage(), drains)
                self._answer(answers, ended)
                self.quota.turn_ended(signal, bool(answers))
                if stopped_turn_over:  # the prompts that waited for it go now (v4/stopfallback.py),
                    self.release_held()  # after this end is answered: it is not theirs
            elif isinstance(signal, TurnSettled):
                self.settled = signal  # the turn is over: its prompts end with it if control never says so
            elif isinstance(signal, TurnOpened):
                self._turn_opened(signal)
            elif isinstance(signal, InteractionOpened) and signal.interaction.countdown_deadline_at is not None:
                self.countdowns.opened(signal.interaction)
                notice = countdown_notice(signal.interaction, self.session.config.lang)
                self.session.deliver([notice_chunk(notice, uuid.uuid4().hex)])
            elif isinstance(signal, InteractionClosed):
                key = self.countdowns.closed(signal.interaction_id, now_ms())
                if key is not None:  # the engine answered it by itself: never a silent empty answer
                    self.session.deliver([notice_chunk(t(self.session.config.lang, key), uuid.uuid4().hex)])
        self._compaction_reached()
        if self.until_ready is not None and self.feed is not None and self.feed.subscription.ready and (
                self.workspace is None or self.workspace.settled):
            ready, self.until_ready = self.until_ready, None
            self.usage_mark = self._cumulative()
            self.announce_settings = True
            self._live_in_mode(ready)
        self._mode_reached()
        self._route()
        self._unqueue()
        self._follow_queue()
        self.commands.caught_up(now_ms())  # a stale command goes again once the feed shows the engine's state
        if step.resync is not None:
            log.info("session %s: resyncing %s", self.session.session_id, step.resync["topic"])
            self.engine_call("v4/conversation/resync", step.resync, self._resynced,
                         timeout=self.session.config.subscribe_timeout)
        self._arm_expiry()

    def _route(self) -> None:
        """Where each prompt acked ``queue`` went, by its ``sendText`` id: a queue item admitted
        ``guide``, or its text already taken into the running turn (a ``userInput`` row naming it),
        is guided — answered when the running turn ends, never called queued; a queue item admitted
        ``queue``, or a turn it opened, is queued (docs/v4.md, "Guide mode")."""
        pending = self.prompts.route_pending()
        if self.feed is None or not pending:
            return
        items = {item.get("sourceCommandId"): item for item in queue_items(self.feed.state.state)}
        rows = {row.get("sourceCommandId"): row.get("kind") for row in self.feed.state.rows
                if row.get("kind") in ("userInput", "turnHeader")}
        notices = []
        for owed in pending:
            item, kind = items.get(owed.command_id), rows.get(owed.command_id)
            delivery = item.get("delivery") if isinstance(item, dict) else None
            admitted = delivery.get("admitted") if isinstance(delivery, dict) else None
            if admitted in ("guide", "queue"):
                notices.append(self.prompts.routed(owed, str(admitted)))
            elif kind == "userInput" and owed not in self.prompts.running and not self._opened_by(owed):
                notices.append(self.prompts.routed(owed, "guide"))  # drained into the running turn already
            elif kind is not None:
                notices.append(self.prompts.routed(owed, "queue"))  # its own turn opened: it was queued
        if notices:
            self.session.deliver([notice_chunk(notice, uuid.uuid4().hex) for notice in notices])

    def _opened_by(self, owed: OwedPrompt) -> bool:
        """A turn this prompt's ``sendText`` started (its ``turnHeader`` names it)."""
        rows = self.feed.state.rows if self.feed is not None else []
        return any(row.get("kind") == "turnHeader" and row.get("sourceCommandId") == owed.command_id for row in rows)

    def _turn_opened(self, opened: TurnOpened) -> None:
        """The engine started a turn. Prompts still carried by the turn before it end now, as that
        turn's header said (its end and this start came in one patch: ``control`` never left its
        running phase, coalesce.ts); a queued prompt this turn names runs from now on."""
        earlier = [one for one in self.prompts.running if one.command_id != opened.source_command_id]
        if earlier and self.settled is not None:
            ended = settled_end(self.settled, self.feed.state.rows if self.feed is not None else [])
            notice = turn_notice(ended, self.feed.state.rows) if self.feed is not None else None
            self._answer(self.prompts.turn_ended(ended, self._turn_usage(), drains=False), notice)
        self.settled = None
        if opened.source_command_id is not None:
            self.prompts.started(opened.source_command_id)

    def _follow_queue(self) -> None:
        """A queue the engine held after a failure is resumed (v4/heldqueue.py); not while a cancel
        empties the queue (it sends its own ``setAutoDrain``)."""
        if self.feed is None or self.unqueue.pending:
            return
        command = self.held_queue.resume(str(self.session.backend_session_id), self.feed.state.state,
                                         self.prompts.queued_ids())
        if command is None:
            return

        def resumed(ack: v4.CommandAck | None, error: RpcError | None) -> None:
            if error is not None:  # the queued prompts would wait for ever: answered with why
                self.held_queue.refused()
                log.warning("session %s: the held queue was not resumed: %s", self.session.session_id, error.message)
                self._answer(self.prompts.unqueue_failed(error))

        log.info("session %s: the engine held its queue after a failure; resuming it", self.session.session_id)
        self.commands.send(command, resumed)
    def _compaction_reached(self) -> None:
        """Our compaction is over when its own marker says so (``compaction_marker.py``): never at the
        end of the turn it was queued behind, nor of a prompt's."""
        command_id = compact_command(self.session.compaction_answer())
        if command_id is None or self.feed is None:
            return
        reason = compaction_marker.ended_reason(self.feed.state.rows, command_id)
        if reason is not None:
            self.session.compaction_ended(reason)

    def _live_in_mode(self, ready: Callable[[], None]) -> None:
        """A session createSession just made runs in the engine's default mode: switched to the
        Session's own before it is live (so before its first prompt), then ``ready``."""
        fresh, self.fresh = self.fresh, False
        wanted = self.session.settings.current.mode
        command = opening_mode(str(self.session.backend_session_id), wanted,
                               self.feed.state.state) if fresh and self.feed is not None else None
        if command is None:
            ready()
            return

        def switched(ack: v4.CommandAck | None, error: RpcError | None) -> None:
            if error is not None:  # the session works in the engine's mode; its next change may still take
                log.warning("session %s: the engine kept its own mode, not %s: %s", self.session.session_id,
                            wanted, error.message)
            if error is not None or ack is None or ack.status != "accepted" or self._in_mode(wanted):
                ready()
                return
            # Live once the feed shows the switch (its frame follows the ack): a command decided against
            # the state (a settings change waiting for the session) then carries a revision that is current.
            # A frame that never comes (lost: only the next one would show the gap) holds it no longer than
            # the grace, a timer message (V4Expire), not a wait.
            self.mode_wait = (wanted, ready, now_ms() + MODE_GRACE_SECONDS * 1000)
            self.session.remind(MODE_GRACE_SECONDS + 0.01, V4Expire())

        self.commands.send(command, switched)

    def _in_mode(self, mode: str) -> bool:
        return self.feed is not None and collaboration_mode(self.feed.state.state) == mode

    def _mode_reached(self, now: float | None = None) -> None:
        """Live once the feed shows the opening mode, or (``now`` past the grace) without it."""
        if self.mode_wait is None:
            return
        wanted, ready, due = self.mode_wait
        if self._in_mode(wanted) or (now is not None and now >= due):
            self.mode_wait = None
            ready()

    def _cumulative(self) -> dict[str, Any]:
        usage = self.feed.state.state.get("usage") if self.feed is not None else None
        cumulative = usage.get("cumulative") if isinstance(usage, dict) else None
        return dict(cumulative) if isinstance(cumulative, dict) else {}

    def _turn_usage(self) -> dict[str, Any] | None:
        """What the turn that just ended spent: the engine's cumulative usage since the last turn's end."""
        now, before = self._cumulative(), self.usage_mark
        self.usage_mark = now
        if before is None:
            return None
        spent = {key: value - before.get(key, 0) for key, value in now.items()
                 if isinstance(value, int) and not isinstance(value, bool)}
        return spent if any(spent.values()) else None

    def _resynced(self, result: Any, error: Any) -> None:
        if self.feed is None:
            return
        if error is not None:  # the subscription is gone: subscribe again, from a snapshot
            log.warning("session %s: resync refused (%s); subscribing again", self.session.session_id,
                        error.get("message") if isinstance(error, dict) else error)
            self.subscribe(lambda result, error: None, resumed=False)
            return
        self._do(self.feed.subscribed(result, now_ms()))

    def _arm_expiry(self) -> None:
        """An assembly left unfinished gets the engine's 30 s, then a resync (no sleep: a timer message)."""
        due = self.feed.next_expiry_ms if self.feed is not None else None
        if due is None or (self.expiry_armed is not None and self.expiry_armed <= due):
            return
        self.expiry_armed = due
        self.session.remind(max(due - now_ms(), 0.0) / 1000.0 + 0.01, V4Expire())

    def _answer(self, answers: list[Answer], ended: TurnNotice | None = None) -> None:
        now, ended = self.quota.hold(answers, ended)  # a quota failure's answer waits for the snapshot
        self._tell(now)
        if answers:
            self._activity(ended)

    def _replied(self, answers: list[Answer], ended: TurnNotice | None) -> None:
        """V4Quota's answers, once the snapshot is in (or the wait ran out)."""
        self._tell(answers)
        if answers:
            self._activity(ended)

    def _tell(self, answers: list[Answer]) -> None:
        typed = air.client_declares(self.session.capabilities, air.SESSION_FAILURE)
        for answer in answers:
            if typed and answer.failed_turn and answer.error is not None:
                self._tell_typed_failure(answer.owed, answer.error)
                continue
            answer.owed.conn.tell(Reply(answer.owed.request_id, answer.result,
                                        answer.error.to_dict() if answer.error else None))

    def _tell_typed_failure(self, owed: OwedPrompt, error: RpcError) -> None:
        """The AIR answer to a failed turn, as the legacy Turn gives it (actors/turn.py): the failure
        as a ``session_info_update`` carrying ``_meta.jetbrains.air.sessionFailure``, then ``end_turn``
        with the same ``_meta``; ``quota_exhausted`` for a used-up window."""
        update, result = air.typed_failure(f"{self.session.session_id}:turn-{uuid.uuid4().hex[:12]}:error",
                                           error.data, error.message)
        self.session.deliver([update])
        owed.conn.tell(Reply(owed.request_id, result, None))

    def _activity(self, ended: TurnNotice | None = None) -> None:
        """The Supervisor's listing (and the webhook's turn notice, with ``ended``'s outcome and answer)."""
        self.session.activity(self.prompts.busy or bool(self.quota.held), outcome=ended.outcome if ended else "",
                              answer=ended.answer if ended else "")

    # -- what the layer above fills in (v4/path.py) ------------------------------------------------

    def release_held(self) -> None:
        raise NotImplementedError  # V4Path

    def _drop_held(self, error: RpcError | None) -> None:
        raise NotImplementedError  # V4Path

    def _unqueue(self) -> None:
        raise NotImplementedError  # V4Path

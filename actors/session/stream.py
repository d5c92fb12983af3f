"""The Session's event stream: the engine's events in ``seq`` order to the Turn, the tasks or the
Session itself; the v4 data plane's frames; gaps, notices, titles. A layer of the Session actor."""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

import gevent

from zcode_acp.protocol import updates
from zcode_acp.protocol.events import STATE_UPDATED, TITLE_UPDATED, TURN_STEER_QUEUED, payload
from zcode_acp.protocol.handshake import supports_terminal_output
from zcode_acp.protocol.sessions import iso_time
from zcode_acp.protocol.translator import notice_chunk

from zcode_acp.actors.base import handles, safe_tell
from zcode_acp.actors.messages import (
    GapFilled,
    GapTimeout,
    SessionActivity,
    SessionEvents,
    SessionNotice,
    TaskEvents,
    TurnEvents,
    V4Expire,
    V4Resolve,
    V4Frames,
)
from zcode_acp.actors.session.routing import Routed
from zcode_acp.actors.session.sequencer import Ready
from zcode_acp.actors.transport import flow

from zcode_acp.actors.session.prompting import SessionPrompts

log = logging.getLogger(__name__)


class SessionStream(SessionPrompts):
    """The engine's events and frames."""

    # -- the event stream ------------------------------------------------------------------------

    @handles(SessionEvents)
    def on_session_events(self, message: SessionEvents) -> None:
        try:
            self.path.events(message.events, message.token)
        finally:
            flow.done(message.token)

    def sequence(self, events: list[dict[str, Any]], token: object) -> None:
        if self.lifecycle.live:
            self._apply(self.sequencer.accept(events), token)
        else:
            self.sequencer.hold(events)

    def _to_turns(self, events: list[dict[str, Any]], token: Any) -> None:
        last = len(self.turns) - 1
        for index, (key, turn) in enumerate(self.turns.items()):  # the current Turn, and stopped ones watching for their end
            # A Turn empties its batch once handled (messages.Consumed): each gets its own list.
            batch = events if index == last else list(events)
            turn.tell(TurnEvents(batch, flow.share(token) if key == self.current else None))

    def _apply(self, ready: Ready, token: Any = None) -> None:
        """Route what the sequencer released, and start a gap fetch if it asked for one."""
        if ready.skipped is not None:
            log.warning("session %s: events %d..%d never arrived; skipping the hole",
                        self.session_id, *ready.skipped)
        if ready.events:
            routed = Routed()
            has_turn = self.current is not None
            terminal = supports_terminal_output(self.capabilities)
            for event in ready.events:
                freed = self.held.event(event)
                if freed:
                    routed.session.append(notice_chunk(freed, uuid.uuid4().hex))
                claim = self.attribution.event(event)
                if claim is not None:
                    self._adopt(claim)
                if event.get("type") == TURN_STEER_QUEUED:
                    self._steer_admitted(event)
                elif event.get("type") == TITLE_UPDATED:
                    self.titled(payload(event).get("title"))
                session_before = len(routed.session)
                self.events.route(event, routed, has_turn, terminal)
                if len(routed.session) > session_before:
                    # A session-level update (today's title event) keeps its pipe place among the
                    # turn's events: those before it go first, those after it follow (a replay found it).
                    if routed.turn:
                        self._to_turns(routed.turn, token)
                    self.deliver_in_order(routed.session)
                    routed.turn, routed.session = [], []
            if routed.turn:
                self._to_turns(routed.turn, token)
            if routed.tasks:
                self._background_tasks().tell(TaskEvents(routed.tasks, flow.share(token)))
            self.deliver_in_order(routed.session)
        if ready.gap_after is not None:
            params = {"sessionId": self.backend_session_id, "deliveryKind": "desktop-continuous",
                      "includeSnapshot": False, "afterSeq": ready.gap_after}
            self._call("session/subscribe", params, GapFilled, timeout=self.config.subscribe_timeout)
            gevent.spawn_later(self.config.gap_wait, safe_tell, self.actor_ref, GapTimeout(ready.gap_after))

    @handles(V4Frames)
    def on_v4_frames(self, message: V4Frames) -> None:
        try:
            if not self.lifecycle.closed:
                self.path.frames(message.frames)
        finally:
            flow.done(message.token)

    @handles(V4Resolve)
    def on_v4_resolve(self, message: V4Resolve) -> None:
        """A dialog's first answer on v4: ``resolveInteraction``, then the legacy request (V4Path.resolve)."""
        self.path.resolve(message)

    @handles(V4Expire)
    def on_v4_expire(self, message: V4Expire) -> None:
        self.path.expire(message)

    @handles(GapFilled)
    def on_gap_filled(self, message: GapFilled) -> None:
        if self.lifecycle.live:
            missed = message.result.get("events") if isinstance(message.result, dict) else None
            self._apply(self.sequencer.gap_filled(missed))

    @handles(GapTimeout)
    def on_gap_timeout(self, message: GapTimeout) -> None:
        self._apply(self.sequencer.gap_timed_out(message.after_seq))

    @handles(SessionNotice)
    def on_session_notice(self, message: SessionNotice) -> None:
        params = message.params
        if message.method == STATE_UPDATED:
            self.deliver_in_order(self.settings.change(self.settings.current.with_patch(params.get("patch"))))
            self.controls.compaction_ended(params.get("reason"))  # the end of a compaction is a reason
        elif message.method == TITLE_UPDATED and isinstance(params.get("title"), str):
            self.deliver_in_order([updates.session_title(params["title"], iso_time(time.time() * 1000))])
            self.titled(params["title"])

    def titled(self, title: Any) -> None:
        """The engine named the session (either engine's way): the hub's list and notifications use it."""
        if isinstance(title, str) and title:
            self.title = title
            self.supervisor.tell(SessionActivity(self.session_id, self.current is not None or self.path.busy, title))

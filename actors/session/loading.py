"""The Session's ``session/load``: attach a client, replay the history (or a Turn's record
mid-turn), the history read until stable, the commands announced. A layer of the Session actor."""

from __future__ import annotations

from typing import Any

import gevent

from zcode_acp.protocol import commands, model_catalog, updates
from zcode_acp.protocol.errors import (
    RpcError,
    from_backend_error,
    invalid_params,
)
from zcode_acp.protocol.session_config import session_state
from zcode_acp.protocol.usage import read_usage_update

from zcode_acp.actors.base import handles, safe_tell
from zcode_acp.actors.delivery import encode_cooperatively
from zcode_acp.actors.messages import (
    FEED_LINES,
    Announce,
    Attach,
    ClientAttached,
    Deliver,
    HistoryPoll,
    HoldSession,
    ReleaseSession,
    ReplayTurn,
    Reply,
    TurnReplayed,
)
from zcode_acp.actors.session.history import POLL_INTERVAL, split_replay
from zcode_acp.protocol.subagents import replay_children, supports_subagents

from zcode_acp.actors.session.stream import SessionStream


class SessionLoading(SessionStream):
    """Loads and attaches."""

    # -- load and resume ---------------------------------------------------------------------------

    @handles(Attach)
    def on_attach(self, message: Attach) -> None:
        if self.root_known and message.cwd != self.cwd:
            message.fail(invalid_params("cwd", "invalid.not_the_workspace", root=self.cwd))
            return
        if message.replay:
            message.conn.tell(HoldSession(self.session_id))
        if self.backend_session_id is None:  # never used: nothing to resume, nothing to replay
            if model_catalog.known(self.settings.current):
                self._attached(message, [])
            else:  # made in the engine first: a client checks a model choice against this answer's list
                self.when_live(lambda: self._attached(message, []), lambda error: self._attached(message, []))
            return

        def fail(error: RpcError) -> None:
            if message.replay:
                message.conn.tell(ReleaseSession(self.session_id, b""))
            message.fail(error)

        def live() -> None:
            if self.root_known and message.cwd != self.cwd:
                fail(invalid_params("cwd", "invalid.not_the_workspace", root=self.cwd))
            elif not message.replay:
                self._attached(message, None)
            elif (replay := self.path.replay()) is not None:  # the path's own (v4: the snapshot), not a history read
                self._attached(message, replay, FEED_LINES)  # it covers what the path's feed delivered
            elif self.history.want(message):  # one history read serves every load waiting for it
                self._read_history()

        self.when_live(live, fail)

    def _encode_replay(self, replay: list[dict[str, Any]]) -> bytes:
        return encode_cooperatively(self.session_id, self._as_live(replay))

    def _as_live(self, replay: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Sub-agents as the child sessions they were live, for clients that show them (protocol/subagents.py)."""
        return replay_children(replay, self.session_id) if supports_subagents(self.capabilities) else replay

    def _attached(self, message: Attach, replay: list[dict[str, Any]] | bytes | None,
                  covers: int | None = None) -> None:
        """Answer a load or resume; ``replay``: its updates (or already encoded), None for none;
        ``covers``: whose lines held meanwhile it already holds (``ReleaseSession.covers_turn``)."""
        if replay is not None:
            encoded = replay if isinstance(replay, bytes) else encode_cooperatively(self.session_id, replay)
            message.conn.tell(ReleaseSession(self.session_id, encoded, covers))
        message.conn.tell(Reply(message.request_id, session_state(self.settings.current), None))
        self.on_announce(Announce(message.conn))
        self.router.tell(ClientAttached(self.session_id, message.conn))  # open dialogs join it too

    def _read_history(self) -> None:
        self.history.read_sent()
        self.request("session/messages", {}, self._history_read, self._history_failed,
                     timeout=self.config.messages_timeout)

    def _history_read(self, result: Any) -> None:
        messages = result.get("messages") if isinstance(result, dict) else None
        if self.history.read(messages):  # still filling in after a resume: read again
            gevent.spawn_later(POLL_INTERVAL, safe_tell, self.actor_ref, HistoryPoll())
            self.history.prepare(self._encode_replay)  # meanwhile: the replay, if the next read is the same
            return
        self.request("session/read", {}, self._history_state, lambda error: self._history_state({}),
                     timeout=self.config.read_timeout)

    @handles(HistoryPoll)
    def on_history_poll(self, message: HistoryPoll) -> None:
        if self.history.in_flight:
            self._read_history()

    def _history_state(self, result: Any) -> None:
        extras: list[dict[str, Any]] = []
        if isinstance(result, dict):
            entries = updates.plan_entries(result.get("todos"))
            if entries:
                self.plan = entries
                extras.append(updates.plan(entries))
            self.settings.current = self.settings.current.with_backend_settings(result.get("settings"))
            usage = read_usage_update(result)
            if usage:
                extras.append(usage)
        if self.turns:
            # A turn runs (or has just ended and its Turn is still here): the engine's history
            # lags it, so the Turn sends its own record after the history before it.
            key = max(self.turns)
            before, during = map(self._as_live, split_replay(self.history.messages, self.turn_prompts.get(key)))
            head = encode_cooperatively(self.session_id, before)
            tail = encode_cooperatively(self.session_id, during + extras)
            last = encode_cooperatively(self.session_id, extras)
            for message in self.history.finish():
                reply = Reply(message.request_id, session_state(self.settings.current), None)
                self.turns[key].tell(ReplayTurn(message.conn, head + last, head + tail, reply, message))
            return
        encoded = self.history.encoded_replay(self._encode_replay) + self._encode_replay(extras)
        for message in self.history.finish():
            self._attached(message, encoded)

    @handles(TurnReplayed)
    def on_turn_replayed(self, message: TurnReplayed) -> None:
        """The Turn wrote the replay and the answer: what follows an answered load."""
        self.on_announce(Announce(message.attach.conn))
        self.router.tell(ClientAttached(self.session_id, message.attach.conn))

    def _history_failed(self, error: Any) -> None:
        failure = from_backend_error(error, "session/messages")
        for message in self.history.finish():
            message.conn.tell(ReleaseSession(self.session_id, b""))
            message.fail(failure)

    @handles(Announce)
    def on_announce(self, message: Announce) -> None:
        """After a new/load/resume answer (never before it): the commands this session offers."""
        message.conn.tell(Deliver(self.session_id, updates.encode(
            self.session_id, [commands.available_commands_update(self.surface.commands, self.config.lang)])))

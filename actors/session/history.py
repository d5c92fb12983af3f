"""Session, part 2: ``session/load`` and ``session/resume`` (docs/sessions.md).

A mixin of the Session actor (the same actor and state, split by concern):
attaching a client, reading the history until it stops growing, replaying it
to the requesting client only while that client's live updates are held.
"""

from __future__ import annotations

from typing import Any

import gevent

from zcode_acp.protocol.errors import RpcError, from_backend_error, invalid_params
from zcode_acp.protocol.history import message_count, replay_updates
from zcode_acp.protocol.session_config import session_state
from zcode_acp.protocol.usage import projection_usage_update

from zcode_acp.actors.base import encode_updates, safe_tell
from zcode_acp.actors.messages import ClientAttached, HistoryPoll, HoldSession, ReleaseSession, Reply
from zcode_acp.actors.session.events import plan_entries

HISTORY_POLL_INTERVAL = 0.1
HISTORY_POLL_LIMIT = 20  # reads; after a resume the history fills up for a moment


class HistoryReplay:
    def handle_Attach(self, message: Any) -> None:
        if self.root_known and message.cwd != self.cwd:
            message.conn.tell(Reply(message.request_id, None, invalid_params(
                "cwd", f"does not match the session's workspace root {self.cwd}").to_dict()))
            return
        if message.replay:
            message.conn.tell(HoldSession(self.session_id))
        if self.backend_session_id is None:
            self._attached(message, [])  # never used: nothing to resume, nothing to replay
            return

        def fail(error: RpcError) -> None:
            if message.replay:
                message.conn.tell(ReleaseSession(self.session_id, b""))
            message.conn.tell(Reply(message.request_id, None, error.to_dict()))

        def live() -> None:
            if not self.root_known or message.cwd == self.cwd:
                if message.replay:
                    self._replay_to(message)
                else:
                    self._attached(message, None)
            else:
                fail(invalid_params("cwd", f"does not match the session's workspace root {self.cwd}"))

        self._when_live(live, fail)

    def _attached(self, message: Any, replay: list[dict[str, Any]] | None) -> None:
        if replay is not None:
            message.conn.tell(ReleaseSession(self.session_id, encode_updates(self.session_id, replay)))
        message.conn.tell(Reply(message.request_id, session_state(self.settings), None))
        self.handle_Announce(message)
        self.router.tell(ClientAttached(self.session_id, message.conn))  # open dialogs join it too

    def _replay_to(self, message: Any) -> None:
        self.replays.append(message)
        if self.history is None:  # one history read serves every load that waits for it
            self.history = {"count": -1, "reads": 0, "messages": []}
            self._read_history()

    def _read_history(self) -> None:
        self.history["reads"] += 1
        self._request("session/messages", {}, self._history_read, self._history_failed,
                      timeout=self.config.messages_timeout)

    def _history_read(self, result: Any) -> None:
        messages = result.get("messages") if isinstance(result, dict) else None
        count = message_count(messages)
        history = self.history
        if count != history["count"] and history["reads"] < HISTORY_POLL_LIMIT:
            # Still filling in after a resume: read again until it stops growing.
            history["count"], history["messages"] = count, messages
            gevent.spawn_later(HISTORY_POLL_INTERVAL, safe_tell, self.actor_ref, HistoryPoll())
            return
        history["messages"] = messages
        self._request("session/read", {}, self._history_state, lambda error: self._history_state({}),
                      timeout=self.config.read_timeout)

    def handle_HistoryPoll(self, message: Any) -> None:
        if self.history is not None:
            self._read_history()

    def _history_state(self, result: Any) -> None:
        replay = replay_updates(self.history["messages"])
        if isinstance(result, dict):
            entries = plan_entries(result.get("todos"))
            if entries:
                self.plan = entries
                replay.append({"sessionUpdate": "plan", "entries": entries})
            self.settings = self.settings.with_backend_settings(result.get("settings"))
            usage = projection_usage_update(result.get("projection"))
            if usage:
                replay.append(usage)
        self.history = None
        waiting, self.replays = self.replays, []
        for message in waiting:
            self._attached(message, replay)

    def _history_failed(self, error: Any) -> None:
        self.history = None
        waiting, self.replays = self.replays, []
        failure = from_backend_error(error, "session/messages")
        for message in waiting:
            message.conn.tell(ReleaseSession(self.session_id, b""))
            message.conn.tell(Reply(message.request_id, None, failure.to_dict()))


"""A v4 turn the GLM Coding Plan's limit stopped (docs/quota.md, "When the limit is hit", "Wait and retry").

A plain part of the v4 Session.

* **The answer names the window.** The feed answers such a turn's prompt with ``quotaExceeded`` in
  the engine's words (errors.from_backend_error of the conversation's ``lastError``). Before that
  answer leaves, the QuotaWatch is asked for its snapshot through the Session's port, as the legacy
  Turn asks it (at most ``QUOTA_WAIT``, answered by a message: never an ``ask``), and the answer is
  worded by protocol/quota_failure.py as the Turn's is: which window is used up, when it resets,
  ``data {poolId, meterId, resetsAt}``.
* **Wait and retry** (``ZCODE_ACP_QUOTA_RETRY=1``). A ``window`` failure whose reset is known, whose
  reply the engine grants ``canRetry`` (rows.ts; fork-edit-retry.ts refuses any other target), is
  retried once, at the reset, with the engine's ``retryTurn`` on that reply: the engine re-runs the
  turn from its own user input (``startCanonicalIntent`` with the original text), so no user message
  is repeated, and the retried turn's output streams to the clients as the feed's. A countdown notice
  says when, and how to stop it: ``session/cancel``, or a new prompt. The reset is a timer message to
  the Session (``V4Expire``), never a sleep, and so are the countdown's marks (``COUNTDOWN_AT_SECONDS``),
  where the notice is said again with the time left; at the reset the reply must still be the one the engine
  grants ``canRetry`` (the latest assistant reply), else nothing is sent and the user is told why.
"""

from __future__ import annotations

import functools
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from zcode_acp.protocol.errors import from_backend_error
from zcode_acp.protocol.i18n import t
from zcode_acp.protocol.quota import Meter
from zcode_acp.protocol.quota_failure import (QUOTA_EXCEEDED, retry_armed_text, retry_now_text, reworded,
                                              window_named)
from zcode_acp.protocol.translator import between_turns_notice
from zcode_acp.protocol.v4 import commands as v4
from zcode_acp.protocol.v4.conversation import TurnEnded
from zcode_acp.protocol.v4.row_actions import GUARDS, MESSAGE_KEYS, Refusal
from zcode_acp.protocol.v4.row_actions import target as granted_target

from zcode_acp.actors.messages import V4Expire
from zcode_acp.actors.session.path import SessionPort
from zcode_acp.actors.session.v4.commands import V4Commands
from zcode_acp.actors.session.v4.notices import TurnNotice
from zcode_acp.actors.session.v4.prompts import Answer

log = logging.getLogger(__name__)

# After the provider's reset time: its clock and this machine's differ by a little, and a retry sent
# a moment too soon would fail again (and is not tried twice).
RETRY_SLACK_SECONDS = 2.0
# The countdown is said again as these many seconds are left (an hour, half an hour, ten, five and one
# minute): an editor has no notice it can update in place, and one line a minute would bury the chat.
COUNTDOWN_AT_SECONDS = (3600.0, 1800.0, 600.0, 300.0, 60.0)
# A mark this close after the first notice is skipped: that notice said it already.
COUNTDOWN_GAP_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class ArmedRetry:
    target: v4.RowTarget  # the failed reply the engine granted canRetry
    meter: Meter  # the window that was used up
    due_ms: float  # its reset (and the slack), epoch milliseconds


class V4Quota:
    def __init__(self, port: SessionPort, commands: V4Commands, rows: Callable[[], Sequence[dict[str, Any]]],
                 reply: Callable[[list[Answer], TurnNotice | None], None]) -> None:
        self.port = port
        self.commands = commands
        self.rows = rows  # the feed's rows now (their ``actions``)
        self.reply = reply  # sends answers to their clients (and, with a TurnNotice, says the turn ended)
        self.held: list[Answer] = []  # quotaExceeded answers waiting for the snapshot
        self.ended: TurnNotice | None = None  # their turn's end, said with their answer (the Supervisor's alerts follow it)
        self.armed: ArmedRetry | None = None
        self.countdown: list[float] = []  # when the countdown is said again (epoch ms, soonest first)
        self.retrying = False  # our retryTurn was taken: the end of its turn, which no prompt owns, is told

    @property
    def busy(self) -> bool:
        """An answer or a retry is owed: the Session must not leave memory (its timer would find nobody)."""
        return bool(self.held) or self.armed is not None

    # -- the answer names the window ---------------------------------------------------------------

    def hold(self, answers: list[Answer], ended: TurnNotice | None) -> tuple[list[Answer], TurnNotice | None]:
        """The answers to send now, and the turn's end to say now; a quota failure's answer waits for
        the QuotaWatch's snapshot, and its turn ends with it: the Supervisor tells a session its quota
        alerts at a turn's end, and the window the answer names must not be told again."""
        now = []
        for answer in answers:
            if answer.error is not None and answer.error.code == QUOTA_EXCEEDED and answer.owed.error is None:
                self.held.append(answer)
                self.port.quota_at_failure(functools.partial(self._snapshot, answer))
            else:
                now.append(answer)
        if self.held and len(now) < len(answers):
            self.ended, ended = ended or self.ended, None
        return now, ended

    def _snapshot(self, answer: Answer, snapshot: Any) -> None:
        if answer not in self.held or answer.error is None:
            return  # answered already (the session was lost or closed meanwhile)
        self.held.remove(answer)
        typed = reworded(answer.error, snapshot, datetime.now(UTC), self.port.config.lang)
        meter = window_named(typed, snapshot)
        if meter is not None:  # said here: the notice "… is used up" would only say it again
            self.port.quota_told(meter)
        ended, self.ended = (self.ended, None) if not self.held else (None, self.ended)
        self.reply([Answer(answer.owed, None, typed, answer.failed_turn)], ended)
        if meter is not None and typed.data.get("quotaReason") == "window":
            self._arm(meter)

    def flush(self) -> None:
        """The session is lost or closed: what waits for the snapshot is answered now, in the engine's
        words, and a retry armed is dropped (its reply is another process's now, or gone)."""
        held, self.held = self.held, []
        ended, self.ended = self.ended, None
        self.armed = None
        self.countdown = []
        self.retrying = False
        self.reply(held, ended)

    # -- wait and retry ------------------------------------------------------------------------------

    def _arm(self, meter: Meter) -> None:
        if not self.port.config.quota_retry or meter.resets_at is None:
            return
        target = granted_target(self.rows(), "canRetry")
        if isinstance(target, Refusal):  # the engine offers no retry of this reply: none is offered
            log.info("session %s: no retry at the window's reset: the engine grants no canRetry",
                     self.port.session_id)
            return
        due_ms = meter.resets_at.timestamp() * 1000.0 + RETRY_SLACK_SECONDS * 1000.0
        self.armed = ArmedRetry(target, meter, due_ms)
        log.info("session %s: the turn is retried at the window's reset, in %.0f s", self.port.session_id,
                 max(0.0, due_ms / 1000.0 - time.time()))
        self._notice(retry_armed_text(meter, datetime.now(UTC), self.port.config.lang))
        now_ms = time.time() * 1000.0
        self.countdown = sorted(due_ms - left * 1000.0 for left in COUNTDOWN_AT_SECONDS
                                if due_ms - left * 1000.0 > now_ms + COUNTDOWN_GAP_SECONDS * 1000.0)
        self._remind(self.countdown[0] if self.countdown else due_ms, now_ms)

    def _remind(self, at_ms: float, now_ms: float) -> None:
        self.port.remind(max(0.0, at_ms - now_ms) / 1000.0 + 0.01, V4Expire())

    def cancel(self) -> None:
        """``session/cancel``, or a new prompt: the countdown stops, nothing is sent."""
        if self.armed is None:
            return
        self.armed = None
        self.countdown = []
        log.info("session %s: the retry at the window's reset is cancelled", self.port.session_id)
        self._notice(t(self.port.config.lang, "quota.retry.cancelled"))

    def expire(self, now_ms: float) -> None:
        """A timer message came: at the reset, ``retryTurn`` on the reply (still the one the engine grants)."""
        armed = self.armed
        if armed is None:
            return
        if now_ms < armed.due_ms:
            self._count_down(armed, now_ms)
            return
        self.armed = None
        self.countdown = []
        lang = self.port.config.lang
        target = granted_target(self.rows(), "canRetry")
        if target != armed.target:  # another reply is the latest now, or none may be retried
            key = MESSAGE_KEYS[target.reason_code if isinstance(target, Refusal) else GUARDS["canRetry"]]
            self._notice(t(lang, "quota.retry.refused", message=t(lang, key)))
            return
        self._notice(retry_now_text(armed.meter, lang))
        self.commands.send(v4.retry_turn(str(self.port.backend_session_id), armed.target), self._retried)

    def _count_down(self, armed: ArmedRetry, now_ms: float) -> None:
        """A mark of the countdown passed: the notice again, with the time now left; the next timer."""
        passed = [at for at in self.countdown if at <= now_ms]
        if not passed:
            return  # another timer of the Session's (the feed's expiry)
        self.countdown = [at for at in self.countdown if at > now_ms]
        self._notice(retry_armed_text(armed.meter, datetime.fromtimestamp(now_ms / 1000.0, UTC),
                                      self.port.config.lang))
        self._remind(self.countdown[0] if self.countdown else armed.due_ms, now_ms)

    def _retried(self, ack: v4.CommandAck | None, error: Any) -> None:
        if error is not None:
            self._notice(t(self.port.config.lang, "quota.retry.refused", message=error.message))
            return
        self.retrying = True

    def turn_ended(self, ended: TurnEnded, answered: bool) -> None:
        """A turn ended; the retried one is no prompt's, so its failure is said here (else unseen)."""
        if not self.retrying or answered:
            return
        self.retrying = False
        if ended.error is not None:
            self._notice(from_backend_error(ended.error, "retryTurn", self.port.config.lang).message)

    def _notice(self, text: str) -> None:
        self.port.deliver([between_turns_notice(text, self.port.capabilities, uuid.uuid4().hex)])

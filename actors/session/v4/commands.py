"""A session's ``v4/command``s and what their acks mean (docs/v4.md, "Commands").

A plain part of the Session. Each command goes out in the engine's envelope (the base
only where its schema demands it), and its ack is judged as issue 22 asks: ``duplicate``
is success, ``noop`` is success with no effect, ``stale`` is retried once against the
state the Session holds now (its frames keep it current), and an ack lost to a timeout
is asked for with ``v4/commands/query`` — a command the engine never received is sent
again under the same ``commandId`` (its idempotency key), once.

A ``stale`` command waits until the feed has reached the state the engine decided against
(``revisionAtDecision``; a new log epoch when the epoch was stale) before it goes again: sent at
once, it would carry the same old base (the frames that move the feed follow the ack). The Session
calls ``caught_up`` after each frame; a feed that never gets there fails it at ``STALE_WAIT_MS``.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from zcode_acp.protocol.errors import INTERNAL_ERROR, RpcError, from_backend_error
from zcode_acp.protocol.i18n import t
from zcode_acp.protocol.v4 import commands as v4
from zcode_acp.protocol.v4.row_actions import guard_message_key

from zcode_acp.actors.v4_sender import command_params

Done = Callable[[v4.CommandAck | None, RpcError | None], None]
"""The ack (accepted, duplicate or noop) or why the command failed; called exactly once."""


class CommandPort(Protocol):
    def engine_call(self, method: str, params: dict[str, Any], then: Callable[[Any, Any], None]) -> None: ...

    def v4_base(self) -> v4.Base: ...

    def v4_wake(self, seconds: float) -> None:
        """Have ``expire`` called after ``seconds`` (a timer message, not a wait)."""


@dataclass(slots=True)
class _Sent:
    command: v4.Command
    params: dict[str, Any]
    done: Done
    retried: bool = False  # a stale ack was already retried
    resent: bool = False  # a lost one was already sent again
    base: v4.Base | None = None  # what the envelope carried


@dataclass(slots=True)
class _Stale:
    sent: _Sent
    ack: v4.CommandAck
    due_ms: float  # given up then: the feed never reached the engine's state


def refused(ack: v4.CommandAck, lang: str = "en") -> RpcError:
    data = {"status": ack.status, "reasonCode": ack.reason_code}
    key = guard_message_key(ack.reason_code)
    if key is not None:  # a row guard: say why in the user's words (the engine's own text is for logs)
        return RpcError(INTERNAL_ERROR, t(lang, key), {**data, "engineMessage": ack.message})
    if ack.message:  # the engine's own words pass untranslated
        return RpcError(INTERNAL_ERROR, t(lang, "v4.command.refused_saying", status=ack.status,
                                          reason=ack.reason_code, message=ack.message), data)
    return RpcError(INTERNAL_ERROR, t(lang, "v4.command.refused", status=ack.status, reason=ack.reason_code), data)


ISSUED_KEPT = 256
# How long a stale command waits for the feed to reach the engine's state (its frames follow an ack
# within the engine's 30 ms flush window; a lost one is noticed at the next frame and resynced).
STALE_WAIT_MS = 5000.0


class V4Commands:
    def __init__(self, port: CommandPort, client_id: str, lang: str = "en") -> None:
        self.port = port
        self.client_id = client_id
        self.lang = lang  # a refusal the user reads is in the session's language
        # The ids of the commands sent lately, so the translator knows a marker this bridge caused
        # (protocol/v4/conversation.py); bounded, as a marker follows its command closely.
        self._issued: deque[str] = deque(maxlen=ISSUED_KEPT)
        self._issued_set: set[str] = set()
        self._stale: list[_Stale] = []  # stale commands waiting for the feed (caught_up)

    def issued(self, command_id: str) -> bool:
        """Whether ``command_id`` is a command this bridge sent (one of the last ``ISSUED_KEPT``)."""
        return command_id in self._issued_set

    def _remember(self, command_id: str) -> None:
        if len(self._issued) == self._issued.maxlen:
            self._issued_set.discard(self._issued[0])
        self._issued.append(command_id)
        self._issued_set.add(command_id)

    def send(self, command: v4.Command, done: Done, *, retried: bool = False) -> None:
        needs_base = command.type in v4.COMMANDS_REQUIRING_BASE_REVISION or command.type in v4.ROW_TARGETING_COMMANDS
        try:
            base = self.port.v4_base() if needs_base else None
            params = command_params(command, client_id=self.client_id, base=base)
        except ValueError as exc:  # a row command before the state names a log epoch
            done(None, RpcError(INTERNAL_ERROR, t(self.lang, "v4.command.not_yet", command=command.type, detail=exc)))
            return
        self._remember(params["commandId"])
        self._send(_Sent(command, params, done, retried=retried, base=base))

    def caught_up(self, now_ms: float) -> None:
        """The feed moved (or time passed): stale commands whose state has been reached go again, once,
        with a new id against it; those past ``STALE_WAIT_MS`` fail (answered, never left hanging)."""
        if not self._stale:
            return
        seen, waiting, self._stale = self.port.v4_base(), self._stale, []
        for stale in waiting:
            if v4.caught_up(stale.ack, stale.sent.base, seen):
                self.send(stale.sent.command, stale.sent.done, retried=True)
            elif now_ms >= stale.due_ms:
                stale.sent.done(stale.ack, refused(stale.ack, self.lang))
            else:
                self._stale.append(stale)

    def _send(self, sent: _Sent) -> None:
        self.port.engine_call("v4/command", sent.params, lambda result, error: self._acked(sent, result, error))

    def _acked(self, sent: _Sent, result: Any, error: Any) -> None:
        if error is not None:
            if isinstance(error, dict) and error.get("timeout") and not error.get("backendExited"):
                self._query(sent)  # the ack was lost, not necessarily the command
                return
            sent.done(None, from_backend_error(error, f"v4/command {sent.command.type}"))
            return
        self._judge(sent, v4.parse_ack(result))

    def _judge(self, sent: _Sent, ack: v4.CommandAck | v4.AckInvalid) -> None:
        if isinstance(ack, v4.AckInvalid):
            sent.done(None, RpcError(INTERNAL_ERROR, t(self.lang, "v4.command.ack_invalid", command=sent.command.type,
                                                        detail=ack.detail)))
            return
        verdict = v4.judge(ack, retried=sent.retried)
        if verdict is v4.Verdict.RETRY_AFTER_REFRESH:
            self._stale.append(_Stale(sent, ack, time.time() * 1000 + STALE_WAIT_MS))
            self.port.v4_wake(STALE_WAIT_MS / 1000)
            self.caught_up(time.time() * 1000)  # already there: at once
        elif verdict is v4.Verdict.REFUSED:
            sent.done(ack, refused(ack, self.lang))
        else:
            sent.done(ack, None)

    def _query(self, sent: _Sent) -> None:
        key = (sent.params.get("sessionId"), sent.params["commandId"])

        def answered(result: Any, error: Any) -> None:
            if error is not None:
                sent.done(None, from_backend_error(error, "v4/commands/query"))
                return
            items = v4.parse_query_result(result)
            if isinstance(items, v4.AckInvalid):
                sent.done(None, RpcError(INTERNAL_ERROR, t(self.lang, "v4.command.query_invalid", detail=items.detail)))
                return
            item = next((i for i in items if i.command_id == key[1]), None)
            if item is not None and item.ack is not None:
                self._judge(sent, item.ack)
            elif not sent.resent:
                sent.resent = True
                self._send(sent)  # it never arrived: the same id again (a duplicate is harmless)
            else:
                sent.done(None, RpcError(INTERNAL_ERROR, t(self.lang, "v4.command.lost", command=sent.command.type)))

        self.port.engine_call("v4/commands/query", v4.query_params([key]), answered)

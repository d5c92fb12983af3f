"""InteractionRouter: backend questions → client dialogs, answered exactly once.

Owns every open backend interaction request (docs/state-machines.md, "An interaction"):

    received → shown (one dialog per client) → first answer → replied to backend
                 │ client error: fallback path once (form → permission), else declined
                 │ no client can see it (none connected, or every one asked left) → waiting (grace)
                 │     → a client that loads/resumes the session is asked; declined when the grace ends
                 └ cancel / preempt / close / timeout → withdrawn ($/cancel_request) → declined
    re-announce (same requestId, new JSON-RPC id) → remembered, answered with the same reply

An interaction reaches the router only after its tool card was shown (the
Session or its Turn shows it first), so clients always know the card a dialog
belongs to. The mapping of requests and answers is pure (protocol/interactions.py).
"""

from __future__ import annotations

import functools
import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import gevent

from zcode_acp.protocol import interactions as ix
from zcode_acp.protocol.handshake import supports_elicitation_form
from zcode_acp.protocol.shapes import obj

from zcode_acp.actors.base import BridgeActor, handles, safe_tell
from zcode_acp.actors.messages import (
    DialogWaiting,
    AnswerBackend,
    CancelInteractions,
    ClientAttached,
    ClientsChanged,
    DeclineAll,
    DialogAnswered,
    DialogGraceEnded,
    DialogWaits,
    InteractionAborted,
    InteractionAsked,
    InteractionTimeout,
    SendRequest,
    V4Resolve,
    WithdrawRequest,
)

log = logging.getLogger(__name__)

SETTLED_MEMORY = 1000  # answered keys remembered for late re-announces
DEFAULT_GRACE = 600.0  # seconds a dialog no client can see waits for one (config: ZCODE_ACP_DIALOG_GRACE)


@dataclass
class Open:
    """One dialog open for the engine's question, until it is answered or withdrawn."""

    key: str
    kind: str
    params: dict[str, Any]
    session_id: str
    tool_call: dict[str, Any]
    backend_ids: list[Any]
    generation: int  # the backend process that asked: answers go to it only
    session: Any  # the Session that owns the dialog's card
    path: str = "permission"  # or "form"
    fallback_used: bool = False
    step: int = 0  # question index on the per-question path
    answers: dict[str, str] = field(default_factory=dict)
    chosen: list[str] = field(default_factory=list)  # labels picked so far in a multi-select question
    serial: int = 0  # one round of dialogs; answers to an older round are stale
    asked: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # conn urn → (conn, request key)
    failed: set[str] = field(default_factory=set)  # conn urns that answered this round with an error
    timer: Any = None
    grace: Any = None  # while no client can see it: the timer that declines it
    waits: int = 0  # which wait a grace timer belongs to (a killed timer's message may still arrive)
    frame: dict[str, Any] = field(default_factory=dict)  # the request that opened it
    answer_via: Any = None  # a v4 Session: it answers with resolveInteraction, then this request


class InteractionRouter(BridgeActor):
    def __init__(self, backend: Any, timeout: float = 0.0, notifier: Any = None, lang: str = "en",
                 grace: float = DEFAULT_GRACE) -> None:
        super().__init__()
        self.grace = grace  # how long a dialog no client can see waits for one (docs/interactions.md)
        self.lang = lang  # of the dialogs' words the bridge writes (protocol/i18n)
        self.backend = backend
        self.timeout = timeout
        self.notifier = notifier  # told when a dialog starts waiting (actors/notifier.py), if configured
        self.clients: list[Any] = []
        self.capabilities: dict[str, Any] = {}
        self.per_client: dict[str, dict[str, Any]] = {}
        self.open: dict[str, Open] = {}
        self.settled: OrderedDict[str, dict[str, Any]] = OrderedDict()

    @handles(ClientsChanged)
    def on_clients_changed(self, message: ClientsChanged) -> None:
        self.capabilities = message.capabilities
        self.per_client = message.per_client
        present = {conn.actor_urn for conn in message.clients}
        self.clients = list(message.clients)
        for item in list(self.open.values()):
            departed = [u for u in item.asked if u not in present]
            for urn in departed:
                del item.asked[urn]  # that client left; its dialog is gone with it
            item.failed &= present
            if not departed or item.asked:
                continue
            if item.failed:
                # The clients still asked all left, and a client still here failed it (an
                # error answer): as when the last asked client fails it, the fallback form,
                # else declined (docs/reliability.md, "The remote adversarial run").
                self._client_failed(item, {"message": "the clients asked left"})
            else:
                # Nobody who can see it is left (a phone's socket dropped, a page reloads):
                # it waits for a client to load the session again, within the grace.
                self._wait(item)

    def _wait(self, item: Open) -> None:
        """No client can see the dialog: kept for one that attaches, declined when the grace ends."""
        if item.grace is None:
            log.info("a dialog waits for a client to load its session (up to %g s)", self.grace)
            item.waits += 1
            item.grace = gevent.spawn_later(self.grace, safe_tell, self.actor_ref,
                                            DialogGraceEnded(item.key, item.waits))

    # -- a new (or re-announced) request ---------------------------------------------------------

    @handles(InteractionAsked)
    def on_asked(self, message: InteractionAsked) -> None:
        frame = message.frame
        key = f"{message.generation}:{message.backend_session_id}:{ix.interaction_key(frame)}"
        if key in self.settled:
            self.backend.tell(AnswerBackend(message.generation, [frame["id"]], self.settled[key]))
            return
        item = self.open.get(key)
        if item is not None:
            item.backend_ids.append(frame["id"])  # a re-announce: same dialog, one more id to answer
            return
        params = obj(frame.get("params"))
        kind = ix.classify(frame["method"], params)
        item = Open(key=key, kind=kind, params=params, session_id=message.session_id,
                    tool_call=message.tool_call, backend_ids=[frame["id"]], generation=message.generation,
                    session=message.session, frame=frame,
                    answer_via=message.answer_via)
        if kind == ix.QUESTIONS and not ix.questions(params):
            self._reply(item, {"action": "accept", "content": {"answers": {}}})
            return
        if message.declined is not None:  # its turn was already answered: no dialog opens after it
            log.info("session=%s: a %s asked after its turn ended was declined", message.session_id, kind)
            self._reply(item, ix.decline(kind, message.declined))
            return
        if kind != ix.PERMISSION and self._all_show_forms(self.clients):
            item.path = "form"
        self.open[key] = item
        self._tell_waits(item, True)
        if self.timeout > 0:
            item.timer = gevent.spawn_later(self.timeout, safe_tell, self.actor_ref, InteractionTimeout(key))
        self._ask(item, self.clients)  # with no client: it waits for the first that loads the session
        safe_tell(self.notifier, DialogWaiting(item.session_id, kind, dialog_subject(kind, params, item.tool_call)))

    def _all_show_forms(self, conns: list[Any]) -> bool:
        """Forms only when every client that will receive the dialog can show one."""
        if not self.per_client:  # capabilities known only merged (tests, a single client)
            return supports_elicitation_form(self.capabilities)
        return bool(conns) and all(supports_elicitation_form(self.per_client.get(conn.actor_urn, {}))
                                   for conn in conns)

    def _dialog(self, item: Open) -> tuple[str, dict[str, Any]]:
        session_id, tool_call_id = item.session_id, item.tool_call.get("toolCallId")
        if item.path == "form":
            if item.kind == ix.PLAN:
                return "elicitation/create", ix.plan_form(session_id, tool_call_id, item.params, self.lang)
            return "elicitation/create", ix.questions_form(session_id, tool_call_id, item.params, self.lang)
        if item.kind == ix.PERMISSION:
            return "session/request_permission", ix.permission_request(
                session_id, item.tool_call, ix.permission_options(item.params, self.lang))
        if item.kind == ix.PLAN:
            return "session/request_permission", ix.permission_request(session_id, item.tool_call, ix.plan_options(self.lang))
        question = ix.questions(item.params)[item.step]
        tool_call = {**item.tool_call, "title": ix.question_title(question, item.chosen, self.lang)}
        return "session/request_permission", ix.permission_request(
            session_id, tool_call, ix.question_options(question, item.chosen, self.lang))

    def _ask(self, item: Open, conns: list[Any], new_round: bool = True) -> None:
        if new_round:
            item.serial += 1
            item.failed.clear()
        if not conns:
            self._wait(item)
            return
        if item.grace is not None:  # someone sees it again
            item.grace.kill(block=False)
            item.grace = None
        method, params = self._dialog(item)
        for conn in conns:
            request_key = (item.key, item.serial, conn.actor_urn)
            item.asked[conn.actor_urn] = (conn, request_key)
            reply = functools.partial(DialogAnswered, item.key, item.serial, conn.actor_urn)
            conn.tell(SendRequest(method, params, self.actor_ref, reply, request_key))

    @handles(ClientAttached)
    def on_client_attached(self, message: ClientAttached) -> None:
        """A client that loads/resumes a session joins the race for its open dialogs."""
        if all(conn.actor_urn != message.conn.actor_urn for conn in self.clients):
            return  # it left before its replay was written: asked, it would hold the race forever
        for item in self.open.values():
            if item.session_id == message.session_id and message.conn.actor_urn not in item.asked:
                self._ask(item, [message.conn], new_round=False)

    # -- answers --------------------------------------------------------------------------------------

    @handles(DialogAnswered)
    def on_dialog_answered(self, message: DialogAnswered) -> None:
        key, serial, urn = message.key, message.serial, message.conn_urn
        item = self.open.get(key)
        if item is None or serial != item.serial or urn not in item.asked:
            return  # late: already answered, withdrawn, or an older round
        del item.asked[urn]
        if message.error is not None:
            item.failed.add(urn)
            self._client_failed(item, message.error)
            return
        self._withdraw(item)  # the first answer wins
        self._answered(item, message.result)

    def _client_failed(self, item: Open, error: Any) -> None:
        if item.asked:
            return  # another client may still answer
        if item.path == "form" and not item.fallback_used:
            log.info("form request failed (%s); asking with a permission dialog instead", error.get("message"))
            item.fallback_used = True
            item.path = "permission"
            self._ask(item, self.clients)
            return
        self._settle(item, ix.decline(item.kind, "the client could not show the request"), withdraw=False)

    def _answered(self, item: Open, result: Any) -> None:
        if item.kind == ix.PERMISSION:
            self._settle(item, ix.permission_answer(result, ix.permission_options(item.params), item.params))
        elif item.kind == ix.PLAN:
            answer = ix.plan_form_answer(result, item.params) if item.path == "form" else ix.plan_permission_answer(result)
            self._settle(item, answer)
        elif item.path == "form":
            self._settle(item, ix.questions_form_answer(result, item.params))
        else:
            question = ix.questions(item.params)[item.step]
            pick = ix.question_pick(result, question)
            if question.get("multiSelect") and item.chosen and (pick is None and ix.multi_done(result)):
                pick = ", ".join(item.chosen)  # Done: the labels chosen so far
            elif question.get("multiSelect") and pick is not None:
                item.chosen.append(pick)
                if len(item.chosen) < len(ix.option_labels(question)):
                    self._ask(item, self.clients)  # the same question again, for another pick or Done
                    return
                pick = ", ".join(item.chosen)
            if pick is None:  # skip or cancel declines the whole interaction
                self._settle(item, {"action": "decline", "reason": "skipped by user"})
                return
            item.answers[question["question"]] = pick
            item.chosen = []
            item.step += 1
            if item.step < len(ix.questions(item.params)):
                self._ask(item, self.clients)
            else:
                self._settle(item, {"action": "accept", "content": {"answers": item.answers}})

    # -- endings ------------------------------------------------------------------------------------------

    def _withdraw(self, item: Open) -> None:
        for conn, request_key in item.asked.values():
            safe_tell(conn, WithdrawRequest(request_key))
        item.asked.clear()

    def _settle(self, item: Open, answer: dict[str, Any], withdraw: bool = True) -> None:
        if withdraw:
            self._withdraw(item)
        for timer in (item.timer, item.grace):
            if timer is not None:
                timer.kill(block=False)
        if self.open.pop(item.key, None) is not None:
            self._tell_waits(item, False)
        self._reply(item, answer)

    def _tell_waits(self, item: Open, waiting: bool) -> None:
        """The card's owner learns a dialog about it opened or is settled (a sub-agent's child state)."""
        tool_call_id = item.tool_call.get("toolCallId")
        if isinstance(tool_call_id, str):
            safe_tell(item.session, DialogWaits(tool_call_id, waiting))

    def _reply(self, item: Open, answer: dict[str, Any]) -> None:
        handed = item.answer_via is not None and safe_tell(  # a v4 session: resolveInteraction, then the request
            item.answer_via, V4Resolve(item.frame, item.generation, list(item.backend_ids), answer))
        if not handed:  # (a v4 Session already gone answers nothing: the request is answered here)
            self.backend.tell(AnswerBackend(item.generation, list(item.backend_ids), answer))
        self.settled[item.key] = answer
        while len(self.settled) > SETTLED_MEMORY:
            self.settled.popitem(last=False)

    def _abort(self, item: Open, reason: str) -> None:
        """Withdraw the dialogs and decline to the backend. The card is not ours: whoever
        cancelled (the Session, its Turn) closes it; on a timeout we tell the card's owner."""
        self._settle(item, ix.decline(item.kind, reason))

    @handles(CancelInteractions)
    def on_cancel(self, message: CancelInteractions) -> None:
        for item in [i for i in self.open.values() if i.session_id == message.session_id]:
            self._abort(item, message.reason)

    @handles(DeclineAll)
    def on_decline_all(self, message: DeclineAll) -> None:
        for item in list(self.open.values()):
            self._abort(item, message.reason)

    @handles(InteractionTimeout)
    def on_timeout(self, message: InteractionTimeout) -> None:
        item = self.open.get(message.key)
        if item is not None:
            self._ended(item, "no answer in time")

    @handles(DialogGraceEnded)
    def on_grace_ended(self, message: DialogGraceEnded) -> None:
        item = self.open.get(message.key)
        if item is not None and item.grace is not None and message.wait == item.waits:
            log.info("a dialog no client could see was declined after %g s", self.grace)
            self._ended(item, "no client is connected")

    def _ended(self, item: Open, reason: str) -> None:
        """Declined by the clock: nobody cancelled, so the card's owner is told to close it."""
        self._abort(item, reason)
        tool_call_id = item.tool_call.get("toolCallId")
        if isinstance(tool_call_id, str):
            safe_tell(item.session, InteractionAborted(tool_call_id))


def dialog_subject(kind: str, params: dict[str, Any], tool_call: dict[str, Any]) -> str:
    """What a dialog's notice names (sent only with text opted in): the question itself, not the
    tool that asks it ("AskUserQuestion"); a permission's or plan's card title."""
    asked = ix.questions(params)
    if kind == ix.QUESTIONS and asked:
        return str(asked[0]["question"]) + (f" (+{len(asked) - 1})" if len(asked) > 1 else "")
    return str(tool_call.get("title") or "")

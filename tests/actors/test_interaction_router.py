"""The InteractionRouter's state machine between recording fakes."""

import pytest

from zcode_acp.actors.interaction_router import InteractionRouter
from zcode_acp.actors.messages import (
    CancelInteractions,
    ClientAttached,
    ClientsChanged,
    DialogGraceEnded,
    InteractionAsked,
)
from zcode_acp.protocol.interactions import interaction_key
from tests.actors.fakes import Probe

FORMS = {"elicitation": {"form": {}}}


def permission(frame_id, request_id="r1", session="b-1"):
    return {"id": frame_id, "method": "interaction/requestPermission",
            "params": {"requestId": request_id, "sessionId": session, "toolCallId": "c1", "toolName": "Bash",
                       "input": {"command": "ls"},
                       "options": [{"optionId": "yes", "kind": "allow_once", "name": "Yes"},
                                   {"optionId": "no", "kind": "deny", "name": "No"}]}}


def plan(frame_id):
    return {"id": frame_id, "method": "interaction/requestUserInput",
            "params": {"requestId": "p1", "sessionId": "b-1", "toolCallId": "c2",
                       "schema": {"interaction": "plan_approval"}, "input": {"plan": "1. do"}}}


TOOL_CALL = {"toolCallId": "c1", "title": "Bash: ls", "kind": "execute", "status": "pending"}


@pytest.fixture
def world():
    backend, first, second = Probe(), Probe(), Probe()
    router = InteractionRouter.start(backend.ref)
    router.tell(ClientsChanged([first.ref, second.ref], {}))
    yield router, backend, first, second
    router.stop()


def ask(router, frame, session="acp-1", owner=None):
    router.tell(InteractionAsked(frame, 1, session, "b-1", TOOL_CALL, owner.ref if owner else None))


def answer(router, request, result=None, error=None):
    router.tell(request.reply(result, error))


def test_re_announces_are_not_shown_again_and_every_id_gets_the_answer(world):
    router, backend, first, second = world
    ask(router, permission(10))
    ask(router, permission(11))  # same requestId, new JSON-RPC id
    [dialog] = first.wait_for(lambda: first.of("SendRequest"))
    answer(router, dialog, {"outcome": {"outcome": "selected", "optionId": "yes"}})
    [reply] = backend.wait_for(lambda: backend.of("AnswerBackend"))
    assert reply.request_ids == [10, 11] and reply.result == {"decision": "allow"}
    ask(router, permission(12))  # a late re-announce after the answer
    backend.wait_for(lambda: len(backend.of("AnswerBackend")) == 2)
    assert backend.of("AnswerBackend")[1].request_ids == [12]
    assert backend.of("AnswerBackend")[1].result == {"decision": "allow"}
    assert len(first.of("SendRequest")) == 1 and len(second.of("SendRequest")) == 1


def test_the_first_answer_wins_and_the_other_dialog_is_withdrawn(world):
    router, backend, first, second = world
    ask(router, permission(10))
    [one] = first.wait_for(lambda: first.of("SendRequest"))
    [two] = second.wait_for(lambda: second.of("SendRequest"))
    assert one.params["options"][1]["kind"] == "reject_once"  # deny → reject_once, never an allow
    answer(router, two, {"outcome": {"outcome": "selected", "optionId": "no"}})
    [withdrawn] = first.wait_for(lambda: first.of("WithdrawRequest"))
    assert withdrawn.key == one.key
    answer(router, one, {"outcome": {"outcome": "selected", "optionId": "yes"}})  # too late
    ask(router, permission(20, request_id="r2"))  # barrier
    first.wait_for(lambda: len(first.of("SendRequest")) == 2)
    [reply] = backend.of("AnswerBackend")
    assert reply.result == {"decision": "deny", "reason": "rejected (no)"}


def test_cancel_withdraws_and_declines_but_leaves_the_card_to_its_owner(world):
    router, backend, first, second = world
    owner = Probe()
    ask(router, permission(10), owner=owner)
    first.wait_for(lambda: first.of("SendRequest"))
    router.tell(CancelInteractions("acp-1", "cancelled by user"))
    [reply] = backend.wait_for(lambda: backend.of("AnswerBackend"))
    assert reply.result == {"decision": "deny", "reason": "cancelled by user"}
    assert first.wait_for(lambda: first.of("WithdrawRequest")) and second.wait_for(lambda: second.of("WithdrawRequest"))
    # One owner per card: whoever cancelled (the Session or its Turn) closes it, never the router.
    assert first.of("Deliver") == [] and owner.of("InteractionAborted") == []


def test_a_timed_out_dialog_tells_the_owner_of_its_card(world):
    _, backend, first, second = world
    owner = Probe()
    router = InteractionRouter.start(backend.ref, 0.05)
    try:
        router.tell(ClientsChanged([first.ref], {}))
        ask(router, permission(10), owner=owner)
        [aborted] = owner.wait_for(lambda: owner.of("InteractionAborted"))
        assert aborted.tool_call_id == "c1"
        assert backend.wait_for(lambda: backend.of("AnswerBackend"))[0].result["decision"] == "deny"
        assert first.wait_for(lambda: first.of("WithdrawRequest"))
    finally:
        router.stop()


def test_cancel_of_another_session_touches_nothing(world):
    router, backend, first, _ = world
    ask(router, permission(10), session="acp-1")
    router.tell(CancelInteractions("acp-2", "cancelled by user"))
    ask(router, permission(20, request_id="r2"), session="acp-2")  # barrier
    first.wait_for(lambda: len(first.of("SendRequest")) == 2)
    assert backend.of("AnswerBackend") == []


def test_the_last_client_leaving_keeps_the_dialog_for_one_that_loads_the_session(world):
    router, backend, first, second = world
    ask(router, permission(10))
    first.wait_for(lambda: first.of("SendRequest"))
    router.tell(ClientsChanged([], {}))  # the phone's socket drops
    router.tell(ClientsChanged([second.ref], {}))  # it reconnects: not asked before it loads the session
    router.tell(ClientAttached("acp-1", second.ref))
    again = second.wait_for(lambda: len(second.of("SendRequest")) == 2 and second.of("SendRequest")[1])
    assert again.method == "session/request_permission" and backend.of("AnswerBackend") == []
    answer(router, again, {"outcome": {"outcome": "selected", "optionId": "yes"}})
    [reply] = backend.wait_for(lambda: backend.of("AnswerBackend"))
    assert reply.result == {"decision": "allow"}


def test_a_dialog_asked_with_no_client_waits_for_one(world):
    router, backend, first, _ = world
    router.tell(ClientsChanged([], {}))
    ask(router, permission(10))
    router.tell(ClientsChanged([first.ref], {}))
    router.tell(ClientAttached("acp-1", first.ref))
    [dialog] = first.wait_for(lambda: first.of("SendRequest"))
    answer(router, dialog, {"outcome": {"outcome": "selected", "optionId": "yes"}})
    assert backend.wait_for(lambda: backend.of("AnswerBackend"))[0].result == {"decision": "allow"}


def test_a_dialog_nobody_comes_back_for_is_declined_when_the_grace_ends():
    backend, phone, owner = Probe(), Probe(), Probe()
    router = InteractionRouter.start(backend.ref, grace=0.05)
    try:
        router.tell(ClientsChanged([phone.ref], {}))
        ask(router, permission(10), owner=owner)
        phone.wait_for(lambda: phone.of("SendRequest"))
        router.tell(ClientsChanged([], {}))
        [reply] = backend.wait_for(lambda: backend.of("AnswerBackend"))
        assert reply.result == {"decision": "deny", "reason": "no client is connected"}
        assert owner.wait_for(lambda: owner.of("InteractionAborted"))[0].tool_call_id == "c1"  # its card closes
    finally:
        router.stop()


def test_the_grace_ending_after_a_client_came_back_declines_nothing(world):
    router, backend, first, _ = world
    ask(router, permission(10))
    first.wait_for(lambda: first.of("SendRequest"))
    router.tell(ClientsChanged([], {}))  # the first wait begins
    router.tell(ClientsChanged([first.ref], {}))
    router.tell(ClientAttached("acp-1", first.ref))
    first.wait_for(lambda: len(first.of("SendRequest")) == 2)
    # Its timer is stopped; a message it sent just before (still in the mailbox) changes nothing.
    router.tell(DialogGraceEnded(f"1:b-1:{interaction_key(permission(10))}", 1))
    ask(router, permission(20, request_id="r2"))  # barrier
    first.wait_for(lambda: len(first.of("SendRequest")) == 3)
    assert backend.of("AnswerBackend") == []


def test_the_clients_asked_leaving_after_one_still_here_failed_it_declines(world):
    router, backend, first, second = world
    ask(router, permission(10))
    [failing] = first.wait_for(lambda: first.of("SendRequest"))
    second.wait_for(lambda: second.of("SendRequest"))
    answer(router, failing, error={"code": -32603, "message": "cannot show it"})
    router.tell(ClientsChanged([first.ref], {}))  # the one that could show it leaves
    [reply] = backend.wait_for(lambda: backend.of("AnswerBackend"))
    assert reply.result["decision"] == "deny"


def test_a_failing_form_falls_back_once_then_declines(world):
    router, backend, first, second = world
    router.tell(ClientsChanged([first.ref], FORMS))
    ask(router, plan(10))
    [form] = first.wait_for(lambda: first.of("SendRequest"))
    assert form.method == "elicitation/create"
    answer(router, form, error={"code": -32601, "message": "Method not found"})
    fallback = first.wait_for(lambda: len(first.of("SendRequest")) == 2 and first.of("SendRequest")[1])
    assert fallback.method == "session/request_permission"
    answer(router, fallback, error={"code": -32603, "message": "broken"})
    [reply] = backend.wait_for(lambda: backend.of("AnswerBackend"))
    assert reply.result["action"] == "decline"


def test_a_client_attaching_later_joins_the_race(world):
    router, backend, first, second = world
    router.tell(ClientsChanged([first.ref], {}))
    ask(router, permission(10))
    first.wait_for(lambda: first.of("SendRequest"))
    router.tell(ClientsChanged([first.ref, second.ref], {}))  # it connects: not asked yet
    router.tell(ClientAttached("acp-1", second.ref))  # it loads the session: now it is
    [late] = second.wait_for(lambda: second.of("SendRequest"))
    answer(router, late, {"outcome": {"outcome": "selected", "optionId": "yes"}})
    assert backend.wait_for(lambda: backend.of("AnswerBackend"))[0].result == {"decision": "allow"}
    assert first.wait_for(lambda: first.of("WithdrawRequest"))


def test_on_a_v4_session_the_first_answer_goes_to_the_session_not_the_backend(world):
    router, backend, first, second = world
    session = Probe()
    try:
        router.tell(InteractionAsked(permission(10), 1, "acp-1", "b-1", TOOL_CALL, session.ref, backend.ref,
                                     answer_via=session.ref))
        router.tell(InteractionAsked(permission(11), 1, "acp-1", "b-1", TOOL_CALL, session.ref, backend.ref,
                                     answer_via=session.ref))  # a re-announce
        [dialog] = first.wait_for(lambda: first.of("SendRequest"))
        second.wait_for(lambda: second.of("SendRequest"))
        answer(router, dialog, {"outcome": {"outcome": "selected", "optionId": "yes"}})
        [resolve] = session.wait_for(lambda: session.of("V4Resolve"))
        assert resolve.request_ids == [10, 11] and resolve.result == {"decision": "allow"}
        assert resolve.frame["params"]["requestId"] == "r1"
        assert backend.of("AnswerBackend") == []  # the Session answers the request, after resolveInteraction
        second.wait_for(lambda: second.of("WithdrawRequest"))  # the first answer won
    finally:
        session.stop()


def test_on_a_v4_session_plan_approval_goes_to_the_session_too(world):
    # The engine races a plan approval's legacy request with its v4 interaction like any other
    # (interaction-broker.ts), and a v4 answer keeps {action, content}: the feedback survives.
    router, backend, first, second = world
    session = Probe()
    try:
        router.tell(InteractionAsked(plan(20), 1, "acp-1", "b-1", TOOL_CALL, session.ref, backend.ref,
                                     answer_via=session.ref))
        [dialog] = first.wait_for(lambda: first.of("SendRequest"))
        answer(router, dialog, {"outcome": {"outcome": "selected", "optionId": "approve"}})
        [resolve] = session.wait_for(lambda: session.of("V4Resolve"))
        assert resolve.request_ids == [20] and resolve.result == {"action": "accept", "content": {"answer_0": "approve"}}
        assert backend.of("AnswerBackend") == []  # the Session answers the request, after resolveInteraction
    finally:
        session.stop()


def test_on_a_v4_session_already_gone_the_request_is_answered_here(world):
    router, backend, first, second = world
    session = Probe()
    session.stop()
    router.tell(InteractionAsked(permission(30), 1, "acp-1", "b-1", TOOL_CALL, None, backend.ref,
                                 answer_via=session.ref))
    [dialog] = first.wait_for(lambda: first.of("SendRequest"))
    answer(router, dialog, {"outcome": {"outcome": "selected", "optionId": "yes"}})
    [reply] = backend.wait_for(lambda: backend.of("AnswerBackend"))
    assert reply.request_ids == [30] and reply.result == {"decision": "allow"}

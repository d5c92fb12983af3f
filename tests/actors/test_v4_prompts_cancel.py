"""actors/session/v4/prompts.py and v4/unqueue.py: what a cancel does to the prompts a v4 session owes."""

from zcode_acp.actors.session.v4.prompts import OwedPrompt, V4Prompts
from zcode_acp.actors.session.v4.unqueue import V4Unqueue
from zcode_acp.protocol.errors import INTERNAL_ERROR, RpcError
from zcode_acp.protocol.v4.conversation import TurnEnded


class Conn:
    actor_urn = "urn:client"


def owed(request_id):
    return OwedPrompt(Conn(), request_id)


def test_a_prompt_cancelled_before_it_was_sent_is_answered_once_and_never_sent():
    prompts = V4Prompts()
    waiting = owed(1)
    prompts.hold(waiting)
    [answer] = prompts.cancel_waiting()
    assert answer.owed is waiting and answer.result == {"stopReason": "cancelled"}
    assert prompts.release(waiting) is False  # the live session must not send it now
    assert not prompts.busy


def test_a_cancelled_prompt_stays_cancelled_when_the_engine_is_lost():
    prompts = V4Prompts()
    running, other = owed(1), owed(2)
    for one in (running, other):
        prompts.sent(one)
        prompts.admitted(one, "startNow")
    running.cancelled = True
    answers = {a.owed.request_id: a for a in prompts.drop_all(RpcError(INTERNAL_ERROR, "exited"))}
    assert answers[1].result == {"stopReason": "cancelled"} and answers[1].error is None
    assert answers[2].error is not None and answers[2].error.message == "exited"


def test_cancel_overdue_answers_only_the_cancelled_and_the_turns_end_then_answers_nothing_twice():
    prompts = V4Prompts()
    first = owed(1)
    prompts.sent(first)
    prompts.admitted(first, "startNow")
    prompts.cancel_requested()
    assert [a.result for a in prompts.cancel_overdue()] == [{"stopReason": "cancelled"}]
    assert prompts.turn_ended(TurnEnded("cancelled", None)) == []


def test_a_failed_turn_without_last_error_fails_with_its_words():
    prompts = V4Prompts()
    one = owed(1)
    prompts.sent(one)
    prompts.admitted(one, "startNow")
    [answer] = prompts.turn_ended(TurnEnded(None, None, "the disk is full"))
    assert answer.error is not None and answer.error.code == INTERNAL_ERROR
    assert "before it finished" in answer.error.message and "the disk is full" in answer.error.message


def test_queued_prompts_are_unqueued_once_their_items_show_then_the_queue_drains_again():
    prompts, unqueue = V4Prompts(), V4Unqueue()
    queued = owed(1)
    prompts.sent(queued)
    prompts.admitted(queued, "queue", "cmd-1")
    [answer] = prompts.unqueue()
    assert answer.result == {"stopReason": "cancelled"} and not prompts.queued
    unqueue.add(["cmd-1"])
    assert unqueue.sweep("s", {"queue": {"items": []}}) == []  # its item has not arrived yet
    commands = unqueue.sweep("s", {"queue": {"items": [{"queueItemId": "q-1", "sourceCommandId": "cmd-1"}]}})
    assert [(c.type, c.payload) for c in commands] == [("deleteQueueItem", {"queueItemId": "q-1"}),
                                                       ("setAutoDrain", {"autoDrain": True})]
    assert unqueue.sweep("s", {"queue": {"items": [{"queueItemId": "q-1", "sourceCommandId": "cmd-1"}]}}) == []

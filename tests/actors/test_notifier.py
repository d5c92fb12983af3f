"""The Notifier against a local webhook: the three kinds in each format, the rate limit,
retries then one log line, text only when opted in (actors/notifier.py)."""

import logging

import pytest

from zcode_acp.actors.messages import (BackendFailed, DialogWaiting, HubPageKnown, SessionOpened, SessionTitled,
                                       TurnFinished)
from zcode_acp.actors.notifier import QUEUE_LIMIT, Notifier, NotifySettings
from zcode_acp.protocol import notifications as n


def notifier(url, **settings):
    values = {"after": 0.0, "interval": 0.0, "backoff": 0.01, "page": "https://agent.example.org/", **settings}
    return Notifier.start(NotifySettings(url=url, **values))


def everything_once(ref):
    ref.tell(HubPageKnown("inst1"))
    ref.tell(SessionOpened("sess_1", "/home/me/proj"))
    ref.tell(SessionTitled("sess_1", "Fix the parser"))
    ref.tell(TurnFinished("sess_1", 75.0, "end_turn", prompt="the prompt words", answer="the answer words"))
    ref.tell(DialogWaiting("sess_1", "permission", "Run `rm -rf build`"))
    ref.tell(BackendFailed("ZCode backend exited (code 3)"))


@pytest.mark.parametrize("fmt", n.FORMATS)
def test_the_three_kinds_reach_the_webhook_in_each_format(receiver, fmt):
    hook = receiver()
    ref = notifier(hook.url, format=fmt)
    try:
        everything_once(ref)
        posts = hook.wait_for(3)
    finally:
        ref.stop()
    assert len(posts) == 3 and all(p.path == "/hook?key=webhook-key" for p in posts)
    texts = [p.everything() for p in posts]
    # Not opted in: the title (the prompt's first words) is prompt text; the folder and the id name it.
    assert "proj (sess_1)" in texts[0] and "1 min 15 s" in texts[0]
    assert "waits for your answer" in texts[1] and "proj (sess_1)" in texts[1]
    assert all("Fix the parser" not in text for text in texts)
    assert "exited (code 3)" in texts[2]
    link = "https://agent.example.org/#/s/inst1/sess_1"
    assert link in texts[0] and link in texts[1] and link not in texts[2]
    for text in texts:  # not opted in: no prompt, no answer, not even the dialog's card title
        assert "the prompt words" not in text and "the answer words" not in text and "rm -rf" not in text
    if fmt == "json":
        assert [p.json()["event"] for p in posts] == [n.TURN_ENDED, n.DIALOG_WAITING, n.BACKEND_FAILED]


def test_text_goes_along_only_when_opted_in(receiver):
    hook = receiver()
    ref = notifier(hook.url, include_text=True)
    try:
        everything_once(ref)
        posts = hook.wait_for(3)
    finally:
        ref.stop()
    turn, dialog = posts[0].json(), posts[1].json()
    assert turn["prompt"] == "the prompt words" and turn["answer"] == "the answer words"
    assert turn["title"] == dialog["title"] == "Fix the parser"  # opted in: the title names it
    assert "rm -rf build" in dialog["summary"]


def test_a_short_turn_is_not_worth_a_notice(receiver):
    hook = receiver()
    ref = notifier(hook.url, after=60.0)
    try:
        ref.tell(TurnFinished("sess_1", 59.0, "end_turn"))
        ref.tell(TurnFinished("sess_1", 61.0, "cancelled"))
        posts = hook.wait_for(1)
        ref.ask(SessionTitled("sess_1", "x"))  # every earlier tell has been handled by now
    finally:
        ref.stop()
    assert [p.json()["summary"] for p in posts] == ["Finished after 1 min 1 s (cancelled)."]


def test_one_notice_per_session_and_kind_per_interval(receiver):
    hook = receiver()
    ref = notifier(hook.url, interval=3600.0)
    try:
        for _ in range(3):
            ref.tell(TurnFinished("sess_1", 5.0, "end_turn"))
        ref.tell(TurnFinished("sess_2", 5.0, "end_turn"))  # another session: its own budget
        ref.tell(BackendFailed("exited"))  # another kind: its own budget
        ref.tell(BackendFailed("exited again"))
        posts = hook.wait_for(3)
        ref.ask(SessionTitled("sess_1", "x"))
        posts = hook.wait_for(4, timeout=0.5)  # nothing more arrives: the limit held
    finally:
        ref.stop()
    kinds = [(p.json()["event"], p.json().get("sessionId")) for p in posts]
    assert kinds == [(n.TURN_ENDED, "sess_1"), (n.TURN_ENDED, "sess_2"), (n.BACKEND_FAILED, None)]


def test_a_dialog_that_waits_for_the_user_is_never_swallowed_by_the_rate_limit(receiver):
    hook = receiver()
    ref = notifier(hook.url, interval=3600.0)
    try:
        for index in range(8):
            ref.tell(DialogWaiting("sess_1", "questions", f"question {index}"))
        posts = hook.wait_for(8)
    finally:
        ref.stop()
    assert [p.json()["event"] for p in posts] == [n.DIALOG_WAITING] * 8


def test_a_failing_webhook_is_retried_then_logged_once(receiver, caplog):
    hook = receiver(statuses=(500,) * 6)
    ref = notifier(hook.url, attempts=3)
    try:
        with caplog.at_level(logging.WARNING, logger="zcode_acp.actors.notifier"):
            ref.tell(DialogWaiting("sess_1", "permission"))
            hook.wait_for(3)  # the first notice: three attempts
            ref.tell(DialogWaiting("sess_2", "permission"))
            hook.wait_for(6)  # the second: three more, all failing
            ref.tell(DialogWaiting("sess_3", "permission"))
            hook.wait_for(7)  # the webhook works again
            ref.ask(SessionTitled("sess_1", "x"))
    finally:
        ref.stop()
    failures = [r for r in caplog.records if "webhook failed" in r.getMessage()]
    assert len(failures) == 1
    assert "HTTP 500" in failures[0].getMessage() and "webhook-key" not in failures[0].getMessage()


def test_a_client_error_is_not_retried(receiver, caplog):
    hook = receiver(statuses=(400,))
    ref = notifier(hook.url, attempts=3)
    try:
        with caplog.at_level(logging.WARNING, logger="zcode_acp.actors.notifier"):
            ref.tell(DialogWaiting("sess_1", "permission"))
            hook.wait_for(1)
            ref.tell(DialogWaiting("sess_2", "permission"))
            posts = hook.wait_for(2)  # the next notice, not a second attempt at the refused one
            ref.ask(SessionTitled("sess_1", "x"))
    finally:
        ref.stop()
    assert [p.json()["sessionId"] for p in posts] == ["sess_1", "sess_2"]
    [failure] = [r.getMessage() for r in caplog.records if "webhook failed" in r.getMessage()]
    assert failure.endswith("HTTP 400 (logged once until it works again)")


def test_a_full_queue_drops_with_one_log_line_and_never_blocks(receiver, caplog):
    hook = receiver(hang=True)
    ref = notifier(hook.url)
    try:
        with caplog.at_level(logging.WARNING, logger="zcode_acp.actors.notifier"):
            ref.tell(DialogWaiting("sess_first", "permission"))
            hook.wait_for(1, arrived=True)  # the sender is stuck on this one
            for index in range(QUEUE_LIMIT + 10):
                ref.tell(DialogWaiting(f"sess_{index}", "permission"))
            ref.ask(SessionTitled("sess_1", "x"), timeout=5)  # the actor still answers at once
    finally:
        ref.stop()
    dropped = [r for r in caplog.records if "notification dropped" in r.getMessage()]
    assert len(dropped) == 1


def test_a_redirect_is_a_failed_post_never_followed_nor_retried(receiver, caplog):
    elsewhere = receiver()
    hook = receiver(statuses=(302,), location=elsewhere.url)
    ref = notifier(hook.url, attempts=3)
    try:
        with caplog.at_level(logging.WARNING, logger="zcode_acp.actors.notifier"):
            ref.tell(DialogWaiting("sess_1", "permission"))
            hook.wait_for(1)
            ref.tell(DialogWaiting("sess_2", "permission"))
            posts = hook.wait_for(2)  # the next notice, not a second attempt at the redirected one
            ref.ask(SessionTitled("sess_1", "x"))
    finally:
        ref.stop()
    assert [p.json()["sessionId"] for p in posts] == ["sess_1", "sess_2"] and elsewhere.arrived == 0
    [failure] = [r.getMessage() for r in caplog.records if "webhook failed" in r.getMessage()]
    assert "HTTP 302 (redirects are not followed)" in failure and "webhook-key" not in failure

"""The actor loop that owns a greenlet only while it has mail (actors/on_demand.py).

What pykka's own loop promised must still hold: on_start first, one message at
a time in order (also while a handler blocks), asks answered, stop final with
what is left failed. And what it is for: an idle actor holds no greenlet.
"""

import gc

import gevent
import gevent.event
import greenlet
import pykka
import pytest

from zcode_acp.actors import on_demand
from zcode_acp.actors.base import BridgeActor, handles


class Note:
    def __init__(self, text):
        self.text = text


class Hold:
    """Block the handler until ``release`` is set (stands for a handler that asks another actor)."""

    def __init__(self, release, entered):
        self.release = release
        self.entered = entered


class Fail:
    pass


class Recorder(BridgeActor):
    def __init__(self):
        super().__init__()
        self.seen = []
        self.active = 0

    def on_start(self):
        self.seen.append("start")

    @handles(Note)
    def on_note(self, message):
        self.active += 1
        assert self.active == 1, "two handlers ran at once"
        gevent.sleep(0)  # a yield inside a handler must not let the next message in
        self.seen.append(message.text)
        self.active -= 1
        return list(self.seen)

    @handles(Hold)
    def on_hold(self, message):
        self.active += 1
        message.entered.set()
        message.release.wait(5)
        self.seen.append("held")
        self.active -= 1

    @handles(Fail)
    def on_fail(self, message):
        raise RuntimeError("broken handler")


def live_greenlets():
    return sum(1 for item in gc.get_objects() if isinstance(item, greenlet.greenlet) and item)


def test_on_start_runs_first_and_messages_are_handled_one_at_a_time_in_order():
    ref = Recorder.start()
    for index in range(20):
        ref.tell(Note(str(index)))
    seen = ref.ask(Note("last"), timeout=5)
    assert seen == ["start", *[str(index) for index in range(20)], "last"]
    ref.stop()


def test_what_arrives_while_a_handler_blocks_waits_behind_it():
    ref = Recorder.start()
    release, entered = gevent.event.Event(), gevent.event.Event()
    ref.tell(Hold(release, entered))
    assert entered.wait(5)
    later = ref.ask(Note("after"), block=False)  # queued while the handler waits (it yields)
    release.set()
    assert later.get(timeout=5) == ["start", "held", "after"]
    ref.stop()


def test_a_failing_handler_answers_its_asker_and_the_actor_carries_on():
    ref = Recorder.start()
    assert ref.ask(Fail(), timeout=5) is None  # BridgeActor logs it and carries on
    assert ref.ask(Note("fine"), timeout=5) == ["start", "fine"]
    ref.stop()


def test_stop_is_final_and_what_was_queued_behind_it_fails():
    ref = Recorder.start()
    release, entered = gevent.event.Event(), gevent.event.Event()
    ref.tell(Hold(release, entered))
    assert entered.wait(5)
    stopped = ref.ask(pykka.messages._ActorStop(), block=False)
    behind = ref.ask(Note("too late"), block=False)
    release.set()
    assert stopped.get(timeout=5) is None
    with pytest.raises(pykka.ActorDeadError):
        behind.get(timeout=5)
    assert not ref.is_alive()
    with pytest.raises(pykka.ActorDeadError):
        ref.tell(Note("after the end"))


def test_an_idle_actor_owns_no_greenlet():
    gc.collect()
    before = live_greenlets()
    refs = [Recorder.start() for _ in range(50)]
    try:
        for ref in refs:
            assert ref.ask(Note("once"), timeout=5) == ["start", "once"]
        gc.collect()
        assert live_greenlets() - before < 5, "each idle actor still keeps a greenlet (and its stack)"
    finally:
        for ref in refs:
            ref.stop()


class Part:
    """A helper that holds its actor, as the Session's parts do: a reference cycle."""

    def __init__(self, owner):
        self.owner = owner


class Owner(Recorder):
    def __init__(self):
        super().__init__()
        self.part = Part(self)


def test_a_stopped_actor_is_freed_by_reference_counting_alone():
    """Its state is let go at the end, so no cycle waits for the (rarely run) cyclic collector."""
    gc.collect()
    gc.disable()
    try:
        ref = Owner.start()
        assert ref.ask(Note("once"), timeout=5) == ["start", "once"]
        actor = ref._actor_weakref
        assert actor() is not None
        ref.stop()
        assert actor() is None, "the stopped actor waits for a cyclic collection"
        assert not ref.is_alive()
        with pytest.raises(pykka.ActorDeadError):
            ref.tell(Note("after the end"))
    finally:
        gc.enable()


class Who:
    pass


class Greenlets(Recorder):
    @handles(Who)
    def on_who(self, message):
        return greenlet.getcurrent()


def test_mail_for_an_idle_actor_resumes_a_parked_drainer_and_few_stay_parked():
    """A wake-up per batch at every hop: resuming a parked drainer, not spawning one (the stream's cost)."""
    refs = [Greenlets.start() for _ in range(20)]
    try:
        for ref in refs:  # all woken at once: as many drainers as actors with mail
            ref.tell(Note("burst"))
        assert [ref.ask(Who(), timeout=5) for ref in refs]
        gevent.sleep(0)  # the last drainers reach their parking place
        assert 0 < len(on_demand._PARKED) <= on_demand._KEEP_PARKED
        waiting = {waiter.greenlet for waiter in on_demand._PARKED}
        assert refs[0].ask(Who(), timeout=5) in waiting
    finally:
        for ref in refs:
            ref.stop()

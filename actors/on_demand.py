"""An actor loop that owns a greenlet only while the actor has mail (docs/performance.md, "Idle sessions").

pykka's ``ThreadingActor`` gives each actor a thread for its whole life; on
gevent that is a greenlet parked in ``inbox.get()``, and a parked greenlet
keeps its saved C stack, the Thread object, the queue and its conditions:
~15 KiB of RSS per actor doing nothing, so 10,000 idle Sessions cost ~150 MiB
before they hold anything of their own.

Here the inbox is a plain deque. A message put into an inbox that nobody is
draining wakes a drainer greenlet (one of a few parked ones, shared by every
actor, or a new one); it handles the messages one at a time, oldest first, and
leaves the actor when the inbox is empty, to park for the next actor with mail
(at most ``_KEEP_PARKED`` wait) or end. pykka's rules stay as they were:

* one message at a time, in order: at most one drainer exists (it is
  remembered until it ends), and a handler that blocks (an ``ask``) blocks the
  drainer, so what arrives meanwhile waits in the inbox behind it;
* ``on_start`` runs before the first message (the first drainer runs it);
* ``stop`` is a message like any other (``_ActorStop``): once handled nothing
  more is, and what is left in the inbox fails with ``ActorDeadError``;
* a ``BaseException`` in a handler stops every actor, as pykka does.

No yield separates the drainer's last look at an empty inbox from forgetting
itself, and gevent switches only at yields, so a message is never left in an
inbox that nobody will drain.
"""

from __future__ import annotations

import collections
import logging
import sys
from collections.abc import Callable
from typing import Any

import gevent
import pykka
from gevent.hub import Waiter
from pykka import ActorDeadError, ActorRegistry
from pykka import messages as pykka_messages

log = logging.getLogger("pykka")  # the same logger pykka's own loop reports on


_EMPTY: collections.deque[Any] = collections.deque(maxlen=0)  # every idle inbox's: nothing is ever put in it


class WakingInbox:
    """pykka's inbox interface (``put``/``get``/``empty``) over a deque; a put wakes the actor.

    The deque exists only while there is mail: an empty one still holds a 64-slot block
    (~0.7 KiB), which 10,000 idle actors would keep for nothing.
    """

    __slots__ = ("items", "wake")

    def __init__(self, wake: Callable[[], None]) -> None:
        self.items: collections.deque[Any] = _EMPTY
        self.wake = wake

    def put(self, envelope: Any, /) -> None:
        if self.items is _EMPTY:
            self.items = collections.deque()
        self.items.append(envelope)
        self.wake()

    def get(self) -> Any:
        return self.items.popleft()

    def empty(self) -> bool:
        return not self.items

    def qsize(self) -> int:
        return len(self.items)

    def drained(self) -> None:
        """The drainer found it empty: give its block back."""
        if not self.items:
            self.items = _EMPTY


_STARTING = object()  # before start(): a put only queues, the first drainer runs on_start

# What pykka and a late sender still read of a stopped actor; the rest of its state is let go.
_KEPT_WHEN_STOPPED = ("actor_urn", "actor_inbox", "actor_stopped", "actor_ref", "_actor_ref", "_drainer")


def _nobody_drains() -> None:
    """A stopped actor's wake-up: what a late put leaves in its inbox is never handled, as in pykka."""


# Drainers with nothing to do, parked for the next actor that gets mail. Spawning a greenlet for
# every wake-up cost the stream 6-8 % (a wake-up per batch at each actor hop; a spawn is several
# times the cost of resuming a parked greenlet); a handful of parked ones serve every actor.
_PARKED: list[Waiter[Any]] = []
_KEEP_PARKED = 4


def _drain_for(actor: OnDemandActor | None) -> None:
    """A drainer's life: drain the actor it was given, then wait parked for the next one, or end."""
    while actor is not None:
        actor._drain()
        actor = None  # a parked drainer keeps no actor alive
        if len(_PARKED) >= _KEEP_PARKED:
            return
        waiter: Waiter[Any] = Waiter()
        _PARKED.append(waiter)
        actor = waiter.get()


class OnDemandActor(pykka.ThreadingActor):
    """A ``ThreadingActor`` (its futures, refs and registry) without a thread of its own while idle."""

    def __init__(self) -> None:
        super().__init__()
        self._drainer: Any = _STARTING
        self.actor_inbox = WakingInbox(self._wake)  # before the ref is made: it copies the inbox

    def _start_actor_loop(self) -> None:
        self._drainer = gevent.spawn(self._first_run)

    def _first_run(self) -> None:
        self._actor_loop_setup()
        self._drain()

    def _wake(self) -> None:
        if self._drainer is None:
            if _PARKED:  # resumed from the loop, as a spawned greenlet would start: never inside the put
                self._drainer = waiter = _PARKED.pop()
                gevent.get_hub().loop.run_callback(waiter.switch, self)
            else:
                self._drainer = gevent.spawn(_drain_for, self)

    def _drain(self) -> None:
        inbox: WakingInbox = self.actor_inbox  # type: ignore[assignment]
        stopped = self.actor_stopped
        try:
            while inbox.items and not stopped.is_set():  # (a put may have replaced the empty deque)
                self._handle_envelope(inbox.items.popleft())
        finally:
            self._drainer = None
            inbox.drained()
        if stopped.is_set():
            self._actor_loop_teardown()

    def _handle_envelope(self, envelope: Any) -> None:
        """pykka's loop body for one message: the answer or the failure to whoever asked."""
        try:
            response = self._handle_receive(envelope.message)
            if envelope.reply_to is not None:
                envelope.reply_to.set(response)
        except Exception:
            if envelope.reply_to is not None:
                log.info(f"Exception returned from {self} to caller:", exc_info=sys.exc_info())
                envelope.reply_to.set_exception()
            else:
                self._handle_failure(*sys.exc_info())
                try:
                    self.on_failure(*sys.exc_info())
                except Exception:
                    self._handle_failure(*sys.exc_info())
        except BaseException:
            log.debug(f"{sys.exc_info()[1]!r} in {self}. Stopping all actors.")
            self._stop()
            ActorRegistry.stop_all()

    def _actor_loop_teardown(self) -> None:
        items = self.actor_inbox.items  # type: ignore[attr-defined]
        while items:
            envelope = items.popleft()
            if envelope.reply_to is None:
                continue
            if isinstance(envelope.message, pykka_messages._ActorStop):
                envelope.reply_to.set(None)
            else:
                dead = ActorDeadError(f"{self.actor_ref} stopped before handling the message")
                envelope.reply_to.set_exception(exc_info=(ActorDeadError, dead, None))
        self._let_go()

    def _let_go(self) -> None:
        """Drop the stopped actor's state, so that reference counting frees it at once.

        An actor's state points back at it (its inbox's wake-up, the helpers that hold their
        Session, a Turn's cards): cycles that only the cyclic collector frees, and the bridge runs
        that collector seldom (``cli/runtime.tune_gc``). Sessions leaving memory by the thousand
        would otherwise wait, all of them, for the next full collection, and the heap they had
        grown would stay fragmented for good (docs/performance.md, "Idle sessions").
        """
        self.actor_inbox.wake = _nobody_drains  # type: ignore[attr-defined]
        state = vars(self)
        kept = {name: state[name] for name in _KEPT_WHEN_STOPPED if name in state}
        state.clear()
        state.update(kept)

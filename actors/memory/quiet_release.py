"""Giving memory back once a burst of work is over (docs/reliability.md, "What the remaining RSS is").

A burst (a storm of prompts, a long stream, a flood of bad frames) leaves freed
memory behind that no one returns by itself: cyclic garbage waits for the next
collection (the bridge's gen-0 threshold is high: ``cli/runtime.py``),
and glibc keeps freed heap pages. A watcher greenlet reads the process's CPU
time every ``interval`` seconds; when one interval used less than
``quiet_share`` of a core (the bridge has gone quiet) and at least
``burst_cpu`` CPU seconds were spent since the last release (there was a burst
to clean up after), it runs ``release`` once: a full collection and
``malloc_trim`` (~3-10 ms).

Nothing on the hot path: no counter to bump, one clock read per interval; a
busy bridge never releases, an idle one releases once and then only after the
next burst.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable
from typing import Any

import gevent

from zcode_acp.actors.memory import allocator as memory

log = logging.getLogger(__name__)

CHECK_INTERVAL = 1.0  # seconds between two readings of the CPU clock
QUIET_SHARE = 0.05  # an interval that used less than this share of a core is quiet
BURST_CPU = 0.5  # CPU seconds since the last release that make a release worth it


def release_memory() -> None:
    """A full collection, then glibc's ``malloc_trim``: freed heap pages go back to the OS (best effort)."""
    gc.collect()
    memory.trim()


class QuietRelease:
    """When to release: pure bookkeeping over a CPU clock (tested with a fake one)."""

    def __init__(self, release: Callable[[], None] = release_memory, clock: Callable[[], float] = time.process_time,
                 interval: float = CHECK_INTERVAL, quiet_share: float = QUIET_SHARE,
                 burst_cpu: float = BURST_CPU) -> None:
        self.release = release
        self.clock = clock
        self.interval = interval
        self.quiet_cpu = quiet_share * interval
        self.burst_cpu = burst_cpu
        self.last = clock()
        self.since_release = 0.0  # CPU seconds spent since the last release
        self._greenlet: Any = None

    def tick(self) -> bool:
        """One interval has passed: release if it was quiet after a burst. True if it released."""
        now = self.clock()
        used, self.last = now - self.last, now
        self.since_release += used
        if used >= self.quiet_cpu or self.since_release < self.burst_cpu:
            return False
        started = time.perf_counter()
        self.release()
        log.debug("quiet after %.1f CPU seconds of work: memory released in %.1f ms",
                  self.since_release, (time.perf_counter() - started) * 1000)
        self.last = self.clock()  # the release's own CPU is not the next burst
        self.since_release = 0.0
        return True

    def start(self) -> None:
        if self._greenlet is None:
            self._greenlet = gevent.spawn(self._watch)

    def stop(self) -> None:
        if self._greenlet is not None:
            self._greenlet.kill(block=False)
            self._greenlet = None

    def _watch(self) -> None:
        while True:
            gevent.sleep(self.interval)
            try:
                self.tick()
            except Exception:  # never let a failed release end the watcher
                log.exception("releasing memory failed")

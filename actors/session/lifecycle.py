"""The Session's lifecycle: an explicit state machine (docs/state-machines.md, "The Session lifecycle").

    PLACEHOLDER ──use──▶ MATERIALIZING ──created──▶ SUBSCRIBING ──subscribed──▶ LIVE
    LOST ───────use──▶ RESUMING ──────resumed──▶ SUBSCRIBING
    LIVE / SUBSCRIBING / RESUMING ──backend lost or evicted──▶ LOST
    LIVE ──a turn ignored its stop──▶ DETACHING ──close answered──▶ LOST (and resumed)
    any ──close──▶ CLOSED (final)

Every use (a prompt, a load, a setting) waits for LIVE; uses that arrive while
a create or resume is in flight wait for that same one, so there is one create
and one resume however many uses race. The class makes no calls itself: it
tells its owner which step to start, which keeps it testable without an actor.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

from zcode_acp.protocol.errors import INTERNAL_ERROR, RpcError, worded


class Phase(enum.Enum):
    PLACEHOLDER = "placeholder"  # no backend session yet (never used)
    MATERIALIZING = "materializing"  # session/create in flight
    LOST = "lost"  # a backend session exists, not live in this backend process
    DETACHING = "detaching"  # session/close in flight to end a turn that ignored its stop; then resumed
    RESUMING = "resuming"  # session/resume in flight
    SUBSCRIBING = "subscribing"  # created or resumed; session/subscribe in flight
    LIVE = "live"
    CLOSED = "closed"


class Step(enum.Enum):
    """What the owner must start for its waiters."""

    CREATE = "session/create"
    RESUME = "session/resume"


Action = Callable[[], None]
OnError = Callable[[RpcError], None]
ROUTED = frozenset({Phase.LIVE, Phase.SUBSCRIBING, Phase.RESUMING})  # the Backend may route to us


class Lifecycle:
    # Every live Session has one: slots, not a __dict__ (docs/performance.md, "Idle sessions").
    __slots__ = ("_waiters", "phase", "session_id", "subscribe_attempts")

    def __init__(self, session_id: str, materialized: bool) -> None:
        self.session_id = session_id
        self.phase = Phase.LOST if materialized else Phase.PLACEHOLDER
        self.subscribe_attempts = 0
        self._waiters: list[tuple[Action, OnError]] = []

    @property
    def live(self) -> bool:
        return self.phase is Phase.LIVE

    @property
    def closed(self) -> bool:
        return self.phase is Phase.CLOSED

    def closed_error(self) -> RpcError:
        return worded(INTERNAL_ERROR, "error.session_closed", None, session_id=self.session_id)

    def when_live(self, action: Action, on_error: OnError) -> Step | None:
        """Run ``action`` once live (now, if it is); returns the step to start, if any."""
        if self.phase is Phase.LIVE:
            action()
            return None
        if self.phase is Phase.CLOSED:
            on_error(self.closed_error())
            return None
        self._waiters.append((action, on_error))
        if self.phase is Phase.PLACEHOLDER:
            self.phase = Phase.MATERIALIZING
            return Step.CREATE
        if self.phase is Phase.LOST:
            self.phase = Phase.RESUMING
            return Step.RESUME
        return None  # a create, close, resume or subscribe is in flight: wait for it

    def step_failed(self, step: Step, error: RpcError) -> None:
        self.phase = Phase.PLACEHOLDER if step is Step.CREATE else Phase.LOST
        self.fail_waiters(error)

    def materialized(self) -> None:
        """Created or resumed: subscribe next."""
        self.phase = Phase.SUBSCRIBING
        self.subscribe_attempts = 0

    def subscribing(self) -> bool:
        return self.phase is Phase.SUBSCRIBING

    def subscribe_sent(self) -> None:
        self.subscribe_attempts += 1

    def subscribe_failed(self, error: RpcError) -> None:
        self.phase = Phase.LOST
        self.fail_waiters(error)

    def became_live(self) -> None:
        self.phase = Phase.LIVE
        waiters, self._waiters = self._waiters, []
        for action, _ in waiters:
            action()

    def lost(self) -> bool:
        """The backend session is no longer live here. True if a route was registered."""
        if self.phase in ROUTED:
            self.phase = Phase.LOST
            return True
        if self.phase is Phase.MATERIALIZING:
            self.phase = Phase.PLACEHOLDER
        return False

    def detaching(self) -> None:
        """The backend session is being closed (to end a turn that ignored its stop).

        Uses wait until the close is answered: a resume sent before it could be
        overtaken by the close, which would leave the session closed under a
        bridge that believes it live (the remote adversarial run found it).
        """
        self.phase = Phase.DETACHING

    def detached(self) -> None:
        """The close was answered (or failed): the session can be resumed."""
        if self.phase is Phase.DETACHING:
            self.phase = Phase.LOST

    def close(self) -> None:
        """Final. The owner fails the waiters once its turns have answered ``cancelled``."""
        self.phase = Phase.CLOSED

    def fail_waiters(self, error: RpcError) -> None:
        waiters, self._waiters = self._waiters, []
        for _, on_error in waiters:
            on_error(error)

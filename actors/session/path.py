"""The engine-path seam inside the Session (docs/architecture.md, "The Session's engine paths").

A Session speaks to its engine one of two ways: the legacy path (``session/*`` methods and
the ``seq``-ordered event stream, a Turn actor per prompt) or the v4 path (the conversation
topic's frames and ``v4/command``, ``ZCODE_ACP_ENGINE_API=v4``). The Session holds one
``EnginePath`` and calls it wherever the two differ; it never asks which one it holds.

The paths reach their Session only through ``SessionPort``: no private member, no message
handler, no actor state. What stays the Session's whichever path feeds it: the lifecycle
(one create, one resume), ``seq`` sequencing, preemption (one current Turn), the cards of
questions asked between turns and the card-reuse registry (docs/architecture.md, "One owner
per card").

Nothing here imports a path: ``paths.py`` picks one, importing only the chosen path's code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from zcode_acp.protocol.extension_calls import EngineCall
from zcode_acp.protocol.content import BackendPrompt
from zcode_acp.protocol.errors import RpcError

from zcode_acp.actors.messages import ErrorDict, Json, Ref, V4Expire, V4Resolve
from zcode_acp.actors.session.settings import Settings
from zcode_acp.config.settings import Config

if TYPE_CHECKING:  # the handlers' module names the paths' Controls, which name this seam
    from zcode_acp.actors.session.extensions.handler import ExtensionRequest, Handler

Then = Callable[[Any, ErrorDict | None], None]  # an engine answer: (result, error)
OnResult = Callable[[Any], None]
OnError = Callable[[Any], None]
Updates = list[dict[str, Any]]


class SessionPort(Protocol):
    """What a path may use of its Session (the Session actor implements it)."""

    # -- ids, settings, config ------------------------------------------------------------------

    @property
    def session_id(self) -> str: ...

    @property
    def backend_session_id(self) -> str | None: ...

    @property
    def cwd(self) -> str: ...

    @property
    def config(self) -> Config: ...

    @property
    def settings(self) -> Settings: ...

    def terminal_output(self) -> bool:
        """The clients render terminal output (a tool card may carry a terminal)."""
        ...

    def workspace_of(self, session: Json) -> dict[str, Any]: ...

    @property
    def capabilities(self) -> dict[str, Any]:
        """The session's clients' capabilities, merged (``session.notices``, AIR's ``sessionFailure``)."""
        ...

    # -- the engine ------------------------------------------------------------------------------

    def call(self, method: str, params: dict[str, Any], then: Then, timeout: float | None = None) -> None:
        """An engine call whose answer comes back to the Session as a message, in pipe order."""
        ...

    def request(self, method: str, params: dict[str, Any], on_result: OnResult, on_error: OnError,
                timeout: float | None = None) -> None:
        """An engine call for this session (``sessionId`` added; an eviction resumes and retries once)."""
        ...

    def when_live(self, action: Callable[[], None], on_error: Callable[[RpcError], None]) -> None: ...

    def lost(self) -> None:
        """The engine holds the session no more: the next use resumes it."""
        ...

    def close_and_resume(self) -> None:
        """A stopped turn runs on: close the engine session and resume it (the stop fallback)."""
        ...

    def answer_backend(self, generation: int, request_ids: list[Json], result: dict[str, Any]) -> None:
        """The engine's own request (a dialog) answered, to the process that asked."""
        ...

    def surface_seen(self, announce: bool, answer: dict[str, Any]) -> None:
        """A create-answer-shaped surface (catalog, slash commands) the engine showed."""
        ...

    # -- the clients, the Supervisor, the timers -------------------------------------------------

    def deliver(self, updates: Updates) -> None: ...

    def deliver_feed(self, updates: Updates) -> None:
        """What the v4 feed translated from the conversation's state: a snapshot replay covers it."""
        ...

    def titled(self, title: str) -> None:
        """The engine named the session: the hub's list and the notices use it."""
        ...

    def activity(self, busy: bool, outcome: str = "", answer: str = "") -> None:
        """The Supervisor's listing (and, with an ``outcome``, the webhook's turn notice)."""
        ...

    def remind(self, delay: float, message: V4Expire) -> None:
        """Tell the Session ``message`` after ``delay`` seconds (a timer message, never a wait)."""
        ...

    # -- the plan's quota (docs/quota.md) -------------------------------------------------------

    def quota_at_failure(self, then: Callable[[Any], None]) -> None:
        """A turn the plan's limit stopped: ``then(snapshot)`` once, with the QuotaWatch's snapshot (a
        QuotaSnapshot, or None: none known, or not within ``QUOTA_WAIT``), from a message to the Session."""
        ...

    def quota_told(self, meter: Any) -> None:
        """A turn's end named this used-up window (a Meter): it is not told again as a notice."""
        ...

    # -- what the Session owns whichever path feeds it -------------------------------------------

    def run_turn(self, conn: Ref, request_id: Json, prompt: BackendPrompt) -> None:
        """A Turn actor for the prompt; the latest prompt preempts the current one."""
        ...

    def sequence(self, events: list[dict[str, Any]], token: object) -> None:
        """Engine events into the Session's ``seq`` order (held until live)."""
        ...

    def compaction_holds_prompt(self) -> bool:
        """Our compaction runs: a prompt waits for it (the user reads why)."""
        ...

    def compaction_running(self) -> bool: ...

    def compaction_answer(self) -> dict[str, Any] | None:
        """The engine's answer to our running compaction (None: none runs, or it is not answered yet)."""
        ...

    def compaction_ended(self, reason: str) -> None: ...


class EnginePath(Protocol):
    """One way of speaking to the engine; the Session calls it where the two paths differ."""

    speaks_zcode_protocol: bool  # an engine known from the start to be 0.16+ (no removed method is called)
    resolves_dialogs: bool  # a dialog's first answer comes back to the Session (``V4Resolve``), not the Backend

    @property
    def busy(self) -> bool:
        """Something this path owes would be lost if the Session left memory now."""
        ...

    # -- making and subscribing the engine session -----------------------------------------------

    def create(self, cwd: str, mcp_servers: list[Any], done: Then) -> None:
        """Make the engine session; ``done`` gets the answer in ``session/create``'s shape."""
        ...

    def create_refused(self, error: ErrorDict | None) -> RpcError: ...

    def subscribe(self, done: Then) -> None:
        """Subscribe to what the engine says of the session; ``done`` once it is live."""
        ...

    # -- what the engine says ---------------------------------------------------------------------

    def events(self, events: list[dict[str, Any]], token: object) -> None:
        """The legacy event stream's events for this session."""
        ...

    def frames(self, frames: list[dict[str, Any]]) -> None:
        """The v4 data plane's frames for this session."""
        ...

    def expire(self, message: V4Expire) -> None: ...

    def resolve(self, message: V4Resolve) -> None:
        """A dialog's first answer (only on a path that ``resolves_dialogs``)."""
        ...

    # -- prompts, turns, cards --------------------------------------------------------------------

    def submit(self, conn: Ref, request_id: Json, prompt: BackendPrompt) -> None:
        """A prompt (not a slash command): answered once, by this path or the Turn it starts."""
        ...

    def cancel(self) -> None:
        """``session/cancel``: what this path runs itself stops (the Session cancels its Turn)."""
        ...

    def cancel_request(self, conn: Ref, request_id: Json, error: RpcError) -> bool:
        """``$/cancel_request`` of a prompt this path owes: True if it was one."""
        ...

    def turn_running(self) -> bool:
        """A turn runs in the engine that this path knows of (text can be steered into it)."""
        ...

    def declines_dialogs(self) -> bool:
        """A cancelled turn this path already answered still stops: what the engine asks meanwhile
        is declined, shown to nobody (a legacy Turn declines its own)."""
        ...

    def owns_card(self, card_id: str) -> bool:
        """The card is this path's (a dialog asked for it must not open a second one)."""
        ...

    def with_countdown(self, frame: dict[str, Any], tool_call: dict[str, Any]) -> dict[str, Any]:
        """A dialog's ``toolCall``, saying when the engine answers it by itself."""
        ...

    def compaction_over(self) -> None:
        """Our compaction is over: the prompts it held go on."""
        ...

    # -- extensions, settings, compaction, fork, rename -------------------------------------------

    def run_extension(self, handler: Handler[Any], call: Any, request: ExtensionRequest) -> None:
        """An extension method, its params validated (``call``): the handler's method for this path."""
        ...

    def set_setting(self, config_id: str, value: str, done: OnResult, fail: OnError) -> None:
        """A validated mode/model/thought change, once live; ``done`` with the engine's answer."""
        ...

    def compact(self, call: EngineCall, answered: OnResult, failed: OnError, timeout: float) -> None:
        """Ask the engine to compact (it may wait while a turn holds the session); not once live yet."""
        ...

    def fork(self, call: EngineCall, forked: OnResult, forked_unused: Callable[[], None],
             on_error: OnError) -> None:
        """Fork the session; ``forked`` gets ``{forkedSessionId}`` (or the legacy answer);
        ``forked_unused``: nothing was said in it yet, so the fork is a new session with its settings."""
        ...

    def rename(self, title: str, on_done: Callable[[], None], on_error: OnError) -> bool:
        """Rename through this path's own command: False if it has none (``Controls`` rename)."""
        ...

    # -- load, loss, the end ----------------------------------------------------------------------

    def replay(self) -> Updates | None:
        """What a ``session/load`` replays, or None: the Session reads the engine's history."""
        ...

    def lost(self, error: RpcError) -> None:
        """The engine process is gone: what this path owes fails with ``error``."""
        ...

    def leave_memory(self) -> None:
        """The Session leaves memory (idle): the engine may let go of the session too."""
        ...

    def close(self) -> None:
        """Teardown: what runs stops, what is owed answers ``cancelled``."""
        ...

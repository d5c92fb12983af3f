"""The Notifier: posts to the user's webhook when a turn needs them (docs/hub.md, "Notifications").

One actor owns the queue, the session titles it names notices by, the
per-session rate limit and whether the webhook is failing. Everything reaches
it by ``tell`` (the Supervisor: turns that ended, titles, the hub's instance
id; the InteractionRouter: dialogs; the Backend: its death), so nothing on the
streaming path ever waits for it.

The posts go out from one sender greenlet (actors/webhook_post.py: ``http.client``
over gevent's sockets and gevent's ssl, no redirects, a bounded answer, one
deadline per attempt), so a slow or unreachable webhook parks only that
greenlet, never the loop. The queue is bounded (``QUEUE_LIMIT``); a notice that
finds it full is dropped with one log line. Each post is tried
``ATTEMPTS`` times with an exponential backoff (tenacity); a webhook that
keeps failing is logged once, and once more when it works again.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import gevent
import gevent.queue
import tenacity

from zcode_acp.protocol import notifications as fmt
from zcode_acp.protocol.notifications import Notice, Post

from zcode_acp.actors.base import BridgeActor, handles, safe_tell
from zcode_acp.actors.messages import (
    BackendFailed,
    DialogWaiting,
    HubPageKnown,
    SessionOpened,
    SessionTitled,
    TurnFinished,
    WebhookDone,
)

log = logging.getLogger(__name__)

QUEUE_LIMIT = 32  # posts waiting for the sender; past that a notice is dropped
ATTEMPTS = 3
POST_TIMEOUT = 10.0  # seconds for one attempt (connect, send, answer)
BACKEND_KEY = "\0backend"  # the rate limit's key for backend failures (no session)


@dataclass(frozen=True)
class NotifySettings:
    url: str
    format: str = "json"
    after: float = 60.0  # a turn that ran at least this long is worth a nudge when it ends
    include_text: bool = False  # the prompt's and answer's text (and a dialog's card title)
    interval: float = 60.0  # at most one notice per session and kind this often
    page: str = ""  # the hub page's public address, for links
    lang: str = "en"  # of the notices' words (protocol/i18n)
    attempts: int = ATTEMPTS
    backoff: float = 1.0  # the first retry's wait; doubling
    timeout: float = POST_TIMEOUT


class Notifier(BridgeActor):
    gone_is_normal = True  # teardown may stop it while a notice is on its way

    def __init__(self, settings: NotifySettings) -> None:
        super().__init__()
        self.settings = settings
        self.titles: dict[str, str] = {}  # ACP session id → its title (named by it only with text opted in)
        self.folders: dict[str, str] = {}  # ACP session id → its folder (what names it otherwise)
        self.instance_id = ""  # the hub's name for this bridge, once registered
        self.last_sent: dict[tuple[str, str], float] = {}  # (session, kind) → when (monotonic)
        self.queue: gevent.queue.Queue[Post] = gevent.queue.Queue(QUEUE_LIMIT)
        self.failing = False  # the webhook's last post failed (logged once)
        self.dropped = False  # a notice was dropped on a full queue (logged once per burst)
        self.sender: Any = None

    def on_start(self) -> None:
        self.sender = gevent.spawn(self._send_loop)

    def on_stop(self) -> None:
        if self.sender is not None:
            self.sender.kill(block=False)  # pending posts go with the bridge

    # -- what happened ----------------------------------------------------------------------------

    @handles(SessionTitled)
    def on_titled(self, message: SessionTitled) -> None:
        self.titles[message.session_id] = message.title

    @handles(SessionOpened)
    def on_opened(self, message: SessionOpened) -> None:
        self.folders[message.session_id] = message.cwd

    @handles(HubPageKnown)
    def on_hub_page(self, message: HubPageKnown) -> None:
        self.instance_id = message.instance_id

    @handles(TurnFinished)
    def on_turn_finished(self, message: TurnFinished) -> None:
        if message.seconds < self.settings.after:
            return
        text = self.settings.include_text
        self._notify(Notice(fmt.TURN_ENDED, fmt.turn_summary(message.seconds, message.outcome, self.settings.lang),
                            **self._about(message.session_id),
                            prompt=message.prompt if text else "", answer=message.answer if text else ""))

    @handles(DialogWaiting)
    def on_dialog(self, message: DialogWaiting) -> None:
        what = message.what if self.settings.include_text else ""
        self._notify(Notice(fmt.DIALOG_WAITING, fmt.dialog_summary(message.kind, what, self.settings.lang),
                            **self._about(message.session_id)))

    @handles(BackendFailed)
    def on_backend_failed(self, message: BackendFailed) -> None:
        # Its last stderr line is the engine's, not the user's: it says why, so it goes along.
        self._notify(Notice(fmt.BACKEND_FAILED, fmt.backend_summary(message.reason, self.settings.lang)))

    def _about(self, session_id: str) -> dict[str, str]:
        # The title is the first words of the first prompt (or the model's summary of it): prompt
        # text, so it names the session only when text is opted in.
        title = self.titles.get(session_id, "") if self.settings.include_text else ""
        return {"lang": self.settings.lang, "session_id": session_id,
                "title": title or fmt.session_name(self.folders.get(session_id, ""), session_id),
                "link": fmt.session_link(self.settings.page, self.instance_id, session_id)}

    def _notify(self, notice: Notice) -> None:
        key = (notice.session_id or BACKEND_KEY, notice.kind)
        now = time.monotonic()
        last = self.last_sent.get(key)
        # A dialog waits for the user: each one is news, never swallowed by the rate limit (the
        # queue's bound still holds a flood).
        if notice.kind != fmt.DIALOG_WAITING and last is not None and now - last < self.settings.interval:
            log.debug("notification %s for %s skipped: one went out %.0fs ago", notice.kind, key[0], now - last)
            return
        self.last_sent[key] = now
        try:
            self.queue.put_nowait(fmt.render(notice, self.settings.format))
        except gevent.queue.Full:
            if not self.dropped:
                log.warning("notification dropped: %d are still waiting for the webhook", QUEUE_LIMIT)
            self.dropped = True
            return
        self.dropped = False

    # -- the sender (its own greenlet; it tells the actor how each post went) ---------------------

    def _send_loop(self) -> None:
        # Only a bridge with a webhook pays for http.client (docs/performance.md, "Start-up").
        from zcode_acp.actors.webhook_post import post

        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(max(1, self.settings.attempts)),
            wait=tenacity.wait_exponential(multiplier=self.settings.backoff, max=30),
            retry=tenacity.retry_if_exception(worth_retrying),
            reraise=True)
        while True:
            request = self.queue.get()
            try:
                retrying(post, self.settings.url, request, self.settings.timeout)
            except Exception as exc:  # whatever failed, the bridge goes on
                safe_tell(self.actor_ref, WebhookDone(False, describe(exc)))
            else:
                safe_tell(self.actor_ref, WebhookDone(True))

    @handles(WebhookDone)
    def on_done(self, message: WebhookDone) -> None:
        if not message.ok and not self.failing:
            log.warning("notification webhook failed after %d attempts: %s (logged once until it works again)",
                        self.settings.attempts, message.error)
        elif message.ok and self.failing:
            log.info("notification webhook works again")
        self.failing = not message.ok


def worth_retrying(exc: BaseException) -> bool:
    """A refused connection, a timeout or a 5xx/429 may pass; another 4xx, a redirect, a refused
    certificate or a bad URL will not (a wrong key, a bad body, a webhook that moved)."""
    import ssl

    from zcode_acp.actors.webhook_post import WebhookStatus

    if isinstance(exc, WebhookStatus):
        return exc.code >= 500 or exc.code == 429
    if isinstance(exc, (ssl.CertificateError, ValueError)):
        return False
    return isinstance(exc, OSError)  # TimeoutError, ConnectionError, http.client's bad answers are not


def describe(exc: BaseException) -> str:
    """Why a post failed, without the URL (a WeCom or DingTalk webhook's key is in it)."""
    return str(exc) or type(exc).__name__


def start_notifier(config: Any) -> Any:
    """The Notifier for ``config``'s webhook, started; None when no webhook is configured."""
    if not config.notify_url:
        return None
    return Notifier.start(NotifySettings(url=config.notify_url, format=config.notify_format,
                                         after=config.notify_after, include_text=config.notify_text,
                                         interval=config.notify_interval, page=config.notify_page,
                                         lang=getattr(config, "lang", "en")))

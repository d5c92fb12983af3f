"""The QuotaWatch: the GLM Coding Plan's quota, read from the provider and kept (docs/quota.md).

One actor owns the key, the last snapshot and the reads. Everything reaches it by ``tell``: the
Supervisor asks for a refresh when a session opens or a turn ends, and hands it a client's
``quota/read``; it answers that client itself and tells the Supervisor when the snapshot changed
(``QuotaChanged``), which tells the sessions. Nothing on the streaming path waits for it.

* **The key** is looked up once, in a greenlet (two small file reads: config/coding_plan.py). No key:
  one log line, and the watch reads nothing. A key the provider refuses, or one without a Coding
  Plan: one log line, and no more reads until a client's ``quota/read`` looks the key up again
  (the user may have run ``zcode-acp setup`` since).
* **Reads** go out from their own greenlet (net/quota_client.py: verified TLS, no redirect, a
  bounded answer, one 10 s deadline), one at a time, at most once per ``MIN_INTERVAL``: a refresh
  asked for sooner is done when the interval ends, so the last turn's end is never missed.
  Without a session or a turn, nothing is read at all.
* ``quota/read`` is answered from the last snapshot when it is younger than ``MIN_INTERVAL``,
  else after a read; with no key, ``{pools: []}`` (the RFD's answer for an agent with no quota data
  for the account); a failed read is ``-32603`` with the reason.
"""

from __future__ import annotations

import logging
import os
import time
from datetime import datetime, UTC
from pathlib import Path
from typing import Any
from collections.abc import Callable

import gevent

from zcode_acp.actors.base import BridgeActor, handles, safe_tell
from zcode_acp.actors.messages import (QuotaAtFailure, QuotaChanged, QuotaFetched, QuotaForFailure, QuotaKeyFound,
                                      ReadQuota, RefreshQuota, Reply)
from zcode_acp.config.coding_plan import PlanKeyLookup, find_plan_key
from zcode_acp.protocol import errors
from zcode_acp.protocol.i18n import EN, t
from zcode_acp.protocol.quota import QuotaSnapshot, QuotaUnavailable, crossed, snapshot_json

log = logging.getLogger(__name__)

MIN_INTERVAL = 60.0  # seconds between two reads: the provider's figures move in minutes, not seconds
DEAD_KEY_REASONS = ("quota.error.key_refused", "quota.error.no_plan")


def fetcher(url: str) -> Callable[[Any], QuotaSnapshot]:
    """Reads with ``key`` from ``url`` (``ZCODE_ACP_QUOTA_URL``), else from the key's provider."""
    def fetch(key: Any) -> QuotaSnapshot:
        from zcode_acp.net.quota_client import fetch_quota  # gevent's ssl: only a bridge with a key pays

        return fetch_quota(key.provider, key.api_key, url=url or None)
    return fetch


def start_quota_watch(supervisor: Any, config: Any) -> Any:
    """The QuotaWatch for ``config``: with ``ZCODE_ACP_QUOTA=0`` it knows no key and reads nothing."""
    find_key = None if config.quota_enabled else (lambda: PlanKeyLookup(None))
    return QuotaWatch.start(supervisor, config.zcode_home, find_key=find_key, fetch=fetcher(config.quota_url))


class QuotaWatch(BridgeActor):
    def __init__(self, supervisor: Any, zcode_home: Path,
                 find_key: Callable[[], PlanKeyLookup] | None = None,
                 fetch: Callable[[Any], QuotaSnapshot] | None = None,
                 min_interval: float = MIN_INTERVAL) -> None:
        super().__init__()
        self.supervisor = supervisor
        self.find_key = find_key or (lambda: find_plan_key(os.environ, Path.home(), zcode_home))
        self.fetch = fetch or fetcher("")
        self.min_interval = min_interval
        self.key: Any = None
        self.key_known = False  # the lookup has answered (key or not)
        self.key_dead = False  # the provider refused it, or it has no plan: read nothing more
        self.snapshot: QuotaSnapshot | None = None
        self.read_at = float("-inf")  # monotonic time of the last read's start
        self.reading = False
        self.refresh_due = False  # a refresh was asked for while reading or too soon
        self.trailing: Any = None  # the greenlet that does a refresh asked for too soon
        self.readers: list[ReadQuota] = []  # quota/read requests waiting for the read under way
        self.failures: list[QuotaAtFailure] = []  # turns the limit stopped, waiting for a fresh snapshot

    def on_start(self) -> None:
        self._look_up_key()

    def on_stop(self) -> None:
        if self.trailing is not None:
            self.trailing.kill(block=False)
        for reader in self.readers:
            self._answer_error(reader, "error.shutting_down", "")  # not the provider's failure: ours
        self.readers.clear()
        self._answer_failures(None)

    def _look_up_key(self) -> None:
        def look() -> None:
            try:
                found = self.find_key()
                safe_tell(self.actor_ref, QuotaKeyFound(found.key, found.warnings))
            except Exception:
                log.exception("looking up the Coding Plan key failed")
                safe_tell(self.actor_ref, QuotaKeyFound(None))
        gevent.spawn(look)

    @handles(QuotaKeyFound)
    def on_key_found(self, message: QuotaKeyFound) -> None:
        for warning in message.warnings:
            log.warning("%s", warning)
        changed = (self.key is None) != (message.key is None) or (
            message.key is not None and self.key is not None and message.key.api_key != self.key.api_key)
        self.key, self.key_known = message.key, True
        if changed:
            self.key_dead = False
        if self.key is None:
            log.info("quota: no GLM Coding Plan key (zcode-acp setup adds one); the quota is not read")
        else:
            log.info("quota: reading the GLM Coding Plan's quota from %s (key from %s)", self.key.provider,
                     "zcode-acp setup" if self.key.source == "setup" else "the engine's provider configuration")
        if self.readers or self.failures or self.refresh_due:
            self._refresh(force=bool(self.readers or self.failures))

    @handles(RefreshQuota)
    def on_refresh(self, message: RefreshQuota) -> None:
        self._refresh(force=False)

    @handles(ReadQuota)
    def on_read(self, message: ReadQuota) -> None:
        if self.snapshot is not None and time.monotonic() - self.read_at < self.min_interval:
            message.conn.tell(Reply(message.request_id, snapshot_json(self.snapshot, message.lang)))
            return
        if self.key_known and (self.key is None or self.key_dead):
            # Asked for by the user: the key may be new (zcode-acp setup), so look again first.
            self.readers.append(message)
            self.key_known = False
            self._look_up_key()
            return
        self.readers.append(message)
        if self.key_known and not self.reading:  # a read under way answers it too
            self._refresh(force=True)

    @handles(QuotaAtFailure)
    def on_turn_failure(self, message: QuotaAtFailure) -> None:
        """A turn the limit stopped: the snapshot now when it is fresh, else after a read (one under way
        answers it too). Without a key, at once with whatever is known."""
        if self.snapshot is not None and time.monotonic() - self.read_at < self.min_interval:
            safe_tell(message.reply_to, QuotaForFailure(message.key, self.snapshot))
            return
        if self.key_known and (self.key is None or self.key_dead):
            safe_tell(message.reply_to, QuotaForFailure(message.key, self.snapshot))
            return
        self.failures.append(message)
        if not self.reading:
            self._refresh(force=True)

    def _answer_failures(self, snapshot: QuotaSnapshot | None) -> None:
        failures, self.failures = self.failures, []
        for failure in failures:
            safe_tell(failure.reply_to, QuotaForFailure(failure.key, snapshot))

    def _refresh(self, force: bool) -> None:
        if not self.key_known:
            self.refresh_due = True  # done once the key is known
            return
        if self.key is None or self.key_dead:
            self.refresh_due = False
            self._answer_readers_without_data()
            return
        if self.reading:
            self.refresh_due = True
            return
        wait = self.read_at + self.min_interval - time.monotonic()
        if wait > 0 and not force:
            self.refresh_due = True
            if self.trailing is None:
                self.trailing = gevent.spawn_later(wait, lambda: safe_tell(self.actor_ref, RefreshQuota()))
            return
        self.refresh_due = False
        if self.trailing is not None:
            self.trailing.kill(block=False)
            self.trailing = None
        self.reading, self.read_at = True, time.monotonic()
        key, fetch = self.key, self.fetch

        def read() -> None:
            try:
                safe_tell(self.actor_ref, QuotaFetched(snapshot=fetch(key)))
            except QuotaUnavailable as exc:
                safe_tell(self.actor_ref, QuotaFetched(reason=exc.reason, detail=exc.detail))
            except Exception as exc:
                log.exception("reading the quota failed")
                safe_tell(self.actor_ref, QuotaFetched(reason="quota.error.network", detail=type(exc).__name__))
        gevent.spawn(read)

    @handles(QuotaFetched)
    def on_fetched(self, message: QuotaFetched) -> None:
        self.reading = False
        readers, self.readers = self.readers, []
        if message.snapshot is None:
            if message.reason in DEAD_KEY_REASONS:
                self.key_dead = True
            log.info("quota: not read (%s)", t(EN, message.reason, detail=message.detail))
            for reader in readers:
                if message.reason in DEAD_KEY_REASONS:
                    reader.conn.tell(Reply(reader.request_id, empty_snapshot()))
                else:
                    self._answer_error(reader, message.reason, message.detail)
        else:
            before, self.snapshot = self.snapshot, message.snapshot
            if before is None or before.meters != message.snapshot.meters:
                self.supervisor.tell(QuotaChanged(message.snapshot, tuple(crossed(before, message.snapshot))))
            for reader in readers:
                reader.conn.tell(Reply(reader.request_id, snapshot_json(message.snapshot, reader.lang)))
        self._answer_failures(self.snapshot)  # a failed read: the last snapshot, old as it is
        if self.refresh_due:
            self._refresh(force=False)

    def _answer_readers_without_data(self) -> None:
        self._answer_failures(self.snapshot)
        readers, self.readers = self.readers, []
        for reader in readers:
            reader.conn.tell(Reply(reader.request_id, empty_snapshot()))

    def _answer_error(self, reader: ReadQuota, reason: str, detail: str) -> None:
        error = errors.internal(t(reader.lang, reason, detail=detail))
        safe_tell(reader.conn, Reply(reader.request_id, None, error.to_dict()))


def empty_snapshot() -> dict[str, Any]:
    """The RFD's answer when the agent has no quota data for this account."""
    return {"updatedAt": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "pools": []}

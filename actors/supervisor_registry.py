"""The Supervisor's lower layer: the tree's lifecycle and its registry of sessions.

It starts the tree in order (Backend, router, notifier) and tears it down in reverse; owns the
attached clients and their merged capabilities, the Sessions (live actors, and the ``Dormant``
records of those not in memory: never used, or idle), their listing and activity, the remembered
model catalog. ``supervisor.py`` builds the ACP request handling on top of it."""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import Any
from collections.abc import Callable

import gevent

from zcode_acp.protocol.handshake import (
    merge_capabilities,
)
from zcode_acp.protocol import model_catalog
from zcode_acp.protocol.first_session import new_session_settings
from zcode_acp.protocol.display_text import shown_title
from zcode_acp.protocol.session_config import SessionSettings

from zcode_acp import version
from zcode_acp.actors.backend import Backend
from zcode_acp.actors.base import BridgeActor, handles, safe_tell
from zcode_acp.config.settings import Config
from zcode_acp.actors.client_connection import ClientConnection
from zcode_acp.actors.dormant_records import DormantRecords
from zcode_acp.actors.interaction_router import InteractionRouter
from zcode_acp.actors.lazy_store import LazySessionStore
from zcode_acp.actors.model_catalog import CatalogFile
from zcode_acp.actors.memory.quiet_release import QuietRelease, release_memory
from zcode_acp.actors.messages import (
    GoDormant,
    SessionIdle,
    AttachClient,
    ClientBacklog,
    ClientClosed,
    ClientsChanged,
    CloseConnection,
    DeclineAll,
    ListSessions,
    CatalogLoaded,
    CatalogSeen,
    Materialized,
    Occupancy,
    HubPageKnown,
    QuotaNews,
    RefreshQuota,
    SessionActivity,
    SessionTitled,
    SessionOpened,
    Shutdown,
    Teardown,
    TerminateBackend,
    Throttle,
    TurnFinished,
)

log = logging.getLogger(__name__)


def session_actor() -> Any:
    """The Session actor class, imported when the first Session starts (its first use, a load, a resume).

    A ``session/new`` makes a record, not an actor (``Supervisor._new_session``), so the first one
    needs none of the Session's layers, its Turn, translator and parts: importing them with the
    runtime cost that answer ~15 % of its CPU (docs/performance.md, "Time to a first session").
    ``warm_session_actor`` imports them right after that answer, before the first prompt needs them.
    """
    from zcode_acp.actors.session import Session

    return Session


def warm_session_actor() -> None:
    """Import the Session's code off the answer's path: at the loop's next turn (a timer), after
    the greenlets this turn wakes, among them the client connection that writes the answer."""
    if "zcode_acp.actors.session.actor" not in sys.modules:
        gevent.spawn_later(0, session_actor)


# How long the first session/new waits for the remembered model catalog (a small local file).
CATALOG_READ_WAIT = 1.0
# How long a teardown waits for creates in flight to answer (a sim's or engine's create takes ~10 ms).
CREATE_SETTLE = 2.0


class SessionRegistry(BridgeActor):
    def __init__(self, config: Config, on_exit: Callable[[], None], root: str | None = None) -> None:
        super().__init__()
        self.config = config
        self.on_exit = on_exit
        # ``zcode-acp serve`` pins every session to its project directory (docs/service.md).
        self.root = os.path.normpath(root) if root else None
        self.backend: Any = None
        self.router: Any = None
        self.notifier: Any = None  # actors/notifier.py, when a webhook is configured
        self.quota: Any = None  # actors/quota.py: the Coding Plan's quota (reads nothing without a key)
        # The alerts of the last snapshot (a window past 80/95 % or used up), by (meter, level, reset), and
        # which of them each session was told: each used session hears each once, after a turn's end.
        self.quota_alerts: dict[tuple[str, float, str], str] = {}
        self.quota_told: dict[str, set[tuple[str, float, str]]] = {}
        self.quota_document: dict[str, Any] = {}  # the last snapshot, as quota_update/quota/read carry it
        self.quota_document_told: dict[str, str] = {}  # session id → the updatedAt it last got
        self.clients: list[Any] = []
        self.primary: Any = None
        self.capabilities: dict[str, Any] = {}  # merged over the clients attached now
        self.client_capabilities: dict[str, dict[str, Any]] = {}  # conn urn → what it declared
        self.sessions: dict[str, Any] = {}
        self.backend_ids: dict[str, str] = {}  # ACP session id → backend session id
        self.trim_pending = False
        self.quiet_release = QuietRelease()  # memory back to the OS once a burst is over
        # Sessions that are not actors now, started on their next use: the never used ones (straight
        # from session/new) and the idle ones that left memory (docs/performance.md, "Idle sessions").
        self.dormant = DormantRecords()
        self.activity: dict[str, dict[str, Any]] = {}  # ACP session id → {updatedAt, status, title}
        self.version = version()
        self.shutting_down = False
        self.store = LazySessionStore(config.zcode_home)
        self.catalog_file = CatalogFile(config.zcode_home)
        self.catalog: dict[str, Any] | None = None  # the engine's model catalog, remembered between runs
        self.catalog_loaded = False  # the file was read (or given up on): session/new answers from then on
        self.catalog_asked = False  # a session was made in the engine at once to learn the catalog (once a run)
        self.index_watches: dict[str, Any] = {}  # cwd → its sessions-index watch (the v4 path's session/list)
        self.waiting_new: list[tuple[Any, Any, tuple[str, list[Any], str | None]]] = []  # session/new that came before it
        self.waiting_attach: list[tuple[Any, Any, dict[str, Any], bool]] = []  # load/resume that came before it

    def on_stop(self) -> None:
        self.quiet_release.stop()
        if self.quota is not None:  # started after the first answer (a timer): stopped with its owner
            self.quota.stop(block=False)

    def on_start(self) -> None:
        # Started in order, stopped in reverse (teardown).
        self.store.prepare()
        if self.catalog_loaded:  # the stdio path's early answer read it already
            self.catalog_file.tidy()
        else:
            self.catalog_file.load(lambda catalog: self.actor_ref.tell(CatalogLoaded(catalog)))
            # A disk that does not answer must not hold session/new: past this, it answers without the catalog.
            gevent.spawn_later(CATALOG_READ_WAIT, lambda: safe_tell(self.actor_ref, CatalogLoaded(None)))
        if self.config.notify_url:  # the webhook's actor, its formats and tenacity: imported only when one is set
            from zcode_acp.actors.notifier import start_notifier

            self.notifier = start_notifier(self.config)
        self.backend = Backend.start(self.config, self.notifier)
        self.router = InteractionRouter.start(self.backend, self.config.interaction_timeout, self.notifier,
                                              self.config.lang, self.config.dialog_grace)
        self.quiet_release.start()

    # -- clients ---------------------------------------------------------------------------

    @handles(AttachClient)
    def on_attach_client(self, message: AttachClient) -> Any:
        conn = ClientConnection.start(self.actor_ref, message.transport, every_session=message.primary,
                                      lang=self.config.lang)
        self.clients.append(conn)
        if message.primary:
            self.primary = conn
        self._clients_changed()
        return conn

    def _joined(self) -> list[Any]:
        """The clients that get updates and dialogs: the editor, and each remote client once it
        has sent its own ``initialize`` (docs/remote.md; until then it is attached, not joined)."""
        return [conn for conn in self.clients if conn is self.primary or conn.actor_urn in self.client_capabilities]

    def _clients_changed(self) -> None:
        """Capabilities are recomputed from the clients joined *now* (a client that left
        takes its capabilities with it)."""
        merged: dict[str, Any] = {}
        for capabilities in self.client_capabilities.values():
            merged = merge_capabilities(merged, capabilities)
        self.capabilities = merged
        message = ClientsChanged(self._joined(), merged, dict(self.client_capabilities))
        self.router.tell(message)
        for session in self.sessions.values():
            session.tell(message)

    @handles(ClientBacklog)
    def on_client_backlog(self, message: ClientBacklog) -> None:
        """A client reads slower than the backend writes: pause reading the backend meanwhile."""
        self.backend.tell(Throttle(message.conn.actor_urn, message.backlogged))

    @handles(ClientClosed)
    def on_client_closed(self, message: ClientClosed) -> None:
        if message.conn == self.primary:
            self._teardown("the editor closed the connection")
            return
        if message.conn in self.clients:
            self.backend.tell(Throttle(message.conn.actor_urn, False))
            self.clients.remove(message.conn)
            self.client_capabilities.pop(message.conn.actor_urn, None)
            message.conn.stop(block=False)
            log.info("a remote client left (%d client(s) attached)", len(self.clients))
            self._clients_changed()

    def _new_settings(self) -> SessionSettings:
        return new_session_settings(self.config.default_mode, self.capabilities, self.config.lang,
                                    self.config.engine_api, self.catalog)

    def _spawn(self, session_id: str, cwd: str, mcp_servers: list[Any], backend_session_id: str | None = None,
               root_known: bool = True, settings: SessionSettings | None = None) -> tuple[Any, SessionSettings]:
        settings = settings or self._new_settings()
        ref = session_actor().start(
            session_id=session_id,
            cwd=cwd,
            mcp_servers=mcp_servers,
            settings=settings,
            backend=self.backend,
            router=self.router,
            supervisor=self.actor_ref,
            clients=self._joined(),
            capabilities=self.capabilities,
            config=self.config,
            backend_session_id=backend_session_id,
            root_known=root_known,
        )
        self.sessions[session_id] = ref
        safe_tell(self.notifier, SessionOpened(session_id, cwd))
        if backend_session_id:
            self.backend_ids[session_id] = backend_session_id
        return ref, settings

    # -- idle Sessions (docs/performance.md, "Idle sessions") -----------------------------------

    def _revive(self, session_id: str) -> Any:
        """The live Session, started again (lost: it resumes on use) if it had gone dormant; or None."""
        session = self.sessions.get(session_id)
        if session is None and session_id in self.dormant:
            record = self.dormant.pop(session_id)
            if record.updated_at:  # what the listings showed of it while it was out of memory
                entry = self.activity.setdefault(session_id, {})
                entry.setdefault("updatedAt", record.updated_at)
                if record.title:
                    entry.setdefault("title", record.title)
            settings = record.settings
            if not model_catalog.known(settings):  # made before the catalog was known: offer it now
                settings = model_catalog.seeded(settings, self.catalog)
            session, _ = self._spawn(session_id, record.cwd, list(record.mcp_servers), record.backend_session_id,
                                     root_known=record.root_known, settings=settings)
        return session

    @handles(SessionIdle)
    def on_session_idle(self, message: SessionIdle) -> None:
        session: Any = self.sessions.get(message.session_id)
        if session is None or self.shutting_down:
            return
        try:  # in mailbox order after anything we forwarded to it: it refuses if that made it busy
            record = session.ask(GoDormant(), timeout=1.0)
        except Exception:
            return
        if record is None or message.session_id not in self.sessions:
            return
        del self.sessions[message.session_id]
        # Its activity entry goes into the record: ~0.25 KiB less for each session out of memory.
        self.dormant.keep(message.session_id, record, self.activity.pop(message.session_id, None))
        session.stop(block=False)
        log.debug("session %s left memory (idle)", message.session_id)
        if not self.trim_pending:  # once per wave of departures: give freed pages back to the OS
            self.trim_pending = True
            gevent.spawn_later(2.0, self._trim)

    def _trim(self) -> None:
        self.trim_pending = False
        release_memory()

    @handles(SessionActivity)
    def on_session_activity(self, message: SessionActivity) -> None:
        if message.session_id not in self.sessions:
            return
        entry = self.activity.setdefault(message.session_id, {})
        status = "running" if message.running else "idle"
        if entry.get("status", "idle") != status:
            log.info("session=%s turn %s", message.session_id, "started" if message.running else "ended")
        now = int(time.time() * 1000)
        if message.running and entry.get("status", "idle") != "running":
            entry["startedAt"] = now
        elif not message.running and entry.get("status") == "running":
            self._turn_ended(message, entry, now)
        entry["updatedAt"] = now
        entry["status"] = "running" if message.running else "idle"
        if message.title:
            entry["title"] = message.title
            safe_tell(self.notifier, SessionTitled(message.session_id, message.title))

    def _turn_ended(self, message: SessionActivity, entry: dict[str, Any], now: int) -> None:
        if self.notifier is not None:
            self.notifier.tell(TurnFinished(message.session_id, (now - entry.get("startedAt", now)) / 1000,
                                            message.outcome, entry.get("prompt", ""), message.answer))
        self._quota_watch().tell(RefreshQuota())  # the turn spent some of the plan
        self._tell_quota(message.session_id, alerts_too=True)

    def _quota_watch(self) -> Any:
        """The QuotaWatch, started at its first use (a session/new, a quota/read): not on the path to
        the first session's answer (docs/performance.md)."""
        if self.quota is None:
            from zcode_acp.actors.quota import start_quota_watch

            self.quota = start_quota_watch(self.actor_ref, self.config)
        return self.quota

    def _tell_quota(self, session_id: str, alerts_too: bool) -> None:
        """What ``session_id`` was not told yet: the last snapshot (for clients reading quota_update),
        and, when its turn is over (never glued to an answer), the alerts."""
        session = self.sessions.get(session_id)
        if session is None:
            return
        document = self.quota_document
        if document and self.quota_document_told.get(session_id) == document.get("updatedAt"):
            document = {}
        told = self.quota_told.setdefault(session_id, set())
        untold = [key for key in self.quota_alerts if key not in told] if alerts_too else []
        if not (document or untold):
            return
        told.update(untold)
        if document:
            self.quota_document_told[session_id] = document["updatedAt"]
        from zcode_acp.protocol.quota import wants_quota_updates

        quota_clients = frozenset(urn for urn, declared in self.client_capabilities.items()
                                  if wants_quota_updates(declared))
        session.tell(QuotaNews(document, quota_clients, tuple(self.quota_alerts[key] for key in untold)))

    @handles(HubPageKnown)
    def on_hub_page_known(self, message: HubPageKnown) -> None:
        safe_tell(self.notifier, message)

    @handles(ListSessions)
    def on_list_sessions(self, message: ListSessions) -> list[dict[str, Any]]:
        """The live sessions, by the ids editors know (for the hub's instance listing); an archived
        one is left out, as it is from the default ``session/list`` (the phone page archives)."""
        listed = []
        for session_id in self.sessions:
            if self._archived(session_id):
                continue
            entry = self.activity.get(session_id, {})
            listed.append(_listed(session_id, entry.get("updatedAt", 0), entry.get("status", "idle"),
                                  entry.get("title")))
        for session_id, record in self.dormant.items():
            if not self._archived(session_id):
                listed.append(_listed(session_id, record.updated_at, "idle", record.title))
        return listed

    def _archived(self, session_id: str) -> bool:
        return (self.store.get(session_id) or {}).get("archived") is True

    @handles(Occupancy)
    def on_occupancy(self, message: Occupancy) -> tuple[int, int]:
        """How many clients are attached and how many turns run (an idle ``serve`` exits)."""
        running = sum(1 for session_id, entry in self.activity.items()
                      if session_id in self.sessions and entry.get("status") == "running")
        return len(self.clients), running

    @handles(CatalogSeen)
    def on_catalog_seen(self, message: CatalogSeen) -> None:
        # A create/resume lists the whole catalog: it replaces the remembered one (a model the engine
        # dropped is not offered to the next run's first session/new).
        catalog = message.catalog
        if catalog != self.catalog:
            self.catalog = catalog
            self.catalog_file.save(catalog)

    @handles(Materialized)
    def on_materialized(self, message: Materialized) -> None:
        self.backend_ids[message.session_id] = message.backend_session_id
        entry = self.store.get(message.session_id)
        if entry is not None:
            self.store.record(message.session_id, entry["cwd"], message.backend_session_id)

    # -- teardown --------------------------------------------------------------------------------

    @handles(Shutdown)
    def on_shutdown(self, message: Shutdown) -> None:
        self._teardown(message.reason)

    def _teardown(self, reason: str) -> None:
        """Once, in order, each step bounded (docs/state-machines.md, "Teardown")."""
        if self.shutting_down:
            return
        self.shutting_down = True
        self.quiet_release.stop()
        log.info("tearing down: %s", reason)
        futures = {session_id: session.ask(Teardown(), block=False) for session_id, session in self.sessions.items()}
        deadline = time.monotonic() + 1.0  # one second for all of them, not one each
        creating: dict[str, Any] = {}
        for session_id, future in futures.items():
            try:
                settled = future.get(timeout=max(0.0, deadline - time.monotonic()))
            except Exception:
                continue
            if settled is not None:
                creating[session_id] = settled
        self._keep_created(creating)
        try:  # every open question gets its decline before the backend goes
            self.router.ask(DeclineAll("the editor disconnected"), timeout=1.0)
        except Exception:
            log.exception("declining open interactions failed")
        for conn in self.clients:
            if conn != self.primary:
                safe_tell(conn, CloseConnection())
        try:
            self.backend.ask(TerminateBackend(self.config.kill_grace), timeout=2 * self.config.kill_grace + 1)
        except Exception:
            log.exception("backend termination failed")
        self.store.flush(1.0)  # what was recorded reaches the disk (bounded)
        self.catalog_file.flush(1.0)
        for actor in [*self.sessions.values(), *self.index_watches.values(), *self.clients, self.router, self.backend,
                      *([self.quota] if self.quota is not None else [])]:
            actor.stop(block=False)
        if self.notifier is not None:
            self.notifier.stop(block=False)
        self.sessions.clear()
        gevent.spawn(self.on_exit)


    def _keep_created(self, creating: dict[str, Any]) -> None:
        """The engine's id of each session whose create was in flight at teardown, once answered
        (bounded; the backend is still up): stored, so that the next run resumes that session, with
        the model catalog the answer lists.
        Dropped, the engine's session would be orphaned and the next run would make a second one
        (a first run, which makes its session at once to learn the models, often ends this way)."""
        deadline = time.monotonic() + CREATE_SETTLE
        for session_id, settled in creating.items():
            try:
                created = settled.get(timeout=max(0.0, deadline - time.monotonic()))
            except gevent.Timeout:
                log.info("session=%s: its create did not answer before the teardown went on", session_id)
                continue
            if created is not None:
                backend_id, catalog = created
                self.on_materialized(Materialized(session_id, backend_id))
                if catalog is not None:
                    self.on_catalog_seen(CatalogSeen(catalog))


def _listed(session_id: str, updated_at: int, status: str, title: str | None) -> dict[str, Any]:
    item: dict[str, Any] = {"sessionId": session_id, "updatedAt": updated_at, "status": status}
    if title:
        item["title"] = shown_title(title)
    return item

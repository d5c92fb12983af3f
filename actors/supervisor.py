"""Supervisor: the root of the actor tree.

Owns the tree's lifecycle (it starts the Backend, the client connections and
the Sessions, and it alone stops them), the map ACP session id → Session
actor, the merged capabilities of the attached clients, and teardown.

Every ACP request enters here. The Supervisor validates what it can answer
without the backend (``initialize``, ``session/new``: never a backend call),
and hands session work to the owning Session actor, which answers the client
itself. Anything a handler raises becomes the JSON-RPC error of that request.

Its lower layer, ``supervisor_registry.py`` (``SessionRegistry``), holds the tree's lifecycle,
the clients and the sessions; this file is the ACP side: every client request and what it does.
"""

from __future__ import annotations

import functools
import logging
import os
import uuid
from datetime import datetime, UTC
from typing import Any
from collections.abc import Callable


import gevent

from zcode_acp.protocol import commands, errors, updates
from zcode_acp.protocol.content import convert_prompt, echo_text
from zcode_acp.protocol.errors import RpcError, invalid_params
from zcode_acp.protocol.i18n import t
from zcode_acp.protocol.handshake import (
    authenticate_result,
    initialize_result,
    logout_unsupported,
    merge_capabilities,
)
from zcode_acp.protocol.first_session import new_session_result, one_workspace_root, workspace_root
from zcode_acp.protocol.mcp_servers import normalize_mcp_servers
from zcode_acp.protocol.session_config import session_state, validate_config_value, validate_mode
from zcode_acp.protocol import lazy_sessions
from zcode_acp.protocol.sessions import list_sessions, without_deleted

from zcode_acp.actors.client_connection import id_key
from zcode_acp.actors.base import handles, safe_tell
from zcode_acp.config.settings import Config
from zcode_acp.actors.messages import (
    Answered,
    AnnounceLater,
    Dormant,
    Announce,
    LearnCatalog,
    Attach,
    BackendCall,
    CancelPromptRequest,
    CancelTurn,
    ClientFrame,
    ClientRequestCancelled,
    Deliver,
    Extension,
    Forget,
    Forked,
    Listed,
    CatalogLoaded,
    Prompt,
    QuotaAtFailure,
    QuotaChanged,
    QuotaToldAtTurnEnd,
    ReadQuota,
    RefreshQuota,
    Reply,
    SetSetting,
    Teardown,
    TitleKept,
)
from zcode_acp.actors import project_files
from zcode_acp.actors.transport import flow

from zcode_acp.actors.air_index import AirSessionIndex
from zcode_acp.actors.supervisor_registry import SessionRegistry, warm_session_actor

log = logging.getLogger(__name__)
# How long the first session/new waits for the remembered model catalog (a small local file).


def _params(frame: dict[str, Any]) -> dict[str, Any]:
    params = frame.get("params")
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise invalid_params("params", "invalid.must_be_object")
    return params


def _session_id(params: dict[str, Any]) -> str:
    session_id = params.get("sessionId")
    if not isinstance(session_id, str) or not session_id:
        raise invalid_params("sessionId", "invalid.must_be_nonempty_string")
    return session_id


def _no_additional_directories(params: dict[str, Any]) -> None:
    one_workspace_root(params)


def _mcp_servers(params: dict[str, Any]) -> list[Any]:
    """The engine's strict MCP entries (``-32602`` naming one it cannot take, before any backend call)."""
    return normalize_mcp_servers(params.get("mcpServers"))


def _absolute_cwd(params: dict[str, Any], must_exist: bool = False) -> str:
    """The workspace root, normalised (``/a/../b/`` → ``/b``); a new session's must exist."""
    return workspace_root(params, os.path.isdir if must_exist else None)

_DEFERRED = object()  # the handler passed the request on; someone else answers it


class Supervisor(SessionRegistry, AirSessionIndex):
    def __init__(self, config: Config, on_exit: Callable[[], None], root: str | None = None,
                 early_sessions: tuple[tuple[Any, str], ...] = (),
                 early_catalog: tuple[dict[str, Any] | None] | None = None) -> None:
        super().__init__(config, on_exit, root)
        # The stdio path answered these session/new requests before the runtime was up ((request id,
        # the session id it gave)): each is made here with that id, and its answer is not written again.
        self.early_sessions = {id_key(request): session for request, session in early_sessions}
        if early_catalog is not None:
            # It read the remembered catalog for that answer (its one element): the same read, so a
            # prompt the client sends on that session at once never waits for a second one.
            self.catalog, self.catalog_loaded = early_catalog[0], True
        self.air_index_init()
        self.methods: dict[str, Callable[[Any, Any, dict[str, Any]], Any]] = {
            "initialize": self._initialize,
            "authenticate": self._authenticate,
            "session/new": self._session_new,
            "session/prompt": self._session_prompt,
            "session/load": self._session_load,
            "session/resume": self._session_resume,
            "session/list": self._session_list,
            "session/close": self._session_close,
            "session/delete": self._session_delete,
            "logout": self._logout,
            "session/set_mode": self._session_set_mode,
            "session/set_config_option": self._session_set_config_option,
            "session/set_model": self._session_set_model,
            "quota/read": self._quota_read,
            # The phone's file browser, read-only (actors/project_files.py, docs/web-client.md).
            **{f"_{name}": functools.partial(self._project_files, name) for name in project_files.METHODS},
            **self.air_methods(),  # the AIR session index (air_index.py)
        }

        self.notifications: dict[str, Callable[[Any, dict[str, Any]], None]] = {
            "session/cancel": self._session_cancel,
        }

    # -- requests ----------------------------------------------------------------------------

    @handles(ClientFrame)
    def on_client_frame(self, message: ClientFrame) -> None:
        try:
            self._client_frame(message)
        finally:
            flow.done(message.token)

    def _client_frame(self, message: ClientFrame) -> None:
        frame, handle = message.frame, message.handle
        method = frame["method"]

        def answer(result: Any = None, error: RpcError | None = None) -> None:
            if handle is not None:
                message.conn.tell(Reply(handle, result, error.to_dict() if error else None))

        if self.shutting_down:
            answer(error=errors.worded(errors.INTERNAL_ERROR, "error.shutting_down"))
            return
        try:
            if handle is None:
                notification = self.notifications.get(method)
                if notification is not None:
                    notification(message.conn, _params(frame))
                return  # unknown notifications are ignored (JSON-RPC)
            handler = self.methods.get(method)
            if handler is None:
                # The Session's code (warm by now: warm_session_actor) holds the one table of them.
                from zcode_acp.actors.session.extensions.table import extension_name

                extension = extension_name(method)
                if extension is not None:
                    handler = functools.partial(self._extension, extension)
            if handler is None:
                raise errors.method_not_found(method)
            result = handler(message.conn, handle, _params(frame))
        except RpcError as exc:
            answer(error=exc)
            return
        except Exception as exc:
            log.exception("handling %s failed", method)
            answer(error=errors.worded(errors.INTERNAL_ERROR, "error.internal_in", method=method, detail=exc))
            return
        if result is not _DEFERRED:
            answer(result)
            if method == "session/new":
                self._after_new(message.conn, result["sessionId"])

    @handles(ClientRequestCancelled)
    def on_client_request_cancelled(self, message: ClientRequestCancelled) -> None:
        session = self.sessions.get(message.session_id) if message.session_id else None
        if session is not None:
            session.tell(CancelPromptRequest(message.conn, message.request_id))
        else:  # answered -32800 now (a second answer, if the connection gave one, is dropped)
            message.conn.tell(Reply(message.request_id, None, errors.cancelled().to_dict()))

    def _initialize(self, conn: Any, request_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        result = initialize_result(params.get("protocolVersion"), self.version, self.config.lang,
                                   params.get("clientCapabilities"))
        declared = merge_capabilities({}, params.get("clientCapabilities"))
        info = params.get("clientInfo")
        if isinstance(info, dict):
            log.info("client: %s %s", info.get("name"), info.get("version"))
        # A repeated initialize that declares what this client already declared changes
        # nothing: no ClientsChanged to every Session and Turn, and the objects they hold
        # stay the ones they have (docs/reliability.md, "What the remaining RSS is").
        if self.client_capabilities.get(conn.actor_urn) != declared:
            self.client_capabilities[conn.actor_urn] = declared
            self._clients_changed()
        return result

    def _authenticate(self, conn: Any, request_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        return authenticate_result(params.get("methodId"))

    def _logout(self, conn: Any, request_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        raise logout_unsupported()

    def _pinned(self, cwd: str) -> str:
        if self.root is not None and cwd != self.root:
            raise invalid_params("cwd", "invalid.not_this_root", root=self.root)
        return cwd

    def _session_new(self, conn: Any, request_id: Any, params: dict[str, Any]) -> Any:
        cwd = self._pinned(_absolute_cwd(params, must_exist=True))
        _no_additional_directories(params)
        servers = _mcp_servers(params)
        early = self.early_sessions.pop(id_key(request_id.id), None) if conn == self.primary else None
        if not self.catalog_loaded:
            # The remembered catalog is a small local file read at start (initialize never waits for
            # it); a session/new that comes first waits for it so that it offers the real models.
            self.waiting_new.append((conn, request_id, (cwd, servers, early)))
            return _DEFERRED
        return self._new_session(cwd, servers, early)

    def _new_session(self, cwd: str, servers: list[Any], session_id: str | None = None) -> dict[str, Any]:
        first = not self.sessions and not self.dormant
        session_id = session_id or str(uuid.uuid4())
        self.store.record(session_id, cwd)  # first: a session the store refuses is never made
        settings = self._new_settings()
        # Not an actor until its first use: most editors open sessions they never prompt, and a
        # record is ~0.3 KiB where a Session is ~8 (docs/performance.md, "Idle sessions").
        self.dormant[session_id] = Dormant(cwd, servers, None, settings, True)
        log.info("session=%s new in %s", session_id, cwd)
        if first:
            # The first session: learn the quota before its first prompt, but start the watch (its
            # code, the key lookup's) once this answer is on the wire: a timer set here, after the
            # store's first record (which waits on the thread pool, so the loop runs), fires after
            # the greenlets this turn wakes, the client connection's among them (docs/performance.md).
            gevent.spawn_later(0, safe_tell, self.actor_ref, RefreshQuota())
        warm_session_actor()  # the first prompt's Session, imported now that this answer is on its way
        return new_session_result(session_id, settings)

    def _after_new(self, conn: Any, session_id: str) -> None:
        """What follows a ``session/new`` answer (never before it), whether it was answered at once
        or after waiting for the catalog: the session's commands, and its row to the list
        subscriptions of its folder."""
        self._announce(conn, session_id)
        self.air_list_changed(session_id)

    def _announce(self, conn: Any, session_id: str, later: bool = True) -> None:
        """The commands a session offers, after its new/fork answer (never before it)."""
        learn = self.catalog is None and not self.catalog_asked and session_id in self.dormant
        if learn and later:
            # Making it imports the Session's code: not before the answer is on the wire (timers run
            # after the greenlets this turn woke, the client connection's among them).
            gevent.spawn_later(0, safe_tell, self.actor_ref, AnnounceLater(conn, session_id))
            return
        if learn:
            # A fresh install knows no models: this session is made in the engine now, in the
            # background (its answer did not wait), and its create's listing reaches the picker
            # as a config_option_update (docs/sessions.md, "The model list from the start").
            self.catalog_asked = True
            self._revive(session_id)
        session = self.sessions.get(session_id)
        if session is not None:
            session.tell(Announce(conn))
            if learn:
                session.tell(LearnCatalog())
            return
        # A record (never used): no engine has named its own commands yet, so the bridge's alone,
        # what the Session would announce before its create.
        conn.tell(Deliver(session_id, updates.encode(
            session_id, [commands.available_commands_update((), self.config.lang)])))

    @handles(AnnounceLater)
    def on_announce_later(self, message: AnnounceLater) -> None:
        if not self.shutting_down:  # a session made after the teardown would outlive the backend
            self._announce(message.conn, message.session_id, later=False)

    def _resolve(self, session_id: str, cwd: str, mcp_servers: list[Any]) -> Any:
        """live mapping → persisted placeholder → raw backend id (docs/sessions.md, "`session/load` and `session/resume`")."""
        if session_id in self.sessions or session_id in self.dormant:
            return self._revive(session_id)
        entry = self.store.get(session_id)
        if entry is not None:
            return self._spawn(session_id, entry["cwd"], mcp_servers, entry.get("zcodeSid"))[0]
        for acp_id, backend_id in self.backend_ids.items():
            if backend_id == session_id and (acp_id in self.sessions or acp_id in self.dormant):
                return self._revive(acp_id)
        # Not ours: a backend id (from session/list). Its root is learned from the resume.
        return self._spawn(session_id, cwd, mcp_servers, backend_session_id=session_id, root_known=False)[0]

    def _attach(self, conn: Any, request_id: Any, params: dict[str, Any], replay: bool) -> Any:
        if not self.catalog_loaded:  # as session/new: a session it brings back offers the remembered models
            self.waiting_attach.append((conn, request_id, params, replay))
            return _DEFERRED
        session_id = _session_id(params)
        cwd = self._pinned(_absolute_cwd(params))
        _no_additional_directories(params)
        if session_id not in self.sessions and self.store.is_deleted(session_id):
            raise errors.session_not_found(session_id)  # session/delete is final
        stored = self.store.get(session_id) if self.root and session_id not in self.sessions else None
        if stored is not None:  # made in another project (a shared ZCODE_HOME): not this bridge's
            self._pinned(stored["cwd"])
        session = self._resolve(session_id, cwd, _mcp_servers(params))
        log.info("session=%s %s by a client", session_id, "loaded" if replay else "resumed")
        session.tell(Attach(conn, request_id, cwd, replay))
        return _DEFERRED

    def _session_load(self, conn: Any, request_id: Any, params: dict[str, Any]) -> Any:
        return self._attach(conn, request_id, params, replay=True)

    def _session_resume(self, conn: Any, request_id: Any, params: dict[str, Any]) -> Any:
        return self._attach(conn, request_id, params, replay=False)

    def _session_list(self, conn: Any, request_id: Any, params: dict[str, Any]) -> Any:
        cwd = params.get("cwd")
        if cwd is not None and (not isinstance(cwd, str) or not os.path.isabs(cwd)):
            raise invalid_params("cwd", "invalid.must_be_absolute")
        self.air_list_request(conn, request_id, params)
        if cwd and self.config.engine_api == "v4":  # the workspace's sessions-index topic (docs/v4.md)
            from zcode_acp.actors.v4_sessions_index import ListIndex  # v4 only: a legacy bridge never imports it

            self._index_watch(cwd).tell(ListIndex(conn, request_id, self.actor_ref))
            return _DEFERRED
        backend_params = {"workspace": {"workspacePath": cwd, "workspaceKey": cwd}} if cwd else {}
        self.backend.tell(BackendCall("session/list", backend_params, self.actor_ref,
                                      functools.partial(Listed, conn, request_id)))
        return _DEFERRED

    def _index_watch(self, cwd: str) -> Any:
        watch = self.index_watches.get(cwd)
        if watch is None:
            from zcode_acp.actors.v4_sessions_index import SessionsIndexWatch  # v4 only, as above

            watch = self.index_watches[cwd] = SessionsIndexWatch.start(cwd, self.backend, self.config.subscribe_timeout)
        return watch

    @handles(Answered)
    def on_answered(self, message: Answered) -> None:
        message.then(message.result, message.error)

    @handles(Listed)
    def on_listed(self, message: Listed) -> None:
        if message.error is not None:
            self.air_list_rows(message.conn, message.request_id, [], {})  # its filter is spent
            message.fail(errors.from_backend_error(message.error, "session/list"))
            return
        # Sessions made through this bridge are listed under the id the editor knows.
        stored = self.store.load()
        known = {backend_id: acp_id for acp_id, backend_id in self.backend_ids.items()}
        known.update({entry["zcodeSid"]: acp_id for acp_id, entry in stored.items() if entry.get("zcodeSid")})
        result = without_deleted(message.result, lazy_sessions.deleted_backend_ids(stored))
        titles = lazy_sessions.kept_titles(stored)
        rows = self.air_list_rows(message.conn, message.request_id, list_sessions(result, known, titles), stored)
        message.conn.tell(Reply(message.request_id, {"sessions": rows}, None))

    @handles(TitleKept)
    def on_title_kept(self, message: TitleKept) -> None:
        if not self.store.keep_title(message.session_id, message.title):
            log.warning("session=%s: no record to keep its title in", message.session_id)
        else:
            self.air_list_changed(message.session_id)

    def _session_close(self, conn: Any, request_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        session_id = _session_id(params)
        self._revive(session_id)  # a dormant one too: the engine's session is closed as well
        session = self.sessions.pop(session_id, None)
        if session is None:
            raise errors.session_not_found(session_id)
        self.backend_ids.pop(session_id, None)
        try:
            session.ask(Teardown(close_backend=True), timeout=2)
        finally:
            session.stop(block=False)
        return {}

    def _session_delete(self, conn: Any, request_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        """Gone from ``session/list``, the lazy store and this bridge; the engine's session closed if open.

        An id this bridge has not opened (a backend id from ``session/list``) has
        nothing open in the engine; it is only tombstoned, so deleting is
        idempotent (docs/protocol-mapping.md, "Sessions").
        """
        session_id = _session_id(params)
        session = self.sessions.pop(session_id, None)
        self.dormant.pop(session_id, None)  # deleting is final: a record must not come back on use
        backend_id = self.backend_ids.pop(session_id, None)
        on_v4 = self.config.engine_api == "v4" and backend_id is not None  # the engine deletes it: deleteSession
        if session is not None:
            try:
                session.ask(Teardown(reason="session deleted", close_backend=not on_v4), timeout=2)
            finally:
                session.stop(block=False)
        if on_v4:
            from zcode_acp.actors.v4_sessions_index import delete_acked, delete_params  # v4 only, as above

            self.backend.tell(BackendCall("v4/command", delete_params(str(backend_id)), self.actor_ref,
                                          functools.partial(Answered, functools.partial(delete_acked, session_id))))
        known = self.store.get(session_id)
        self.store.delete(session_id, backend_id)
        self.activity.pop(session_id, None)
        if known is not None:
            self.air_list_changed(session_id, removed_from=known["cwd"])
        return {}

    def _extension(self, name: str, conn: Any, request_id: Any, params: dict[str, Any]) -> Any:
        session = self._session(params)
        if name == "session/fork":  # the standard method's fields (ForkSessionRequest), checked before any call
            _no_additional_directories(params)
            if "cwd" in params:
                _absolute_cwd(params)
        session.tell(Extension(conn, request_id, name, params))
        return _DEFERRED

    @handles(Forked)
    def on_forked(self, message: Forked) -> None:
        """A fork made a new backend session: give it its own ACP id, usable at once."""
        session_id = str(uuid.uuid4())
        session, settings = self._spawn(session_id, message.cwd, message.mcp_servers, message.backend_session_id,
                                        settings=message.settings)
        self.store.record(session_id, message.cwd, message.backend_session_id)
        self.air_list_changed(session_id)
        if message.as_command:
            from zcode_acp.protocol.translator import agent_text  # loaded with the Session's code by now

            text = t(self.config.lang, "command.forked", session_id=session_id)
            update = agent_text(text, uuid.uuid4().hex)
            message.conn.tell(Deliver(message.source_session_id, updates.encode(message.source_session_id, [update])))
            message.conn.tell(Reply(message.request_id, {"stopReason": "end_turn", "_meta": {
                "zcode": {"forkedSessionId": session_id}}}, None))
        else:
            message.conn.tell(Reply(message.request_id, {"sessionId": session_id, **session_state(settings)}, None))
            session.tell(Announce(message.conn))

    @handles(Forget)
    def on_forget(self, message: Forget) -> None:
        session = self.sessions.pop(message.session_id, None)
        self.dormant.pop(message.session_id, None)
        self.backend_ids.pop(message.session_id, None)
        self.quota_told.pop(message.session_id, None)
        self.quota_document_told.pop(message.session_id, None)
        if session is not None:
            session.stop(block=False)

    # -- the Coding Plan's quota (actors/quota.py, docs/quota.md) --------------------------------

    def _quota_read(self, conn: Any, request_id: Any, params: dict[str, Any]) -> Any:
        if "sessionId" in params and not isinstance(params["sessionId"], str):
            raise invalid_params("sessionId", "invalid.must_be_string")
        self._quota_watch().tell(ReadQuota(conn, request_id, self.config.lang))  # quota is the account's: any session's
        return _DEFERRED

    @handles(QuotaAtFailure)
    def on_quota_at_failure(self, message: QuotaAtFailure) -> None:
        self._quota_watch().tell(message)  # the QuotaWatch answers the Turn itself

    @handles(QuotaToldAtTurnEnd)
    def on_quota_told_at_turn_end(self, message: QuotaToldAtTurnEnd) -> None:
        self.quota_told.setdefault(message.session_id, set()).add((message.meter_id, 100.0, message.resets_at))

    @handles(RefreshQuota)
    def on_refresh_quota(self, message: RefreshQuota) -> None:
        """The first session/new's refresh, told to itself after its answer: the watch starts here."""
        self._quota_watch().tell(message)

    @handles(QuotaChanged)
    def on_quota_changed(self, message: QuotaChanged) -> None:
        from zcode_acp.protocol.quota import quota_alert, snapshot_json  # only a bridge with a key reads quota

        lang, snapshot = self.config.lang, message.snapshot
        now = datetime.now(UTC)
        shares = {meter.id: meter.used_percent or 0.0 for meter in snapshot.meters}
        # An alert lasts while its window stays past its level: a window that reset drops it.
        self.quota_alerts = {key: text for key, text in self.quota_alerts.items() if shares.get(key[0], 0.0) >= key[1]}
        for meter, level in message.crossings:
            reset = meter.resets_at.isoformat() if meter.resets_at else ""
            self.quota_alerts[(meter.id, level, reset)] = quota_alert(meter, level, snapshot, now, lang)
        self.quota_document = snapshot_json(snapshot, lang)
        for session_id in self.sessions:
            # A running turn's alerts wait for its end; so do those of a session with no turn yet (it
            # came to memory for a prompt whose turn has not started).
            running = self.activity.get(session_id, {}).get("status", "running") == "running"
            self._tell_quota(session_id, alerts_too=not running)

    # -- the project's files, read-only (actors/project_files.py) ---------------------------------

    def _project_files(self, method: str, conn: Any, request_id: Any, params: dict[str, Any]) -> Any:
        session_id = _session_id(params)
        entry = self.store.get(session_id)
        record = self.dormant.get(session_id)
        folder = (entry or {}).get("cwd") or (record.cwd if record is not None else None)
        if not isinstance(folder, str):
            raise errors.session_not_found(session_id)

        def answer(result: Any, error: RpcError | None) -> None:
            conn.tell(Reply(request_id, result, error.to_dict() if error else None))
        project_files.serve(method, params, folder, answer)
        return _DEFERRED

    def _session_set_mode(self, conn: Any, request_id: Any, params: dict[str, Any]) -> Any:
        session = self._session(params)
        session.tell(SetSetting(conn, request_id, "mode", validate_mode(params.get("modeId")), "mode"))
        return _DEFERRED

    def _session_set_model(self, conn: Any, request_id: Any, params: dict[str, Any]) -> Any:
        """The unstable ``session/set_model {sessionId, modelId}`` (acpc and older clients): the model
        selector's change, answered ``{}``."""
        session = self._session(params)
        _, value = validate_config_value(None, "model", params.get("modelId"))
        session.tell(SetSetting(conn, request_id, "model", value, "mode"))
        return _DEFERRED

    def _session_set_config_option(self, conn: Any, request_id: Any, params: dict[str, Any]) -> Any:
        session = self._session(params)
        # Values are checked against what the selectors offer; the Session knows the current list.
        config_id, value = validate_config_value(None, params.get("configId"), params.get("value"))
        session.tell(SetSetting(conn, request_id, config_id, value, "config"))
        return _DEFERRED

    def _session(self, params: dict[str, Any]) -> Any:
        session_id = _session_id(params)
        session = self._revive(session_id)
        if session is None:
            raise errors.session_not_found(session_id)
        return session

    def _session_prompt(self, conn: Any, request_id: Any, params: dict[str, Any]) -> Any:
        session = self._session(params)
        prompt = convert_prompt(params.get("prompt"))
        echo = echo_text(params.get("prompt"))
        if self.notifier is not None:  # a notification that opted in names what was asked
            self.activity.setdefault(params["sessionId"], {})["prompt"] = echo
        session.tell(Prompt(conn, request_id, prompt, echo))
        return _DEFERRED

    def _session_cancel(self, conn: Any, params: dict[str, Any]) -> None:
        session_id = params.get("sessionId")
        session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is not None:
            session.tell(CancelTurn())

    @handles(CatalogLoaded)
    def on_catalog_loaded(self, message: CatalogLoaded) -> None:
        if self.catalog is None:  # a create that came first already knows better
            self.catalog = message.catalog  # (a read that ends after the wait still serves later ones)
        if self.catalog_loaded:
            return
        self.catalog_loaded = True
        waiting, self.waiting_new = self.waiting_new, []
        for conn, handle, (cwd, servers, early) in waiting:
            try:
                result = self._new_session(cwd, servers, early)
            except RpcError as exc:
                conn.tell(Reply(handle, None, exc.to_dict()))
                continue
            conn.tell(Reply(handle, result, None))
            self._after_new(conn, result["sessionId"])
        attaching, self.waiting_attach = self.waiting_attach, []
        for conn, handle, params, replay in attaching:
            try:
                self._attach(conn, handle, params, replay)
            except RpcError as exc:
                conn.tell(Reply(handle, None, exc.to_dict()))
            except Exception as exc:  # answered, as _client_frame would have
                log.exception("handling a session load/resume failed")
                conn.tell(Reply(handle, None, errors.worded(errors.INTERNAL_ERROR, "error.internal_in",
                                                              method="session/load" if replay else "session/resume",
                                                              detail=exc).to_dict()))

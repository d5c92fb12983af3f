"""Supervisor: the root of the actor tree.

Owns the tree's lifecycle (it starts the Backend, the client connections and
the Sessions, and it alone stops them), the map ACP session id → Session
actor, the merged capabilities of the attached clients, and teardown.

Every ACP request enters here. The Supervisor validates what it can answer
without the backend (``initialize``, ``session/new``: never a backend call),
and hands session work to the owning Session actor, which answers the client
itself. Anything a handler raises becomes the JSON-RPC error of that request.
"""

from __future__ import annotations

import logging
import os
import uuid
from typing import Any, Callable

import gevent

from protocol import errors
from protocol.content import convert_prompt
from protocol.errors import RpcError, invalid_params
from protocol.handshake import authenticate_result, initialize_result, merge_capabilities
from protocol.session_config import SessionSettings, session_state

from .backend import Backend
from .base import BridgeActor, safe_tell
from .client_connection import ClientConnection
from .config import Config
from .messages import (
    CancelPromptRequest,
    CancelTurn,
    ClientsChanged,
    CloseConnection,
    Prompt,
    Reply,
    Teardown,
    TerminateBackend,
)
from .session import Session

log = logging.getLogger(__name__)


def version() -> str:
    try:
        from importlib.metadata import version as dist_version

        return dist_version("zcode-acp")
    except Exception:  # noqa: BLE001 - running from a source tree
        return "0.0.0+source"


def _params(frame: dict[str, Any]) -> dict[str, Any]:
    params = frame.get("params")
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise invalid_params("params", "must be an object")
    return params


def _session_id(params: dict[str, Any]) -> str:
    session_id = params.get("sessionId")
    if not isinstance(session_id, str) or not session_id:
        raise invalid_params("sessionId", "must be a non-empty string")
    return session_id


def _absolute_cwd(params: dict[str, Any]) -> str:
    cwd = params.get("cwd")
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise invalid_params("cwd", "must be an absolute path")
    return cwd


class Supervisor(BridgeActor):
    def __init__(self, config: Config, on_exit: Callable[[], None]) -> None:
        super().__init__()
        self.config = config
        self.on_exit = on_exit
        self.backend: Any = None
        self.clients: list[Any] = []
        self.primary: Any = None
        self.capabilities: dict[str, Any] = {}
        self.sessions: dict[str, Any] = {}
        self.backend_ids: dict[str, str] = {}  # ACP session id → backend session id
        self.version = version()
        self.shutting_down = False
        self.methods: dict[str, Callable[[Any, Any, dict[str, Any]], Any]] = {
            "initialize": self._initialize,
            "authenticate": self._authenticate,
            "session/new": self._session_new,
            "session/prompt": self._session_prompt,
        }
        self.notifications: dict[str, Callable[[Any, dict[str, Any]], None]] = {
            "session/cancel": self._session_cancel,
        }

    def on_start(self) -> None:
        self.backend = Backend.start(self.config)

    # -- clients ---------------------------------------------------------------------------

    def handle_AttachClient(self, message: Any) -> Any:
        conn = ClientConnection.start(self.actor_ref, message.transport)
        self.clients.append(conn)
        if message.primary:
            self.primary = conn
        self._clients_changed()
        return conn

    def _clients_changed(self) -> None:
        for session in self.sessions.values():
            session.tell(ClientsChanged(list(self.clients), self.capabilities))

    def handle_ClientClosed(self, message: Any) -> None:
        if message.conn == self.primary:
            self._teardown("the editor closed the connection")
            return
        if message.conn in self.clients:
            self.clients.remove(message.conn)
            message.conn.stop(block=False)
            self._clients_changed()

    # -- requests ----------------------------------------------------------------------------

    def handle_ClientFrame(self, message: Any) -> None:
        frame = message.frame
        method = frame["method"]
        is_request = "id" in frame
        if self.shutting_down:
            if is_request:
                message.conn.tell(Reply(frame["id"], None, errors.internal("the bridge is shutting down").to_dict()))
            return
        try:
            if not is_request:
                handler = self.notifications.get(method)
                if handler is not None:
                    handler(message.conn, _params(frame))
                return  # unknown notifications are ignored (JSON-RPC)
            handler = self.methods.get(method)
            if handler is None:
                raise errors.method_not_found(method)
            result = handler(message.conn, frame["id"], _params(frame))
        except RpcError as exc:
            if is_request:
                message.conn.tell(Reply(frame["id"], None, exc.to_dict()))
            return
        except Exception:
            log.exception("handling %s failed", method)
            if is_request:
                message.conn.tell(Reply(frame["id"], None, errors.internal(f"internal error in {method}").to_dict()))
            return
        if result is not _DEFERRED:
            message.conn.tell(Reply(frame["id"], result, None))

    def handle_ClientRequestCancelled(self, message: Any) -> None:
        session = self.sessions.get(message.session_id)
        if session is not None:
            session.tell(CancelPromptRequest(message.conn, message.request_id))

    def _initialize(self, conn: Any, request_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        result = initialize_result(params.get("protocolVersion"), self.version)
        self.capabilities = merge_capabilities(self.capabilities, params.get("clientCapabilities"))
        info = params.get("clientInfo")
        if isinstance(info, dict):
            log.info("client: %s %s", info.get("name"), info.get("version"))
        self._clients_changed()
        return result

    def _authenticate(self, conn: Any, request_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        return authenticate_result(params.get("methodId"))

    def _session_new(self, conn: Any, request_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        cwd = _absolute_cwd(params)
        if params.get("additionalDirectories"):
            raise invalid_params(
                "additionalDirectories", "is not supported: a ZCode session has exactly one workspace root (cwd)")
        mcp_servers = params.get("mcpServers") or []
        if not isinstance(mcp_servers, list):
            raise invalid_params("mcpServers", "must be an array")
        session_id = str(uuid.uuid4())
        settings = SessionSettings(mode=self.config.default_mode)
        self.sessions[session_id] = Session.start(
            session_id=session_id,
            cwd=cwd,
            mcp_servers=mcp_servers,
            settings=settings,
            backend=self.backend,
            supervisor=self.actor_ref,
            clients=self.clients,
            capabilities=self.capabilities,
            config=self.config,
        )
        return {"sessionId": session_id, **session_state(settings)}

    def _session(self, params: dict[str, Any]) -> Any:
        session_id = _session_id(params)
        session = self.sessions.get(session_id)
        if session is None:
            raise errors.session_not_found(session_id)
        return session

    def _session_prompt(self, conn: Any, request_id: Any, params: dict[str, Any]) -> Any:
        session = self._session(params)
        prompt = convert_prompt(params.get("prompt"))
        session.tell(Prompt(conn, request_id, prompt))
        return _DEFERRED

    def _session_cancel(self, conn: Any, params: dict[str, Any]) -> None:
        session = self.sessions.get(params.get("sessionId"))
        if session is not None:
            session.tell(CancelTurn("cancelled by the client"))

    def handle_Materialized(self, message: Any) -> None:
        self.backend_ids[message.session_id] = message.backend_session_id

    # -- teardown --------------------------------------------------------------------------------

    def handle_Shutdown(self, message: Any) -> None:
        self._teardown(message.reason)

    def _teardown(self, reason: str) -> None:
        """Once, in order, each step bounded (state-machines.md, Teardown)."""
        if self.shutting_down:
            return
        self.shutting_down = True
        log.info("tearing down: %s", reason)
        futures = [session.ask(Teardown(), block=False) for session in self.sessions.values()]
        for future in futures:
            try:
                future.get(timeout=1.0)
            except Exception:  # noqa: BLE001
                pass
        for conn in self.clients:
            if conn != self.primary:
                safe_tell(conn, CloseConnection())
        try:
            self.backend.ask(TerminateBackend(self.config.kill_grace), timeout=2 * self.config.kill_grace + 1)
        except Exception:  # noqa: BLE001
            log.exception("backend termination failed")
        for actor in [*self.sessions.values(), *self.clients, self.backend]:
            actor.stop(block=False)
        self.sessions.clear()
        gevent.spawn(self.on_exit)


_DEFERRED = object()  # the handler passed the request on; someone else answers it

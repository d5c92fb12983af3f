"""The AIR session index on the Supervisor: archive, batch get, the list filter and its subscription.

The methods of the reference adapters (protocol/air.py names the packages), on the sessions
this bridge keeps a record of (the lazy-session file, docs/sessions.md):

* ``_session/archive`` / ``_session/unarchive {sessionId}`` → ``{}`` (also under the unstable
  schema's standard names ``session/archive`` / ``session/unarchive``): ``archived: true`` on
  the session's record; an archived session leaves the default ``session/list``.
* ``session/list``'s ``_meta.jetbrains.air.list.archived`` (``unarchived``, the default;
  ``archived``; ``all``) picks the rows; an AIR client's rows carry
  ``_meta.jetbrains.air.archived``.
* ``_session/batch_get {sessionIds}`` → ``{sessions}``: the rows of the ids it knows.
* ``_session/list/subscribe {cwd}`` → ``{subscriptionId}``, then ``_session/list/changes
  {subscriptionId, sessions, removed}`` for each change made through this bridge to a session
  of that folder (new, renamed, archived, unarchived, deleted); ``…/unsubscribe`` ends it.

A mixin of the Supervisor (it owns the records and the clients); the Supervisor registers
``air_methods()`` and calls ``air_list_changed`` where a session changes.
"""

from __future__ import annotations

import functools
import os
import time
import uuid
from typing import Any
from collections.abc import Callable

import pykka

from zcode_acp.protocol import air, errors, framing, jsonrpc, lazy_sessions, updates
from zcode_acp.protocol.display_text import shown_title
from zcode_acp.protocol.errors import invalid_params
from zcode_acp.protocol.sessions import iso_time

from zcode_acp.actors.messages import Deliver

Handler = Callable[[Any, Any, dict[str, Any]], Any]
MAX_SUBSCRIPTIONS = 128  # per bridge: a client that never unsubscribes cannot grow the table without end


def _session_id(params: dict[str, Any]) -> str:
    session_id = params.get("sessionId")
    if not isinstance(session_id, str) or not session_id.strip():
        raise invalid_params("sessionId", "invalid.must_be_nonempty_string")
    return session_id.strip()


class AirSessionIndex:
    # Set by the Supervisor (SessionRegistry): the records and what each client declared.
    store: Any
    client_capabilities: dict[str, dict[str, Any]]
    sessions: dict[str, Any]
    dormant: Any  # DormantRecords: the records not yet an actor

    def air_index_init(self) -> None:
        self.list_filters: dict[tuple[str, Any], tuple[str, bool]] = {}  # (conn, request id) → filter, AIR?
        self.list_subscriptions: dict[str, tuple[Any, str]] = {}  # subscription id → (conn, cwd)

    def air_methods(self) -> dict[str, Handler]:
        archive, unarchive = functools.partial(self._air_archive, True), functools.partial(self._air_archive, False)
        return {
            "_session/archive": archive, "session/archive": archive,
            "_session/unarchive": unarchive, "session/unarchive": unarchive,
            "_session/batch_get": self._air_batch_get,
            "_session/list/subscribe": self._air_list_subscribe,
            "_session/list/unsubscribe": self._air_list_unsubscribe,
        }

    def is_air(self, conn: Any) -> bool:
        return air.is_air_client(self.client_capabilities.get(conn.actor_urn))

    # -- rows ---------------------------------------------------------------------------------

    def air_row(self, session_id: str, entry: dict[str, Any]) -> dict[str, Any]:
        """A ``SessionInfo`` from this bridge's record of a session."""
        row: dict[str, Any] = {"sessionId": session_id, "cwd": entry["cwd"], "updatedAt": iso_time(time.time() * 1000)}
        if isinstance(entry.get("title"), str) and entry["title"]:
            row["title"] = shown_title(entry["title"])
        return air.with_archived(row, entry.get("archived") is True)

    def air_list_request(self, conn: Any, request_id: Any, params: dict[str, Any]) -> None:
        """A ``session/list`` is asked: its filter, read before the engine is (``-32602`` if malformed)."""
        self.list_filters[(conn.actor_urn, request_id)] = (air.archived_filter(params), self.is_air(conn))

    def air_list_rows(self, conn: Any, request_id: Any, rows: list[dict[str, Any]],
                      stored: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
        """The rows of one ``session/list`` answer, filtered by archive state (and marked for AIR)."""
        wanted, for_air = self.list_filters.pop((conn.actor_urn, request_id), ("unarchived", False))
        archived = lazy_sessions.archived_ids(stored)
        kept = [row for row in rows if air.keeps(wanted, row.get("sessionId") in archived)]
        return [air.with_archived(row, row.get("sessionId") in archived) for row in kept] if for_air else kept

    # -- methods ------------------------------------------------------------------------------

    def _air_archive(self, archived: bool, conn: Any, request_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        session_id = _session_id(params)
        # Idempotent, as in both adapters; a session this bridge holds no record of is unknown here.
        if not self.store.amend(session_id, {"archived": True if archived else None}):
            raise errors.session_not_found(session_id)
        if session_id in self.sessions or session_id in self.dormant:
            # A session open here learns its archive state as both adapters tell it (RFD #2161's
            # ``archived``, under the AIR key): a session_info_update.
            update = {"sessionUpdate": "session_info_update", "_meta": air.with_air(None, "archived", archived)}
            conn.tell(Deliver(session_id, updates.encode(session_id, [update])))
        self.air_list_changed(session_id)
        return {}

    def _air_batch_get(self, conn: Any, request_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        ids = air.session_ids(params)
        rows = []
        for session_id in ids:
            entry = self.store.get(session_id)
            if entry is not None:
                rows.append(self.air_row(session_id, entry))
        return {"sessions": rows}

    def _air_list_subscribe(self, conn: Any, request_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        cwd = params.get("cwd")
        if not isinstance(cwd, str) or not os.path.isabs(cwd):
            raise invalid_params("cwd", "invalid.must_be_absolute")
        if len(self.list_subscriptions) >= MAX_SUBSCRIPTIONS:
            raise errors.worded(errors.INTERNAL_ERROR, "error.too_many_list_subscriptions", limit=MAX_SUBSCRIPTIONS)
        subscription_id = uuid.uuid4().hex
        self.list_subscriptions[subscription_id] = (conn, os.path.normpath(cwd))
        return {"subscriptionId": subscription_id}

    def _air_list_unsubscribe(self, conn: Any, request_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        subscription_id = params.get("subscriptionId")
        if not isinstance(subscription_id, str):
            raise invalid_params("subscriptionId", "invalid.must_be_string")
        held = self.list_subscriptions.get(subscription_id)
        if held is not None and held[0].actor_urn == conn.actor_urn:  # idempotent; only its own client's
            del self.list_subscriptions[subscription_id]
        return {}

    # -- changes ------------------------------------------------------------------------------

    def air_list_changed(self, session_id: str, removed_from: str | None = None) -> None:
        """Tell each subscription of the session's folder its new row (or, deleted, its removal)."""
        if not self.list_subscriptions:
            return
        entry = None if removed_from else self.store.get(session_id)
        cwd = removed_from or (entry or {}).get("cwd")
        if not cwd:
            return
        for subscription_id, (conn, watched) in list(self.list_subscriptions.items()):
            if watched != cwd:
                continue
            sessions = [] if entry is None else [self.air_row(session_id, entry)]
            params = {"subscriptionId": subscription_id, "sessions": sessions,
                      "removed": [session_id] if entry is None else []}
            payload = framing.encode(jsonrpc.acp_notification(air.LIST_CHANGES_METHOD, params))
            try:
                conn.tell(Deliver("", payload))
            except pykka.ActorDeadError:
                del self.list_subscriptions[subscription_id]

"""A new session's answer, as pure functions: the Supervisor's, and the stdio path's before the runtime.

An editor that has its ``initialize`` answer writes ``session/new`` at once, and waits for that
answer before it can prompt. Importing the actor runtime takes most of a start (docs/performance.md,
"Time to a first session"). So the stdio path answers a ``session/new`` that is already waiting
(cli/early_answer.py), as it answers ``initialize``. The runtime then handles the same request
with the same session id (the Supervisor's ``early_sessions``), and its answer is not written again.

Both answers are built here, from the same inputs: the request's params, the client's
capabilities, the settings that shape a new session (mode, language, engine path) and the model
catalog remembered from the last run. A session/new the runtime would refuse, or one that needs
state only the runtime has (a pinned root, a catalog not read yet), gets no early answer.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from . import framing, jsonrpc, lazy_sessions, model_catalog
from .errors import RpcError, invalid_params
from .handshake import merge_capabilities, supports_boolean_options
from .mcp_servers import normalize_mcp_servers
from .session_config import V4_SETTABLE_MODES, SessionSettings, session_state


def new_session_settings(mode: str, capabilities: dict[str, Any], lang: str, engine_api: str,
                         catalog: dict[str, Any] | None) -> SessionSettings:
    """A new session's settings: the configured mode, the client's boolean options, the catalog."""
    return model_catalog.seeded(
        SessionSettings(mode=mode, plan_toggle=supports_boolean_options(capabilities), lang=lang,
                        # v4 sets a mode with switchCollaborationMode: only the modes it names
                        settable_modes=V4_SETTABLE_MODES if engine_api == "v4" else None),
        catalog)


def workspace_root(params: dict[str, Any], is_dir: Callable[[str], bool] | None = None) -> str:
    """The workspace root, normalised (``/a/../b/`` → ``/b``); with ``is_dir``, it must exist."""
    cwd = params.get("cwd")
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise invalid_params("cwd", "invalid.must_be_absolute")
    try:
        cwd.encode("utf-8")
    except UnicodeEncodeError:
        raise invalid_params("cwd", "invalid.lone_surrogate") from None
    cwd = os.path.normpath(cwd)
    if is_dir is not None and not is_dir(cwd):
        raise invalid_params("cwd", "invalid.not_a_directory", path=cwd)
    return cwd


def one_workspace_root(params: dict[str, Any]) -> None:
    if params.get("additionalDirectories"):
        raise invalid_params("additionalDirectories", "invalid.one_workspace_root")


def new_session_result(session_id: str, settings: SessionSettings) -> dict[str, Any]:
    return {"sessionId": session_id, **session_state(settings)}


def early_session_new_answer(line: bytes, initialize_params: Any, *, mode: str, lang: str, engine_api: str,
                             catalog: dict[str, Any] | None, session_id: str,
                             is_dir: Callable[[str], bool]) -> tuple[Any, bytes] | None:
    """(the request's id, the answer frame) for a ``session/new`` the runtime would answer so, or None."""
    try:
        frame = framing.decode_object(line)
        if jsonrpc.classify_acp(frame) is not jsonrpc.Kind.REQUEST or frame["method"] != "session/new":
            return None
        params = frame.get("params")
        if not isinstance(params, dict):
            return None
        cwd = workspace_root(params, is_dir)
        one_workspace_root(params)
        normalize_mcp_servers(params.get("mcpServers"))
        lazy_sessions.dumps({session_id: {"cwd": cwd, "createdAt": 0}})  # what the store would refuse
    except (RpcError, ValueError, TypeError):
        return None
    declared = initialize_params.get("clientCapabilities") if isinstance(initialize_params, dict) else None
    settings = new_session_settings(mode, merge_capabilities({}, declared), lang, engine_api, catalog)
    return frame["id"], framing.encode(jsonrpc.acp_result(frame["id"], new_session_result(session_id, settings)))

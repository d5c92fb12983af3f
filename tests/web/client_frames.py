"""Schema checks for the frames the web client sends (the client side of ACP).

The counterpart of tests/schema.py, which checks what a bridge sends: every
request and notification the page writes must be one the ACP schema defines
for clients, with params its pydantic models accept without dropping
anything; every answer to an agent request must match that request's
response model.
"""

from __future__ import annotations

from typing import Any

from acp import schema
from pydantic import TypeAdapter

from tests.schema import _kept_everything

_REQUESTS: dict[str, TypeAdapter[Any]] = {
    "initialize": TypeAdapter(schema.InitializeRequest),
    "session/new": TypeAdapter(schema.NewSessionRequest),
    "session/load": TypeAdapter(schema.LoadSessionRequest),
    "session/prompt": TypeAdapter(schema.PromptRequest),
    "session/set_mode": TypeAdapter(schema.SetSessionModeRequest),
    "session/set_config_option": TypeAdapter(
        schema.SetSessionConfigOptionBooleanRequest | schema.SetSessionConfigOptionSelectRequest),
}
# The bridge's own read-only file browser (actors/project_files.py): {sessionId, path?} and nothing else.
_FILE_REQUESTS = {"_zcode/files/list": {"path"}, "_zcode/files/read": {"path"}, "_zcode/files/changes": set()}
_NOTIFICATIONS: dict[str, TypeAdapter[Any]] = {
    "session/cancel": TypeAdapter(schema.CancelNotification),
}
_RESULTS: dict[str, TypeAdapter[Any]] = {
    "session/request_permission": TypeAdapter(schema.RequestPermissionResponse),
    "elicitation/create": TypeAdapter(schema.CreateElicitationResponse),
}
_CONTENT_VALUE = TypeAdapter(schema.ElicitationContentValue)


def _validate(adapter: TypeAdapter[Any], value: Any, where: str) -> None:
    parsed = adapter.validate_python(value)
    _kept_everything(value, adapter.dump_python(parsed, by_alias=True, mode="json"), where)


def assert_valid_page_frame(frame: dict[str, Any], agent_requests: dict[Any, str]) -> None:
    """One frame the page sent; ``agent_requests`` maps the ids of requests it was sent to their methods."""
    assert frame.get("jsonrpc") == "2.0", frame
    method = frame.get("method")
    if method is not None:
        if "id" in frame and method in _FILE_REQUESTS:
            params = frame.get("params") or {}
            assert isinstance(params.get("sessionId"), str) and set(params) <= {"sessionId", *_FILE_REQUESTS[method]}, frame
            assert all(isinstance(params[key], str) for key in params), frame
            return
        if "id" in frame:
            assert method in _REQUESTS, f"the page sent a request ACP does not define for clients: {frame}"
            assert isinstance(frame["id"], (int, str)) and not isinstance(frame["id"], bool), frame
            _validate(_REQUESTS[method], frame.get("params"), method)
        else:
            assert method in _NOTIFICATIONS, f"the page sent a notification ACP does not define for clients: {frame}"
            _validate(_NOTIFICATIONS[method], frame.get("params"), method)
        return
    assert frame.get("id") in agent_requests, f"the page answered a request it was never sent: {frame}"
    assert ("result" in frame) != ("error" in frame), frame
    if "error" in frame:
        error = frame["error"]
        assert isinstance(error.get("code"), int) and isinstance(error.get("message"), str), frame
        return
    answered = agent_requests[frame["id"]]
    _validate(_RESULTS[answered], frame["result"], f"answer to {answered}")
    if answered == "elicitation/create" and frame["result"].get("action") == "accept":
        for value in (frame["result"].get("content") or {}).values():
            _CONTENT_VALUE.validate_python(value, strict=True)  # flat values only (ACP forms)

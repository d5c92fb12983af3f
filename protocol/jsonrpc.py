"""JSON-RPC envelopes for the two dialects the bridge speaks.

ACP frames carry ``"jsonrpc": "2.0"``. The ZCode backend's frames look the
same but carry no ``jsonrpc`` field (its strict validator rejects frames that
do), so every builder here exists twice: ``acp_*`` and ``backend_*``.
"""

from __future__ import annotations

from enum import Enum
from typing import Any
from collections.abc import Callable

from .errors import INVALID_REQUEST, RpcError


class Kind(Enum):
    REQUEST = "request"
    NOTIFICATION = "notification"
    RESPONSE = "response"


# -- classification -------------------------------------------------------

def classify_backend(frame: dict[str, Any], is_pending: Callable[[Any], bool]) -> Kind | None:
    """Kind of a backend frame by its keys (docs/backend-protocol.md §1).

    Quirk: a frame with both ``id`` and ``method`` whose id is one of our own
    pending request ids is a response, not a request. ``None`` means the frame
    is none of the three (no id, no method): the caller skips it.
    """
    has_id = "id" in frame
    has_method = isinstance(frame.get("method"), str)
    if has_id and not has_method:
        return Kind.RESPONSE
    if has_id and has_method:
        return Kind.RESPONSE if is_pending(frame["id"]) else Kind.REQUEST
    if has_method:
        return Kind.NOTIFICATION
    return None


def _valid_id(value: Any) -> bool:
    # bool is an int subclass in Python but not a JSON-RPC id.
    return (isinstance(value, (str, int)) and not isinstance(value, bool)) or value is None


def classify_acp(frame: dict[str, Any]) -> Kind:
    """Kind of an inbound ACP frame, or RpcError(-32600) when it is none.

    A request needs a string ``method`` and a string/number id; a response
    needs an id and exactly one of ``result``/``error``.
    """
    if frame.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"')
    method = frame.get("method")
    if "method" in frame:
        if not isinstance(method, str):
            raise RpcError(INVALID_REQUEST, "Invalid Request: method must be a string")
        if "params" in frame and not isinstance(frame["params"], (dict, list)):
            raise RpcError(INVALID_REQUEST, "Invalid Request: params must be an object")
        if "id" not in frame:
            return Kind.NOTIFICATION
        if not _valid_id(frame["id"]) or frame["id"] is None:
            raise RpcError(INVALID_REQUEST, "Invalid Request: id must be a string or a number")
        return Kind.REQUEST
    if "id" in frame and (("result" in frame) != ("error" in frame)):
        return Kind.RESPONSE
    raise RpcError(INVALID_REQUEST, "Invalid Request: not a request, notification or response")


def request_id_or_none(frame: Any) -> Any:
    """The id to answer an invalid frame with (null when unusable)."""
    if isinstance(frame, dict) and _valid_id(frame.get("id")):
        return frame.get("id")
    return None


# -- ACP (with "jsonrpc") ----------------------------------------------------

def acp_request(id_: Any, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def acp_notification(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def acp_result(id_: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def acp_error(id_: Any, error: RpcError | dict[str, Any]) -> dict[str, Any]:
    body = error.to_dict() if isinstance(error, RpcError) else error
    return {"jsonrpc": "2.0", "id": id_, "error": body}


def session_update(session_id: str, update: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session_id, "update": update},
    }


# -- backend (no "jsonrpc") ----------------------------------------------------

def backend_request(id_: int, method: str, params: Any) -> dict[str, Any]:
    return {"id": id_, "method": method, "params": params}


def backend_result(id_: Any, result: Any) -> dict[str, Any]:
    return {"id": id_, "result": result}


def backend_error(id_: Any, code: int, message: str) -> dict[str, Any]:
    return {"id": id_, "error": {"code": code, "message": message}}

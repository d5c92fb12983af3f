"""JSON-RPC envelopes for the two dialects the bridge speaks.

ACP frames carry ``"jsonrpc": "2.0"``. The ZCode backend's frames look the
same but carry no ``jsonrpc`` field (its strict validator rejects frames that
do), so every builder here exists twice: ``acp_*`` and ``backend_*``.
"""

from __future__ import annotations

import math
import re
from enum import Enum
from typing import Any
from collections.abc import Callable

from .errors import INVALID_REQUEST, ErrorObject, RpcError, invalid_params, invalid_request_value, worded
from .i18n import EN


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
    """A JSON-RPC id we can echo unchanged: string, number or null.

    bool is an int subclass in Python but not a JSON-RPC id. A float (``7.0``)
    is a number: JSON-RPC only says it SHOULD NOT have a fraction, so it is
    echoed as sent. A string holding a lone surrogate (``"\\ud800"``) could
    never be written back, so it is no usable id.
    """
    if value is None:
        return True
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, int) and not isinstance(value, bool)


def encodable(text: str) -> bool:
    """False when ``text`` holds a lone surrogate, which UTF-8 cannot carry."""
    return text.isascii() or _SURROGATE.search(text) is None  # isascii() is O(1) in CPython


_SURROGATE = re.compile("[\ud800-\udfff]")

# Deeper than this, a client frame is refused (-32602 naming the field) before
# any recursive code (capability merging, encoders) can run out of stack.
MAX_DEPTH = 64

CANCEL_REQUEST = "$/cancel_request"


def is_response(frame: dict[str, Any]) -> bool:
    """True for a frame that answers something: no ``method``, a ``result`` or an ``error``.

    Such a frame is never answered, whatever is wrong with it (JSON-RPC 2.0 §5:
    a response gets no response). Clients do send odd ones: Toad replies to a
    notification with ``{"jsonrpc": "2.0", "id": null, "error": ...}``, and an
    answer may come for an id nobody waits for; the bridge drops them (logged at
    debug) instead of writing a -32600 the client cannot match to anything.
    """
    return "method" not in frame and ("result" in frame or "error" in frame)


def classify_acp(frame: dict[str, Any]) -> Kind:
    """Kind of an inbound ACP frame, or RpcError when it is none.

    A request needs a string ``method`` and a string/number id; a response
    needs an id and exactly one of ``result``/``error`` (else -32600).
    ``$/cancel_request`` is a notification: sent with an id it is -32600.
    Every value of a request or response is checked too (``check_values``):
    nesting deeper than ``MAX_DEPTH`` and strings with lone surrogates are
    -32602 naming the field (-32600 in the envelope), so no such value ever
    reaches the rest of the bridge, where it would fail far from the client.
    A notification is never answered, so only its envelope is checked.
    """
    if frame.get("jsonrpc") != "2.0":
        raise worded(INVALID_REQUEST, "error.request.jsonrpc")
    method = frame.get("method")
    if "method" in frame:
        if not isinstance(method, str):
            raise worded(INVALID_REQUEST, "error.request.method_type")
        if not encodable(method):
            raise worded(INVALID_REQUEST, "error.request.method_surrogate")
        if "params" in frame and not isinstance(frame["params"], (dict, list)):
            raise worded(INVALID_REQUEST, "error.request.params_type")
        if "id" not in frame:
            # Never answered, so never checked further: its handlers read typed fields only.
            return Kind.NOTIFICATION
        if not _valid_id(frame["id"]) or frame["id"] is None:
            raise worded(INVALID_REQUEST, "error.request.id_type")
        if method == CANCEL_REQUEST:
            raise worded(INVALID_REQUEST, "error.request.cancel_with_id", method=CANCEL_REQUEST)
        check_values(frame)
        return Kind.REQUEST
    if "id" in frame and (("result" in frame) != ("error" in frame)):
        check_values(frame)
        return Kind.RESPONSE
    raise worded(INVALID_REQUEST, "error.request.kind")


def check_values(frame: dict[str, Any]) -> None:
    """RpcError for the first value the bridge cannot carry: too deep, or a lone surrogate.

    Iterative (no recursion, whatever the depth). Paths are linked pairs
    ``(key, parent)`` so walking costs no string work until something is wrong.
    """
    stack: list[tuple[Any, int, Any]] = [(frame, 0, None)]
    while stack:
        value, depth, path = stack.pop()
        if isinstance(value, str):
            if not encodable(value):
                raise _value_error(path, "invalid.value.lone_surrogate")
        elif isinstance(value, dict):
            if depth >= MAX_DEPTH:
                raise _value_error(path, "invalid.value.too_deep", depth=MAX_DEPTH)
            for key, item in value.items():
                if not encodable(key):
                    raise _value_error(path, "invalid.value.key_surrogate")
                stack.append((item, depth + 1, (key, path)))
        elif isinstance(value, list):
            if depth >= MAX_DEPTH:
                raise _value_error(path, "invalid.value.too_deep", depth=MAX_DEPTH)
            stack.extend((item, depth + 1, (index, path)) for index, item in enumerate(value))


def _value_error(path: Any, problem: str, **params: Any) -> RpcError:
    keys: list[Any] = []
    while path is not None:
        key, path = path
        keys.append(key)
    keys.reverse()
    if keys and keys[0] == "params":
        return invalid_params(_path_text(keys[1:]) or "params", problem, **params)
    return invalid_request_value(_path_text(keys), problem, **params)


def _path_text(keys: list[Any], limit: int = 6) -> str:
    """``prompt[0].text``; long paths are cut (``a.b.c.d.e.f…``), keys made printable."""
    text = ""
    for index, key in enumerate(keys[:limit]):
        if isinstance(key, int):
            text += f"[{key}]"
        else:
            printable = key.encode("utf-8", "backslashreplace").decode("utf-8")
            text += printable if index == 0 else "." + printable
    return text + ("…" if len(keys) > limit else "")


def request_id_or_none(frame: Any) -> Any:
    """The id to answer an invalid frame with (null when unusable)."""
    if isinstance(frame, dict) and _valid_id(frame.get("id")):
        return frame.get("id")
    return None


def cancel_target(params: Any) -> Any:
    """The request a ``$/cancel_request`` names, or None when it names none we could hold.

    Anything but a valid id (``{}``, a list, a lone surrogate) is None: the
    caller can then look the id up in its tables without risking a TypeError
    (an unhashable id) that would take the rest of its batch with it.
    """
    request_id = params.get("requestId") if isinstance(params, dict) else None
    return request_id if _valid_id(request_id) else None


# -- ACP (with "jsonrpc") ----------------------------------------------------

def acp_request(id_: Any, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def acp_notification(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def acp_result(id_: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def acp_error(id_: Any, error: RpcError | dict[str, Any], lang: str = EN) -> dict[str, Any]:
    """The error answer; the bridge's own words in ``lang`` (the session's), the engine's as they are."""
    body: dict[str, Any]
    if isinstance(error, RpcError):
        body = error.to_dict(lang)
    elif isinstance(error, ErrorObject):
        body = error.in_language(lang)
    else:
        body = error
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

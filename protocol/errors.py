"""JSON-RPC error taxonomy shared by both dialects (docs/protocol-mapping.md, "Errors")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .i18n import EN, t

# The words of an error in a language: the connection that writes the answer knows which (the
# session's, which is the bridge's Config.lang), the code that found the mistake does not.
Wording = Callable[[str], str]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
SESSION_NOT_FOUND = -32002

# Backend-side codes (docs/backend-protocol.md §8).
BACKEND_BUSY_CODES = frozenset({1308, -32010})
BACKEND_SESSION_NOT_ACTIVE = -32004


class ErrorObject(dict[str, Any]):
    """A JSON-RPC ``error`` object (English ``message``) that can still be worded in another language.

    What ``RpcError.to_dict`` gives: it travels in ``Reply`` like any error dict, and the
    ClientConnection writes it in its language (``jsonrpc.acp_error(..., lang)``). A copy made
    with ``dict(...)`` is a plain dict and stays English.
    """

    __slots__ = ("wording",)

    def __init__(self, body: dict[str, Any], wording: Wording | None = None) -> None:
        super().__init__(body)
        self.wording = wording

    def in_language(self, lang: str) -> dict[str, Any]:
        if self.wording is None or lang == EN:
            return dict(self)
        return {**self, "message": self.wording(lang)}


class RpcError(Exception):
    """An error that becomes a JSON-RPC ``error`` object.

    Raised by pure code when input is wrong; the runtime turns it into the
    response for the request being served. ``message`` is English; an error the bridge
    words itself also carries its ``wording`` (the catalog, any language: ``words``).
    """

    def __init__(self, code: int, message: str, data: Any = None, wording: Wording | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.wording = wording

    def words(self, lang: str) -> str:
        """The message in ``lang`` (the English one when the words are not the bridge's own)."""
        return self.wording(lang) if self.wording is not None and lang != EN else self.message

    def to_dict(self, lang: str | None = None) -> ErrorObject:
        """The error object; in ``lang`` when given, else English and still translatable."""
        error: dict[str, Any] = {"code": self.code, "message": self.message if lang is None else self.words(lang)}
        if self.data is not None:
            error["data"] = self.data
        return ErrorObject(error, self.wording if lang is None else None)

    def __repr__(self) -> str:
        return f"RpcError({self.code}, {self.message!r})"


def worded(code: int, key: str, data: Any = None, /, **params: Any) -> RpcError:
    """An error in the bridge's own words: the catalog's ``key``, in English until a language is asked."""

    def wording(lang: str) -> str:
        return t(lang, key, **params)

    return RpcError(code, wording(EN), data, wording)


def invalid_params(field: str, problem: str, /, **params: Any) -> RpcError:
    """A ``-32602`` that names the offending field, as clients need to fix it.

    ``problem`` is a catalog key (``invalid.*``, with ``params``): the client's user reads the
    answer in the session's language; ``field`` is the protocol's name, never translated.
    """

    def wording(lang: str) -> str:
        return t(lang, "error.invalid_params", field=field, problem=t(lang, problem, **params))

    return RpcError(INVALID_PARAMS, wording(EN), None, wording)


def invalid_request_value(where: str, problem: str, /, **params: Any) -> RpcError:
    """A ``-32600`` for a value of the envelope (``where`` its path, empty: the frame itself)."""

    def wording(lang: str) -> str:
        return t(lang, "error.request.value", where=where or t(lang, "error.request.the_frame"),
                 problem=t(lang, problem, **params))

    return RpcError(INVALID_REQUEST, wording(EN), None, wording)


def method_not_found(method: str) -> RpcError:
    return worded(METHOD_NOT_FOUND, "error.method_not_found", method=method)


def session_not_found(session_id: Any) -> RpcError:
    return worded(SESSION_NOT_FOUND, "error.session_not_found", session_id=session_id)


def internal(message: str) -> RpcError:
    return RpcError(INTERNAL_ERROR, message)


def cancelled() -> RpcError:
    return worded(REQUEST_CANCELLED, "error.request_cancelled")


def from_backend_error(error: Any, method: str, lang: str = EN) -> RpcError:
    """Wrap a backend ``error`` object for the ACP client.

    The backend's own code and message are kept in the text (its codes are not
    JSON-RPC codes) and in ``data`` so a client can still inspect them.
    """
    if not isinstance(error, dict):
        error = {"message": str(error)}
    code = error.get("code")
    message = error.get("message") or "unknown backend error"
    if code == METHOD_NOT_FOUND:
        return RpcError(
            METHOD_NOT_FOUND,
            t(lang, "error.unsupported_method", method=method),
            {"backendCode": code, "backendMessage": message},
            lambda into: t(into, "error.unsupported_method", method=method),
        )

    # The framing is the bridge's, so it follows the language of the connection that writes the
    # answer (issue 29), as the caller may not know it; the engine's message passes untranslated.
    def wording(into: str) -> str:
        return t(into, "error.backend_error_code" if code is not None else "error.backend_error",
                 method=method, message=message, code=code)

    text = wording(lang)
    data = {"backendCode": code, "backendMessage": message}
    if error.get("detail"):
        data["detail"] = error["detail"]
    # A turn the plan's limit stopped (the v4 path's lastError): the RFD's typed quotaExceeded.
    from .quota_failure import quota_exceeded, quota_reason  # it builds on this module

    reason = quota_reason(data)
    if reason is not None and not is_busy(error):  # the seed's busy answer is a 1308 too, a number
        return quota_exceeded(RpcError(INTERNAL_ERROR, text, data), reason, None, None, lang)
    return RpcError(INTERNAL_ERROR, text, data, wording)


SUBSCRIBE_FLOOR = "0.14.8"
EXTENSIONS_FLOOR = "0.15.0"
# What is known to answer the v4 data plane: installed ZCode 3.14.4, whose CLI is 0.16.9 (captures).
# Which release first shipped it is not known, so no floor is claimed: v4 is detected by the answer.
V4_KNOWN_DESKTOP = "3.14.4"
V4_KNOWN_CLI = "0.16.9"


def cli_too_old(error: Any, lang: str = EN) -> RpcError:
    """``session/subscribe`` does not exist (CLI 0.14.5–0.14.7): say which version is needed, not just -32601."""
    message = error.get("message") if isinstance(error, dict) else str(error)
    return RpcError(
        INTERNAL_ERROR,
        t(lang, "error.cli_too_old", floor=SUBSCRIBE_FLOOR, extensions_floor=EXTENSIONS_FLOOR),
        {"backendCode": METHOD_NOT_FOUND, "backendMessage": message, "minimumVersion": SUBSCRIBE_FLOOR,
         "extensionsMinimumVersion": EXTENSIONS_FLOOR},
    )


def cli_without_v4(error: Any, lang: str = EN) -> RpcError:
    """The v4 data plane was asked for (``ZCODE_ACP_ENGINE_API=v4``) and the engine answered its first v4
    command ``-32601``: say so, what is known to answer it, and the way back to the legacy stream."""
    message = error.get("message") if isinstance(error, dict) else str(error)
    return RpcError(
        INTERNAL_ERROR,
        t(lang, "error.cli_without_v4", desktop=V4_KNOWN_DESKTOP, cli=V4_KNOWN_CLI, floor=SUBSCRIBE_FLOOR,
          extensions_floor=EXTENSIONS_FLOOR),
        {"backendCode": METHOD_NOT_FOUND, "backendMessage": message, "knownToAnswer": V4_KNOWN_CLI},
    )


def is_busy(error: Any) -> bool:
    """True for the backend's "a turn holds the lock" answers (docs/backend-protocol.md §8)."""
    if not isinstance(error, dict):
        return False
    if error.get("code") in BACKEND_BUSY_CODES:
        return True
    message = str(error.get("message") or "").lower()
    return "prompt is running" in message or "already running" in message


def is_not_active(error: Any) -> bool:
    """True when the backend evicted the session (``-32004``)."""
    return isinstance(error, dict) and error.get("code") == BACKEND_SESSION_NOT_ACTIVE

"""JSON-RPC error taxonomy shared by both dialects (docs/protocol-mapping.md, "Errors")."""

from __future__ import annotations

from typing import Any

from .i18n import EN, t

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


class RpcError(Exception):
    """An error that becomes a JSON-RPC ``error`` object.

    Raised by pure code when input is wrong; the runtime turns it into the
    response for the request being served.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    def __repr__(self) -> str:
        return f"RpcError({self.code}, {self.message!r})"


def invalid_params(field: str, problem: str) -> RpcError:
    """A ``-32602`` that names the offending field, as clients need to fix it."""
    return RpcError(INVALID_PARAMS, f"Invalid params: {field} {problem}")


def method_not_found(method: str) -> RpcError:
    return RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")


def session_not_found(session_id: Any) -> RpcError:
    return RpcError(SESSION_NOT_FOUND, f"Session not found: {session_id}")


def internal(message: str) -> RpcError:
    return RpcError(INTERNAL_ERROR, message)


def cancelled() -> RpcError:
    return RpcError(REQUEST_CANCELLED, "Request cancelled")


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
        )
    text = t(lang, "error.backend_error_code" if code is not None else "error.backend_error",
             method=method, message=message, code=code)
    data = {"backendCode": code, "backendMessage": message}
    if error.get("detail"):
        data["detail"] = error["detail"]
    return RpcError(INTERNAL_ERROR, text, data)


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

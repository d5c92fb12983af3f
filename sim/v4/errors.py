"""The error a v4 method answers with (the server turns it into a JSON-RPC error frame)."""

from __future__ import annotations

from typing import Any

INVALID_PARAMS = -32602


class V4Error(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

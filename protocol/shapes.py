"""Typed readers for loosely shaped JSON: what a field holds, if it is what we expect."""

from __future__ import annotations

from typing import Any


def obj(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def integer(value: Any) -> int | None:
    """``value`` if it is a JSON integer (not a boolean), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None

"""Configuration from the environment (documented in README.md and docs/backend-protocol.md §10)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


def _float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


@dataclass(frozen=True)
class Config:
    zcode_bin: str = "zcode"
    extra_args: tuple[str, ...] = ()
    default_mode: str = "yolo"
    zcode_home: Path = field(default_factory=lambda: Path.home() / ".zcode")
    # Backend request timeouts (docs/backend-protocol.md §10), seconds.
    call_timeout: float = 15.0
    subscribe_timeout: float = 5.0
    read_timeout: float = 8.0
    messages_timeout: float = 45.0
    compact_timeout: float = 600.0  # today's engine compacts for minutes
    # A stopped turn still running after this long: close and resume its session (docs/backend-protocol.md §11).
    stop_fallback: float = 5.0
    # A preempting prompt retries the backend's busy lock this often, this long.
    busy_retry_interval: float = 0.5
    busy_retry_limit: float = 60.0
    # A turn that is silent this long is probed with session/read.
    silence_probe: float = 60.0
    # Transient model failures are re-sent this many times (with backoff).
    transient_retries: int = 2
    transient_backoff: float = 1.0
    # How long a seq gap may wait for session/subscribe {afterSeq} to fill it.
    gap_wait: float = 2.0
    # An unanswered question is declined after this long (0: wait for the user, however long).
    interaction_timeout: float = 0.0
    # Teardown: SIGTERM the backend's group, then SIGKILL after this grace.
    kill_grace: float = 1.0

    @classmethod
    def from_env(cls) -> Config:
        env = os.environ
        home = env.get("ZCODE_HOME")
        extra = env.get("ZCODE_DISALLOWED_TOOLS")
        return cls(
            zcode_bin=env.get("ZCODE_BIN") or "zcode",
            extra_args=("--disallowed-tools", extra) if extra else (),
            default_mode=env.get("ZCODE_ACP_MODE") or "yolo",
            zcode_home=Path(home) if home else Path.home() / ".zcode",
            silence_probe=_float("ZCODE_ACP_SILENCE_PROBE", 60.0),
            call_timeout=_float("ZCODE_ACP_CALL_TIMEOUT", 15.0),
            busy_retry_limit=_float("ZCODE_ACP_BUSY_LIMIT", 60.0),
            interaction_timeout=_float("ZCODE_ACP_INTERACTION_TIMEOUT", 0.0),
            stop_fallback=_float("ZCODE_ACP_STOP_FALLBACK", 5.0),
        )

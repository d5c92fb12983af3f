"""Fixtures for driving the simulator process directly (tests/sim)."""

from __future__ import annotations

from pathlib import Path
from collections.abc import Callable, Iterator

import pytest

from tests.sim.peer import SimPeer


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Callable[..., SimPeer]]:
    """Start simulators (``start(dialect, env=...)``); every one is closed after the test."""
    peers: list[SimPeer] = []

    def starter(dialect: str = "classic", env: dict[str, str] | None = None, **kwargs: object) -> SimPeer:
        peer = SimPeer(tmp_path, dialect, env, **kwargs)  # type: ignore[arg-type]
        peers.append(peer)
        return peer

    yield starter
    for peer in peers:
        peer.close()


@pytest.fixture(params=["classic", "cli016"])
def dialect(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def sim(start: Callable[..., SimPeer], dialect: str) -> SimPeer:
    """One simulator per dialect (tests using it run once on each)."""
    return start(dialect)


@pytest.fixture
def today(start: Callable[..., SimPeer]) -> SimPeer:
    return start("cli016")

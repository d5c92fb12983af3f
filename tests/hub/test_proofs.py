"""Proofs between the hub and bridges (issue 29): each is bound to the server it was made for,
the owner check's challenge is under the MAC, and every replay inside the validity window is
refused however many proofs came between (nonces expire by time, in a bounded memory)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hub.harness import TOKEN, HubProcess, http
from zcode_acp.net import proofs

NOW = 1_800_000_000.0
PORT = 40001


def proved(method: str, target: str, host: str, *, challenge: str = "",
           now: float = NOW) -> tuple[str, str]:
    """(the Authorization value, the body digest) of one proved request."""
    headers, _ = proofs.request_headers(TOKEN, method, target, host, challenge=challenge, now=now)
    values = dict(headers)
    return values["Authorization"], values[proofs.BODY_DIGEST_HEADER]


def test_a_proof_is_accepted_only_by_the_server_it_was_made_for() -> None:
    checker = proofs.ProofChecker(TOKEN, audience=PORT)
    mine = proved("GET", "/api/instances", f"127.0.0.1:{PORT}")
    assert checker.verify(*mine[:1], "GET", "/api/instances", f"127.0.0.1:{PORT}", mine[1], NOW)
    # Made for a squatter's port and spent here, Host and all: refused.
    theirs = proved("GET", "/api/instances", "127.0.0.1:40002")
    assert checker.verify(theirs[0], "GET", "/api/instances", "127.0.0.1:40002", theirs[1],
                          NOW) is None
    # A checker that does not know its port accepts nothing.
    unbound = proofs.ProofChecker(TOKEN)
    again = proved("GET", "/", f"127.0.0.1:{PORT}")
    assert unbound.verify(again[0], "GET", "/", f"127.0.0.1:{PORT}", again[1], NOW) is None


def test_the_hub_refuses_a_proof_made_for_another_port(tmp_path: Path) -> None:
    hub = HubProcess(tmp_path)
    try:
        for port, expected in ((hub.port + 1, 401), (hub.port, 200)):
            host = f"127.0.0.1:{port}"
            headers, _ = proofs.request_headers(TOKEN, "GET", "/api/instances", host)
            status, _, _ = http("GET", f"{hub.url}/api/instances", token=None,
                                headers={**dict(headers), "Host": host})
            assert status == expected, (port, status)
    finally:
        hub.stop()


def test_the_challenge_is_under_the_mac() -> None:
    checker = proofs.ProofChecker(TOKEN, audience=PORT)
    host = f"127.0.0.1:{PORT}"
    authorization, digest = proved("GET", proofs.OWNER_PATH, host, challenge="a" * 32)
    # The same proof with the challenge swapped for another: refused.
    assert checker.verify(authorization, "GET", proofs.OWNER_PATH, host, digest, NOW,
                          "b" * 32) is None
    assert checker.verify(authorization, "GET", proofs.OWNER_PATH, host, digest, NOW,
                          "a" * 32) is not None


def test_a_replay_is_refused_inside_the_window_however_many_proofs_came_between() -> None:
    checker = proofs.ProofChecker(TOKEN, audience=PORT)
    host = f"127.0.0.1:{PORT}"
    first = proved("POST", "/api/register", host)
    assert checker.verify(first[0], "POST", "/api/register", host, first[1], NOW)
    for _ in range(5000):  # more than the old memory of 4,096 nonces
        other = proved("POST", "/api/register", host)
        assert checker.verify(other[0], "POST", "/api/register", host, other[1], NOW + 1)
    assert checker.verify(first[0], "POST", "/api/register", host, first[1],
                          NOW + proofs.WINDOW - 1) is None
    # Once out of the window the proof is refused by its time, and forgotten: memory is bounded.
    late = proved("POST", "/api/register", host, now=NOW + 3 * proofs.WINDOW)
    assert checker.verify(late[0], "POST", "/api/register", host, late[1],
                          NOW + 3 * proofs.WINDOW)
    assert checker.remembered == 1


def test_a_full_memory_refuses_new_proofs_rather_than_forget_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(proofs, "MAX_NONCES", 3)
    checker = proofs.ProofChecker(TOKEN, audience=PORT)
    host = f"127.0.0.1:{PORT}"
    for _ in range(3):
        one = proved("GET", "/", host)
        assert checker.verify(one[0], "GET", "/", host, one[1], NOW)
    extra = proved("GET", "/", host)
    assert checker.verify(extra[0], "GET", "/", host, extra[1], NOW) is None
    later = proved("GET", "/", host, now=NOW + proofs.WINDOW + 1)
    assert checker.verify(later[0], "GET", "/", host, later[1], NOW + proofs.WINDOW + 1)

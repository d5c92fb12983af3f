"""The hub's instance table: validation, heartbeats and the de-duplicated listing."""

from __future__ import annotations

from typing import Any

import pytest

from zcode_acp.hub.registry import Registry, RegistrationError, instant, parse_registration
from zcode_acp.hub.versioning import is_newer


def body(instance_id: str, started: Any = 1000, sessions: list[dict[str, Any]] | None = None,
         **extra: Any) -> dict[str, Any]:
    return {"id": instance_id, "pid": 10, "port": 9000, "origin": "editor",
            "workspace": "/w", "startedAt": started, "version": "0.1.0",
            "sessions": sessions or [], **extra}


def register(registry: Registry, data: dict[str, Any], now: float = 0.0) -> None:
    registry.register(parse_registration(data, now_ms=5.0), now)


def test_session_on_several_instances_is_listed_once_newest_wins() -> None:
    registry = Registry()
    register(registry, body("a", 1000, [{"sessionId": "s1", "updatedAt": 10},
                                        {"sessionId": "shared", "updatedAt": 500}]))
    register(registry, body("b", 2000, [{"sessionId": "shared", "updatedAt": 300,
                                         "status": "running", "title": "T"},
                                        {"sessionId": "s2", "updatedAt": 1}]))
    listing = {i["id"]: [s["sessionId"] for s in i["sessions"]] for i in registry.listing()}
    assert listing == {"a": ["s1", "shared"], "b": ["s2"]}
    # Newer copy on b now: it moves there.
    register(registry, body("b", 2000, [{"sessionId": "shared",
                                         "updatedAt": "1970-01-01T00:00:01Z"}]))
    listing = {i["id"]: [s["sessionId"] for s in i["sessions"]] for i in registry.listing()}
    assert listing == {"a": ["s1"], "b": ["shared"]}


def test_tie_goes_to_the_instance_started_last() -> None:
    registry = Registry()
    register(registry, body("old", 1000, [{"sessionId": "s", "updatedAt": 7}]))
    register(registry, body("new", 2000, [{"sessionId": "s", "updatedAt": 7}]))
    assert [i["sessions"] for i in registry.listing()] == [[], [
        {"sessionId": "s", "updatedAt": 7, "status": "idle"}]]


def test_listing_fields_and_order() -> None:
    registry = Registry()
    register(registry, body("later", 3000))
    register(registry, body("first", "1970-01-01T00:00:01+00:00", origin="serve"))
    listing = registry.listing()
    assert [i["id"] for i in listing] == ["first", "later"]
    assert listing[0] == {"id": "first", "pid": 10, "port": 9000, "origin": "serve",
                          "workspace": "/w", "startedAt": "1970-01-01T00:00:01+00:00",
                          "version": "0.1.0", "sessions": []}


def test_heartbeat_keeps_the_first_start_time_and_refreshes_last_seen() -> None:
    registry = Registry()
    register(registry, body("a", 1000), now=1.0)
    register(registry, body("a", 9999), now=20.0)
    instance = registry.get("a")
    assert instance is not None
    assert instance.registration.started_at == 1000 and instance.last_seen == 20.0
    assert registry.silent(now=45.0, after=30.0) == []
    assert [i.id for i in registry.silent(now=50.0, after=30.0)] == ["a"]
    assert registry.unregister("a") and not registry.unregister("a")


@pytest.mark.parametrize("data,problem", [
    ([], "object"),
    ({"port": 1}, "id"),
    (body("a") | {"port": 0}, "port"),
    (body("a") | {"port": "80"}, "port"),
    (body("a") | {"origin": "phone"}, "origin"),
    (body("a") | {"sessions": "none"}, "sessions"),
    (body("a") | {"sessions": [{"title": "no id"}]}, "sessionId"),
    (body("a") | {"startedAt": "yesterday"}, "startedAt"),
    (body("a") | {"pid": -1}, "pid"),
])
def test_invalid_registrations(data: object, problem: str) -> None:
    with pytest.raises(RegistrationError, match=problem):
        parse_registration(data, now_ms=0)


def test_instants_and_versions() -> None:
    assert instant(1500) == 1500.0
    assert instant("1970-01-01T00:00:02Z") == 2000.0
    assert instant("garbage") == 0.0
    assert is_newer("0.10.0", "0.9.3") and not is_newer("0.9.3", "0.10.0")
    assert not is_newer("0.1.0", "0.1") and not is_newer("0.0.0+source", "0.1.0")
    assert not is_newer("banana", "0.1.0") and not is_newer("1.0.0", "banana")


def test_an_id_that_commits_to_a_key_is_that_keys_alone_from_its_first_registration() -> None:
    """A restarted hub's table is empty: a key-bound id (net/registration_key.py) cannot be taken first."""
    from zcode_acp.hub.registry import TakeOver
    from zcode_acp.net import registration_key

    key = registration_key.new_key()
    bridge_id = registration_key.instance_id_for(key)
    assert registration_key.is_key_bound(bridge_id) and not registration_key.is_key_bound("fake-1")
    registry = Registry()
    for forged in ({}, {"key": "f" * 32}, {"key": key + "x"}):
        with pytest.raises(TakeOver):
            register(registry, body(bridge_id, **forged))
    assert len(registry) == 0
    register(registry, body(bridge_id, key=key))
    register(registry, body("an-old-bridge"))  # ids of any other form: first come, as before
    assert {i["id"] for i in registry.listing()} == {bridge_id, "an-old-bridge"}

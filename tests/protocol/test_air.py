"""The AIR extension set's names and shapes against the reference adapters' own
(tests/protocol/golden/air/reference.json, read from their npm packages; protocol/air.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from zcode_acp.protocol import air, extension_calls, handshake
from zcode_acp.protocol.errors import RpcError

GOLDEN = json.loads((Path(__file__).parent / "golden" / "air" / "reference.json").read_text(encoding="utf-8"))


def at(value: Any, path: list[str]) -> Any:
    for key in path:
        value = value[key]
    return value


def test_an_air_client_that_declares_the_index_gets_the_reference_discovery_meta() -> None:
    discovery = GOLDEN["discovery"]
    result = handshake.initialize_result(1, "1.0", client_capabilities=discovery["client_declares"])
    meta = at(result, discovery["agent_meta_path"])
    assert sorted(meta) == sorted(discovery["agent_air_keys"])
    assert meta["version"] == discovery["air_version"]
    for capability in [*discovery["index_capabilities_when_client_declares_sessionIndex"],
                       discovery["session_failure_capability"]]:
        assert capability in meta["capabilities"]
    assert {key: meta["goal"][key] for key in discovery["goal"]} == discovery["goal"]
    assert meta["goal"]["actions"] == discovery["goal_actions"]["codex-acp"]
    assert result["_meta"]["steering"] == discovery["steering"]["steering"]


def test_other_clients_get_steering_and_no_air_key() -> None:
    result = handshake.initialize_result(1, "1.0", client_capabilities={"fs": {"readTextFile": True}})
    assert result["_meta"] == GOLDEN["discovery"]["steering"]
    plain_air = {"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": []}}}}
    meta = handshake.initialize_result(1, "1.0", client_capabilities=plain_air)["_meta"]["jetbrains"]["air"]
    assert "sessionIndex" not in meta["capabilities"]  # the index only for a client that declares it


def test_the_early_answer_carries_the_same_meta() -> None:
    caps = GOLDEN["discovery"]["client_declares"]
    line = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                       "params": {"protocolVersion": 1, "clientCapabilities": caps}}).encode() + b"\n"
    early = json.loads(handshake.early_initialize_answer(line, "1.0") or b"{}")
    assert early["result"] == handshake.initialize_result(1, "1.0", client_capabilities=caps)


def test_every_reference_method_has_a_route() -> None:
    from zcode_acp.actors.air_index import AirSessionIndex
    from zcode_acp.actors.session.extensions.table import extension_name

    routed = set(AirSessionIndex().air_methods())
    for name, method in GOLDEN["methods"].items():
        if name == "list_changes":
            assert method == air.LIST_CHANGES_METHOD  # a notification the bridge sends
            continue
        assert method in routed or extension_name(method) is not None, method


def test_the_list_filter_reads_the_reference_path_and_values() -> None:
    shapes = GOLDEN["shapes"]
    assert air.archived_filter({}) == shapes["list_filter_default"]
    for value in shapes["list_filters"]:
        meta: dict[str, Any] = {}
        node = meta
        for key in shapes["list_filter_path"][1:-1]:
            node = node.setdefault(key, {})
        node[shapes["list_filter_path"][-1]] = value
        assert air.archived_filter({"_meta": meta}) == value
    with pytest.raises(RpcError):
        air.archived_filter({"_meta": {"jetbrains": {"air": {"list": {"archived": "yes"}}}}})
    row = air.with_archived({"sessionId": "a", "cwd": "/w"}, True)
    assert at(row, shapes["row_archived_path"]) is True


def test_batch_get_takes_distinct_non_blank_ids() -> None:
    assert air.session_ids({"sessionIds": ["a", "b"]}) == ["a", "b"]
    for bad in (["a", "a"], [" "], "a", [1]):
        with pytest.raises(RpcError):
            air.session_ids({"sessionIds": bad})


@pytest.mark.parametrize("kind", sorted(GOLDEN["session_failure"]["policy"]))
def test_a_typed_failure_has_the_reference_keys_category_and_actions(kind: str) -> None:
    failure = GOLDEN["session_failure"]
    update = air.failure_update("s:turn-1:error", 1, kind, "It failed")
    assert update["sessionUpdate"] == failure["update"]
    body = at(update, failure["meta_path"])
    assert sorted(body) == sorted(failure["keys"])
    assert {"category": body["category"], "actions": body["actions"]} == failure["policy"][kind]
    assert body["severity"] == "error" and body["revision"] == 1


@pytest.mark.parametrize("data, kind", [
    ({"backendCode": "insufficient_quota", "backendMessage": "You exceeded your current quota"}, "quota_exhausted"),
    ({"backendCode": 1113, "backendMessage": "余额不足或无可用资源包"}, "quota_exhausted"),
    ({"backendCode": 429, "backendMessage": "Too Many Requests"}, "rate_limited"),
    ({"errorType": "provider", "backendMessage": "the model answered nonsense"}, "provider_error"),
])
def test_the_failure_kind_of_an_engine_error(data: dict[str, Any], kind: str) -> None:
    assert air.failure_kind(data) == kind


def test_steering_and_async_task_stop_take_the_reference_params() -> None:
    steering = GOLDEN["shapes"]["steering"]
    call = extension_calls.steering({
        "sessionId": "s", "prompt": [{"type": "text", "text": "also this"}], **steering["idle_opt_in"]})
    assert call == extension_calls.Steer("also this", prompt_required_when_idle=True)
    with pytest.raises(RpcError):
        extension_calls.steering({"sessionId": "s", "prompt": "x", "_meta": {"steering": {"idleBehavior": "queue"}}})
    stop = extension_calls.async_task_stop({"sessionId": "s", "asyncTaskId": " t1 "})
    assert stop == extension_calls.TaskStop("t1")
    with pytest.raises(RpcError):
        extension_calls.async_task_stop({"sessionId": "s", "asyncTaskId": ""})

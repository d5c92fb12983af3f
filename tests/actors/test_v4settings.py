"""v4/settings.py: a settings change as the engine's v4 command, checked against the official schema."""

import json
from pathlib import Path

import jsonschema
import pytest

from zcode_acp.actors.session.v4.settings import settings_command
from zcode_acp.protocol.errors import RpcError
from zcode_acp.protocol.session_config import SessionSettings
from zcode_acp.protocol.v4 import commands as v4

SCHEMA = json.loads((Path(__file__).parents[2] / "schemas" / "engine" / "v4" / "command.json").read_text())


def sent(command: v4.Command) -> dict:
    """The envelope as it goes to the engine, validated against the schema's payload for its type."""
    params = v4.envelope(command, command_id="c1", client_id="zcode-acp", issued_at=1, base=v4.Base(7, "epoch-1"))
    jsonschema.validate(params["payload"], SCHEMA["$defs"]["payloads"][params["type"]])
    return params


def test_a_mode_change_is_switch_collaboration_mode_with_its_base_revision():
    params = sent(settings_command("s1", SessionSettings(), None, "mode", "plan"))
    assert (params["type"], params["payload"], params["baseRevision"]) == ("switchCollaborationMode", {"mode": "plan"}, 7)


def test_a_thought_change_names_the_current_model_and_the_engines_provider():
    current = SessionSettings(model="glm-5", thought="high")
    params = sent(settings_command("s1", current, {"provider": "zhipu"}, "thought", "low"))
    assert params["type"] == "switchModelConfig"
    assert params["payload"] == {"provider": "zhipu", "model": "glm-5", "thought": "low"}


def test_a_mode_the_engine_has_no_name_for_is_refused_before_sending():
    with pytest.raises(RpcError) as refused:
        settings_command("s1", SessionSettings(), None, "mode", "auto")
    assert refused.value.code == -32602


def test_a_model_without_a_known_provider_is_refused():
    with pytest.raises(RpcError) as refused:
        settings_command("s1", SessionSettings(), None, "model", "glm-5")
    assert refused.value.code == -32602


def test_a_fork_continues_from_the_newest_row_the_engine_grants_can_fork():
    from zcode_acp.actors.session.v4.settings import fork_target

    rows = [{"rowId": 1, "kind": "userInput", "entityId": "u1"},
            {"rowId": 2, "kind": "assistantText", "entityId": "a1", "state": "complete", "actions": {"canFork": True}},
            {"rowId": 3, "kind": "assistantText", "entityId": "a2", "state": "streaming"}]
    assert fork_target(rows) == v4.RowTarget(2, "a1")
    params = sent(v4.fork_assistant("s1", fork_target(rows)))
    assert params["payload"] == {"target": {"rowId": 2, "entityId": "a1"}} and params["baseLogEpoch"]
    assert fork_target(rows[:1]) is None

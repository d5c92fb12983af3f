"""protocol/v4/workspace_config_apply.py: the workspace-config topic, and the captured slash commands as ACP commands."""

from tests.protocol.v4_captures import capture
from tests.schema import assert_valid_update
from zcode_acp.protocol.v4 import workspace_config_apply as wc
from zcode_acp.protocol.v4.topic import Applied, ResyncNeeded, TopicSubscription
from zcode_acp.protocol.v4.wire import parse_wire

TOPIC = "workspace-config//fixture/queue-guide-goal-workspace"
CAPTURED_COMMANDS = next(
    r["result"]["slashCommands"] for r in capture("queue-guide-goal-official-config")
    if r.get("method") == "workspace/readPresentation" and r["kind"] == "response"
)


def send(sub, ordinal, from_seq, to_seq, payload):
    frame = {"topic": TOPIC, "subscriptionId": "cfg-1", "sentAt": 0, "fromSeq": from_seq, "toSeq": to_seq, "payload": payload}
    wire = {"wireVersion": 3, "kind": "complete", "deliveryKind": "online", "logicalFrameId": f"lf-{ordinal}",
            "logicalFrameOrdinal": ordinal, "topic": TOPIC, "subscriptionId": "cfg-1", "frame": frame}
    (outcome,) = sub.accept(parse_wire(wire), 0)
    return outcome


def test_the_config_is_replaced_whole_and_its_slash_commands_become_acp_commands():
    sub = TopicSubscription(TOPIC, wc.WorkspaceConfigState())
    sub.subscribed({"subscriptionId": "cfg-1", "mode": "snapshot", "logEpoch": "e"})
    first = {"configOptions": [], "slashCommands": CAPTURED_COMMANDS[:2]}
    snapshot = {"protocolVersion": 1, "workspaceId": "/fixture/queue-guide-goal-workspace", "logEpoch": "e", "config": first}
    assert isinstance(send(sub, 1, 0, 1, {"kind": "snapshot", "snapshot": snapshot}), Applied)
    later = {"configOptions": [], "slashCommands": CAPTURED_COMMANDS}
    outcome = send(sub, 2, 1, 2, {"kind": "deltas", "deltas": [{"op": "config.updated", "config": later}]})
    assert outcome.changes == [wc.ConfigReplaced(later, first)]
    update = wc.available_commands(sub.applier.config["slashCommands"])
    assert_valid_update(update)
    by_name = {c["name"]: c for c in update["availableCommands"]}
    assert set(by_name) == {"goal", "compact", "init", "plan", "build-agent", "build-mcp"}
    description = "Compact the current conversation with optional instructions."
    assert by_name["compact"] == {"name": "compact", "description": description, "input": {"hint": "/compact [instructions]"}}


def test_a_config_without_its_arrays_fails_the_frame():
    sub = TopicSubscription(TOPIC, wc.WorkspaceConfigState())
    sub.subscribed({"subscriptionId": "cfg-1", "mode": "snapshot", "logEpoch": "e"})
    assert isinstance(send(sub, 1, 0, 1, {"kind": "snapshot", "snapshot": {"config": {"slashCommands": []}}}), ResyncNeeded)

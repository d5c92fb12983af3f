"""sim/v4 under random commands and events: every request answered once, every ack and frame well-formed.

Hypothesis drives the plane the way a bridge and an engine would together — prompts with
any delivery, stops, queue edits, interactions asked and answered, tools, turns ending —
and after every step checks the simulator's snapshot against the source's shapes, every
ack with the bridge's parser, and that the bridge's decoder holds what the simulator holds.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.sim.v4_fakes import Engine, call, create_session, make_plane, subscribe
from tests.sim.v4_shapes import check_snapshot
from zcode_acp.protocol.v4 import commands as bridge

ACTIONS = st.lists(st.sampled_from([
    "send", "send_guide", "send_queue", "stop", "start", "text", "tool", "ask", "answer", "complete", "fail",
    "edit_queue", "delete_queue", "reorder_queue", "send_now", "auto_drain", "followup_guide", "rename", "retry",
    "gap", "checksum", "duplicate", "stale_subscription", "fragment",
]), min_size=1, max_size=25)
FAULTS = frozenset(("gap", "checksum", "duplicate", "stale_subscription", "fragment"))


GUARD_FAILURES = frozenset(("guard.latestQueryEditOnly", "guard.latestAssistantRetryOnly", "guard.forkTargetNotStable",
                            "compactOperationLock", "heldQueueDispositionRequired",
                            "guard.heldQueueConfirmationStale"))


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=300)
@given(actions=ACTIONS, fragment_bytes=st.sampled_from([400, 256 * 1024]))
def test_random_commands_and_events_keep_every_frame_and_ack_well_formed(actions: list[str], fragment_bytes: int) -> None:
    plane, port, wire, clock = make_plane(fragment_bytes=fragment_bytes)
    session_id = create_session(plane, wire)
    client, _ = subscribe(plane, wire, f"conversation/{session_id}")
    engine = Engine(plane, session_id, wire)
    projection = plane.sessions.get(session_id)
    asked = 0

    def send(command: bridge.Command, based: bool = False) -> dict[str, Any]:
        base = bridge.Base(projection.revision, projection.log.log_epoch) if based else None
        params = bridge.envelope(command, command_id=f"c{len(wire.log)}", client_id="bridge", issued_at=1, base=base)
        ack = call(plane, "v4/command", params, wire)
        assert isinstance(bridge.parse_ack(ack), bridge.CommandAck), ack
        # The engine's guards fail a command with their own reason (fork-edit-retry.ts, goal-compact.ts,
        # input-admission.ts); any other failure is a simulator fault.
        assert ack["status"] != "failed" or ack["reasonCode"] in GUARD_FAILURES, ack
        return dict(ack)

    def queue_item(index: int = 0) -> str | None:
        items = projection.state["queue"]["items"]
        return items[index % len(items)]["queueItemId"] if items else None

    for step, action in enumerate(actions):
        started = projection.running
        if action in FAULTS:
            plane.faults.arm(action)
        elif action == "send":
            send(bridge.send_text(session_id, f"prompt {step}"))
        elif action == "send_guide":
            send(bridge.send_text(session_id, f"guide {step}", requested_delivery="guide"))
        elif action == "send_queue":
            send(bridge.send_text(session_id, f"queued {step}", requested_delivery="queue"))
        elif action == "stop":
            send(bridge.stop(session_id))
        elif action == "start" and not started:
            engine.start(f"legacy prompt {step}")
        elif action == "text" and started:
            engine.text(f"words {step}")
        elif action == "tool" and started:
            engine.tool(f"tool_{step}", tails=(f"out {step}\n",))
        elif action == "ask" and started:
            asked += 1
            engine.event("permission.requested", {"requestId": f"server-{asked}", "toolName": "Write",
                                                  "autoResolveMs": 1000 * (step % 2)})
        elif action == "answer" and projection.state["pendingInteractions"]:
            item = projection.state["pendingInteractions"][0]
            send(bridge.resolve_interaction(session_id, item["interactionId"], option_id="allow_once"))
        elif action == "complete" and started:
            engine.complete("cancelled" if step % 3 == 0 else "success")
        elif action == "fail" and started:
            engine.event("turn.failed", {"error": {"code": "PROVIDER", "message": "overloaded"}})
        elif action == "edit_queue" and queue_item():
            send(bridge.edit_queue_item(session_id, queue_item() or "", f"edited {step}"), based=True)
        elif action == "delete_queue" and queue_item():
            send(bridge.delete_queue_item(session_id, queue_item(step) or ""), based=True)
        elif action == "reorder_queue" and queue_item():
            send(bridge.reorder_queue_item(session_id, queue_item(step) or "", None), based=True)
        elif action == "send_now" and queue_item():
            send(bridge.send_queued_now(session_id, queue_item() or ""), based=True)
        elif action == "auto_drain":
            send(bridge.set_auto_drain(session_id, step % 2 == 0), based=True)
        elif action == "followup_guide":
            send(bridge.set_followup_mode(session_id, "guide" if step % 2 else "queue"), based=True)
        elif action == "rename":
            send(bridge.rename_session(session_id, f"title {step}"))
        elif action == "retry":
            users = [r for r in projection.rows.rows if r["kind"] == "userInput"]
            if users:
                send(bridge.retry_turn(session_id, bridge.RowTarget(users[-1]["rowId"], users[-1]["entityId"])),
                     based=True)
        plane.tick(clock.now)
        wire.pump()
        if projection.expected and not projection.running:
            engine.start(projection.expected[0].text)  # the engine starts the turn it was asked for
        check_snapshot(projection.snapshot())
        if client.sub.seq == projection.log.seq:  # a dropped frame is only noticed when the next one comes
            _same(client, projection)
    settle = 0
    while plane.faults.pending or settle == 0:  # frames until every armed fault has played, then one more
        settle += 1
        send(bridge.rename_session(session_id, f"settled {settle}"))
        assert settle < 20
    send(bridge.rename_session(session_id, "settled"))
    _same(client, projection)


def _same(client: Any, projection: Any) -> None:
    held = client.picture()
    held.pop("seq", None)
    ours = projection.snapshot()
    assert client.sub.seq == ours.pop("seq")
    assert held == ours

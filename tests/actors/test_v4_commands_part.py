"""``V4Commands`` (a v4 Session's command acks) against the simulator's own data plane.

Each call is answered by a real ``DataPlane``; a lost ack is played by answering the
call with the timeout error the Backend's correlation table gives, after the plane
decided the command (so the plane knows it, as the engine would).
"""

from __future__ import annotations

import json
import time
from typing import Any

from zcode_acp.actors.session.v4.commands import STALE_WAIT_MS, V4Commands
from zcode_acp.protocol.v4 import commands as v4
from zcode_acp.sim.v4.faults import Faults
from zcode_acp.sim.v4.plane import DataPlane
from tests.sim.v4_fakes import WORKSPACE, Clock, FakePort

TIMEOUT = {"code": -32603, "message": "ZCode backend did not answer v4/command within 15s", "timeout": True}


class PlanePort:
    def __init__(self) -> None:
        self.plane = DataPlane(FakePort(), lambda frame: None, clock=Clock(), faults=Faults(""))
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.lose: set[int] = set()  # indexes of calls whose answer is lost (decided, then a timeout)
        self.drop: set[int] = set()  # indexes of calls that never reach the engine (then a timeout)
        self.revision = 0
        self.wakes: list[float] = []

    def v4_wake(self, seconds: float) -> None:
        self.wakes.append(seconds)

    def engine_call(self, method: str, params: dict[str, Any], then: Any, timeout: float | None = None) -> None:
        index = len(self.calls)
        self.calls.append((method, params))
        if index in self.drop:
            then(None, TIMEOUT)
            return
        answers: list[Any] = []
        self.plane.dispatch(method, json.loads(json.dumps(params)), lambda r, e: answers.append((r, e)))
        result, error = answers[0]
        if index in self.lose:
            then(None, TIMEOUT)
        else:
            then(json.loads(json.dumps(result)), None if error is None else {"code": error.code, "message": error.message})

    def v4_base(self) -> v4.Base:
        return v4.Base(self.revision, None)


def outcome(commands: V4Commands, command: v4.Command) -> list[Any]:
    got: list[Any] = []
    commands.send(command, lambda ack, error: got.append((ack, error)))
    assert len(got) == 1, "done is called exactly once"
    return got[0]


def session(port: PlanePort, commands: V4Commands) -> str:
    ack, error = outcome(commands, v4.create_session(WORKSPACE))
    assert error is None and ack.status == "accepted"
    return str(ack.result["sessionId"])


def moved(port: PlanePort, sid: str) -> int:
    """The engine's state moves on (another client renamed the session); its revision now."""
    projection = port.plane.sessions.get(sid)
    projection.set("meta", {"title": "renamed elsewhere", "titleSource": "custom"})
    projection.commit()
    assert projection.revision > 0
    return int(projection.revision)


def test_a_stale_command_waits_for_the_feed_to_reach_the_engines_state_then_goes_again_once():
    """Issue 31: retried at once, a stale command carries the same old base (the frames that move the
    feed follow the ack); it goes again only once the feed shows ``revisionAtDecision``."""
    port = PlanePort()
    commands = V4Commands(port, "bridge")
    sid = session(port, commands)
    current = moved(port, sid)
    port.revision = 0  # the feed is behind: frames not read yet
    got: list[Any] = []
    commands.send(v4.set_followup_mode(sid, "guide"), lambda ack, error: got.append((ack, error)))
    sent = [params for method, params in port.calls if params.get("type") == "setFollowupMode"]
    assert len(sent) == 1 and got == [] and port.wakes, "it waits (a timer armed), not sent again behind the feed"
    commands.caught_up(time.time() * 1000)
    assert len([p for _, p in port.calls if p.get("type") == "setFollowupMode"]) == 1, "the feed has not moved"
    port.revision = current  # the frames came
    commands.caught_up(time.time() * 1000)
    sent = [params for method, params in port.calls if params.get("type") == "setFollowupMode"]
    assert [p["baseRevision"] for p in sent] == [0, current] and sent[0]["commandId"] != sent[1]["commandId"]
    [(ack, error)] = got
    assert error is None and ack.status == "accepted"


def test_a_stale_command_whose_feed_never_catches_up_fails_at_the_deadline():
    port = PlanePort()
    commands = V4Commands(port, "bridge")
    sid = session(port, commands)
    moved(port, sid)
    port.revision = 0
    got: list[Any] = []
    commands.send(v4.set_followup_mode(sid, "guide"), lambda ack, error: got.append((ack, error)))
    commands.caught_up(time.time() * 1000 + STALE_WAIT_MS + 1)
    [(ack, error)] = got
    assert ack.status == "stale" and "proto.staleRevision" in error.message
    assert len([p for _, p in port.calls if p.get("type") == "setFollowupMode"]) == 1


def test_the_epoch_is_caught_up_only_when_a_new_one_is_seen():
    ack = v4.CommandAck("c", "stale", "proto.staleLogEpoch", None, 5, None)
    sent = v4.Base(3, "epoch-1")
    assert not v4.caught_up(ack, sent, v4.Base(4, "epoch-2")), "behind the engine's revision"
    assert not v4.caught_up(ack, sent, v4.Base(5, "epoch-1")), "the epoch the engine refused"
    assert v4.caught_up(ack, sent, v4.Base(5, "epoch-2"))
    revision = v4.CommandAck("c", "stale", "proto.staleRevision", None, 5, None)
    assert v4.caught_up(revision, sent, v4.Base(5, "epoch-1")) and not v4.caught_up(revision, sent, v4.Base(4, "epoch-1"))


def test_stale_twice_is_refused_naming_the_reason():
    port = PlanePort()
    commands = V4Commands(port, "bridge")
    sid = session(port, commands)
    port.revision = 999
    ack, error = outcome(commands, v4.set_followup_mode(sid, "guide"))
    assert ack.status == "stale" and "proto.staleRevision" in error.message
    assert len([p for _, p in port.calls if p.get("type") == "setFollowupMode"]) == 2  # once, then once more


def test_a_lost_ack_is_asked_for_and_the_engines_decision_counts():
    port = PlanePort()
    commands = V4Commands(port, "bridge")
    sid = session(port, commands)
    port.lose = {len(port.calls)}
    ack, error = outcome(commands, v4.rename_session(sid, "named"))
    methods = [method for method, _ in port.calls[-2:]]
    assert methods == ["v4/command", "v4/commands/query"]
    assert error is None and ack.status == "accepted"
    assert len(port.plane.commands.port.named("rename")) == 1  # not sent again: it had arrived


def test_a_command_that_never_arrived_is_sent_again_under_the_same_id():
    port = PlanePort()
    commands = V4Commands(port, "bridge")
    sid = session(port, commands)
    port.drop = {len(port.calls)}
    ack, error = outcome(commands, v4.rename_session(sid, "named"))
    sent = [params for method, params in port.calls if method == "v4/command" and params["type"] == "renameSession"]
    assert len(sent) == 2 and sent[0]["commandId"] == sent[1]["commandId"]
    assert [method for method, _ in port.calls[-3:]] == ["v4/command", "v4/commands/query", "v4/command"]
    assert error is None and ack.status == "accepted"


def test_a_duplicate_is_success_and_a_rejection_is_an_error():
    port = PlanePort()
    commands = V4Commands(port, "bridge")
    sid = session(port, commands)
    ack, error = outcome(commands, v4.send_text(sid, "hello"))
    assert error is None
    first = next(p for _, p in port.calls if p.get("type") == "sendText")
    answers: list[Any] = []
    port.plane.dispatch("v4/command", first, lambda r, e: answers.append(r))
    assert answers[0]["status"] == "duplicate"
    assert v4.judge(v4.parse_ack(answers[0])) is v4.Verdict.SUCCEEDED
    ack, error = outcome(commands, v4.send_text("sess_nobody", "hello"))
    assert ack.status == "rejected" and error is not None and "proto.sessionNotFound" in error.message

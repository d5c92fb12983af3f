"""``V4Commands`` remembers the commands it sent, so the translator knows a marker this bridge caused.

Against the simulator's data plane (tests/actors/test_v4_commands_part.py): a model switch this
bridge asked for leaves a ``modelChange`` marker naming the command (rows.ts ``sourceCommandId``).
"""

from __future__ import annotations

from zcode_acp.actors.session.v4.commands import ISSUED_KEPT, V4Commands
from zcode_acp.protocol.v4 import commands as v4
from tests.actors.test_v4_commands_part import PlanePort, outcome, session


def test_a_command_sent_is_known_as_this_bridges_and_a_stranger_is_not():
    port = PlanePort()
    commands = V4Commands(port, "client-1")
    session(port, commands)
    [(_, params)] = port.calls
    assert commands.issued(params["commandId"])
    assert not commands.issued("someone-elses-command")


def test_only_the_last_commands_are_kept():
    port = PlanePort()
    commands = V4Commands(port, "client-1")
    sid = session(port, commands)
    first = port.calls[0][1]["commandId"]
    for _ in range(ISSUED_KEPT):
        outcome(commands, v4.rename_session(sid, "t"))
    assert not commands.issued(first)
    assert commands.issued(port.calls[-1][1]["commandId"])

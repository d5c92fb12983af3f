"""The Session's Controls: compaction from request to the engine's word, and a refused task cancel.

Answers shaped as the engine's: today's ``{response: "", snapshot, compact: {state, operationId}}`` then a
``state.updated`` reason; the seed's ``{compacted: true}``, which it wrote after its ``state.updated``.
"""

from typing import Any

import pytest

from zcode_acp.actors.session.extensions import Controls
from zcode_acp.protocol import commands
from tests.actors.test_session_parts import FakePort

ACCEPTED = {"response": "", "snapshot": {}, "compact": {"state": "accepted", "operationId": "op1"}}


def compacting(port: FakePort) -> tuple[Controls, list[Any], list[Any]]:
    controls, answers, errors = Controls(port), [], []
    controls.extension("session/compact", commands.extension_call("session/compact", {}), None, None,
                       answers.append, errors.append)
    return controls, answers, errors


def test_an_accepted_compaction_holds_prompts_until_the_engine_says_it_is_over():
    port = FakePort()
    controls, answers, errors = compacting(port)
    port.calls[0][2](ACCEPTED)  # accepted: the engine compacts on
    assert controls.hold_turn(7) is True and answers == [] and port.started == []
    assert "compaction to finish" in port.delivered[-1]["content"]["text"]  # the user reads why it waits
    controls.compaction_ended("prompt_started")  # another reason: not the end
    assert answers == []
    controls.compaction_ended("session_compacted")
    assert port.started == [7] and errors == []
    assert answers == [{**ACCEPTED, "compact": {"state": "completed", "operationId": "op1"}}]
    assert controls.hold_turn(8) is False


def test_a_failed_compaction_is_an_error_and_a_cancelled_one_says_so():
    port = FakePort()
    controls, answers, errors = compacting(port)
    port.calls[0][2](ACCEPTED)
    controls.compaction_ended("session_compact_failed")
    assert answers == [] and "compaction failed" in errors[0].message
    port = FakePort()
    controls, answers, errors = compacting(port)
    port.calls[0][2](ACCEPTED)
    controls.compaction_ended("session_compact_cancelled")
    assert answers[0]["compact"]["state"] == "cancelled" and errors == []


def test_the_seeds_engine_ends_before_it_answers():
    port = FakePort()
    controls, answers, _ = compacting(port)
    controls.compaction_ended("session_compacted")  # written before the answer
    assert answers == [] and controls.hold_turn(3) is True
    port.calls[0][2]({"compacted": True})
    assert answers == [{"compacted": True}] and port.started == [3]


def test_a_lost_backend_ends_the_wait_once():
    port = FakePort()
    controls, answers, errors = compacting(port)
    port.calls[0][2](ACCEPTED)
    controls.hold_turn(5)
    controls.compaction_lost({"message": "backend exited during the compaction"})
    assert [e.message for e in errors] == ["ZCode backend error on session/compact: backend exited during the "
                                           "compaction"] and port.started == [5]
    controls.compaction_ended("session_compacted")  # too late: answered already
    assert answers == [] and len(errors) == 1


def test_a_task_the_engine_did_not_cancel_keeps_its_card():
    port = FakePort()
    call = commands.extension_call("session/cancelBackgroundTask", {"sessionId": "s", "taskId": "t9"})
    answers: list[Any] = []
    Controls(port).extension("session/cancelBackgroundTask", call, None, None, answers.append, pytest.fail)
    port.calls[0][2]({"cancelled": False})
    assert port.cancelled == [] and answers == [{"cancelled": False}]

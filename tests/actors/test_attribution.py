"""Which backend turn belongs to which Turn (engine-today row 10), fed as the Session feeds it."""

from zcode_acp.actors.session.attribution import Attribution


def started(turn_id, execution=None, background=False):
    payload = {"inputSource": "background_task" if background else "user"}
    if execution:
        payload["foregroundExecutionId"] = execution
    return {"type": "turn.started", "turnId": turn_id, "payload": payload}


def event(kind, turn_id):
    return {"type": kind, "turnId": turn_id, "payload": {}}


def test_a_start_after_the_answer_goes_to_the_oldest_waiting_send():
    a = Attribution()
    assert a.accepted(1) is None and a.accepted(2) is None
    first = a.event(started("t1", "exec_1"))
    second = a.event(started("t2"))
    assert (first.key, first.turn_id, first.execution_id) == (1, "t1", "exec_1")
    assert (second.key, second.turn_id) == (2, "t2")


def test_an_early_start_is_claimed_by_the_send_answered_next_with_its_events():
    a = Attribution()
    assert a.event(started("t1", "exec_1")) is None
    assert a.event(event("model.streaming", "t1")) is None
    claim = a.accepted(7)
    assert (claim.key, claim.turn_id, claim.execution_id) == (7, "t1", "exec_1")
    assert [e["type"] for e in claim.held] == ["turn.started", "model.streaming"]


def test_a_stale_start_is_never_adopted():
    a = Attribution()
    # A turn that started and ended before our send was answered.
    a.event(started("old"))
    a.event(event("turn.completed", "old"))
    assert a.accepted(1) is None  # waits for its own start
    # A start seen before a refused (busy) send belongs to no send of ours.
    b = Attribution()
    b.event(started("running"))
    b.refused()
    assert b.accepted(2) is None
    assert b.event(started("mine")).turn_id == "mine"


def test_background_starts_are_never_claimed_and_a_merge_claims_the_running_turn():
    a = Attribution()
    a.accepted(1)
    assert a.event(started("bg", background=True)) is None
    merged = a.event(event("turn.steerQueued", "running"))
    assert (merged.key, merged.turn_id, merged.merged) == (1, "running", True)


def test_a_forgotten_turn_claims_nothing():
    a = Attribution()
    a.accepted(1)
    a.forget(1)
    assert a.event(started("t")) is None
    assert a.accepted(2).turn_id == "t"


def test_a_steer_queued_names_its_turn_in_the_payload():
    # Today's strict payload requires targetTurnId; the envelope may carry no turnId at all.
    a = Attribution()
    assert a.accepted(1) is None
    assert a.event(started("running")).key == 1
    assert a.accepted(2) is None  # accepted while "running" runs: waits for its turn
    queued = {"type": "turn.steerQueued", "payload": {"pendingInputId": "p1", "input": "x", "inputPreview": "x",
                                                      "inputSize": 1, "targetTurnId": "running", "queueLength": 1}}
    claim = a.event(queued)
    assert claim is not None and (claim.key, claim.turn_id, claim.merged) == (2, "running", True)

"""``session/cancelBackgroundTask`` on v4: the command's outcome answered in the legacy call's shape."""

from zcode_acp.actors.session.v4.tasks import cancel_answer, cancel_call_params


def test_an_accepted_or_duplicate_cancel_cancelled_the_work():
    for status in ("accepted", "duplicate"):
        assert cancel_answer("exec_1", {"status": status}) == {"cancelled": True, "status": "cancelled",
                                                               "taskId": "exec_1"}


def test_a_noop_cancel_left_a_work_that_no_longer_ran():
    assert cancel_answer("exec_1", {"status": "noop"}) == {"cancelled": False, "taskId": "exec_1"}
    assert cancel_answer("exec_1", None) == {"cancelled": False, "taskId": "exec_1"}


def test_the_task_id_is_the_works_id():
    assert cancel_call_params("agent_7") == {"workId": "agent_7"}

"""``session/cancelBackgroundTask`` on v4: the command's outcome answered in the legacy call's shape
(actors/session/extensions/tasks.py)."""

from typing import Any

from zcode_acp.actors.session.extensions.handler import ExtensionRequest
from zcode_acp.actors.session.extensions.tasks import CancelBackgroundTask, cancel_answer


def test_an_accepted_or_duplicate_cancel_cancelled_the_work():
    for status in ("accepted", "duplicate"):
        assert cancel_answer("exec_1", {"status": status}) == {"cancelled": True, "status": "cancelled",
                                                               "taskId": "exec_1"}


def test_a_noop_cancel_left_a_work_that_no_longer_ran():
    assert cancel_answer("exec_1", {"status": "noop"}) == {"cancelled": False, "taskId": "exec_1"}
    assert cancel_answer("exec_1", None) == {"cancelled": False, "taskId": "exec_1"}


class Engine:
    """The v4 path as the handler sees it (``V4Surface``): live at once, the command kept."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    def when_live(self, action, on_error):
        action()

    def send_command(self, build, on_result, on_error, on_ack=None):
        self.sent.append((build("b-1"), on_result))


def test_the_task_id_is_the_works_id():
    engine, answers = Engine(), []
    handler = CancelBackgroundTask()
    handler.on_v4(handler.validate({"sessionId": "s", "taskId": "agent_7"}),
                  ExtensionRequest(handler.name, None, None, 1, answers.append, answers.append, "en"), engine)
    [(command, on_result)] = engine.sent
    assert (command.type, command.session_id, command.payload) == ("cancelBackgroundWork", "b-1", {"workId": "agent_7"})
    on_result({"status": "accepted"})
    assert answers == [{"cancelled": True, "status": "cancelled", "taskId": "agent_7"}]

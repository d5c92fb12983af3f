"""A dialog's legacy-shaped answer as the v4 ``resolveInteraction`` (snapshot.ts option kinds, command.ts answer)."""

from zcode_acp.protocol.v4.conversation_view import PendingInteraction
from zcode_acp.protocol.v4.interaction_answers import matching, resolve_command

OPTIONS = [{"optionId": "once", "label": "Allow once", "kind": "allowOnce"},
           {"optionId": "always", "label": "Always allow", "kind": "allowAlways"},
           {"optionId": "no", "label": "Deny", "kind": "deny"}]
PERMISSION = PendingInteraction("int_1", "permission", 4, {"kind": "permission", "toolCallId": "t1",
                                                            "toolName": "Bash", "options": OPTIONS}, None)
QUESTION = PendingInteraction("int_2", "userInput", None, {"kind": "userInput", "prompt": "?", "freeText": True,
                                                           "toolCallId": "t2"}, None)


def frame(method, **params):
    return {"id": "server-1", "method": method, "params": params}


def test_the_legacy_request_finds_its_pending_interaction_by_tool_call_and_kind():
    pending = (PERMISSION, QUESTION)
    assert matching(pending, frame("interaction/requestPermission", requestId="r", toolCallId="t1")) is PERMISSION
    assert matching(pending, frame("interaction/requestUserInput", requestId="q", toolCallId="t2")) is QUESTION
    assert matching(pending, frame("interaction/requestUserInput", toolCallId="t1")) is None  # kind differs
    assert matching(pending, frame("interaction/requestPermission", toolCallId="t9")) is None


def test_the_requests_own_id_is_the_interactions_id_and_wins_over_the_tool_call():
    # The engine registers an interaction under its request's requestId (interaction-response-race.ts).
    again = PendingInteraction("server-req-9", "permission", 7, {**PERMISSION.payload}, None)
    pending = (PERMISSION, again)  # two asks about the same tool call
    assert matching(pending, frame("interaction/requestPermission", requestId="server-req-9", toolCallId="t1")) is again
    assert matching(pending, frame("interaction/requestPermission", requestId="int_1", toolCallId="t1")) is PERMISSION


def test_each_decision_names_the_engines_option_of_that_kind():
    def option(answer):
        command = resolve_command("s", PERMISSION, answer)
        return command.payload if command else None
    assert option({"decision": "allow"}) == {"interactionId": "int_1", "answer": {"optionId": "once"}}
    rules = {"decision": "allow", "permissionUpdates": [{"type": "addRules", "behavior": "allow", "rules": []}]}
    assert option(rules)["answer"] == {"optionId": "always"}
    assert option({"decision": "deny", "reason": "no"})["answer"] == {"optionId": "no"}
    assert option({"decision": "maybe"}) is None


def test_an_option_carrying_the_same_response_is_chosen_verbatim():
    response = {"decision": "allow", "reason": "Approved for this project"}
    custom = PendingInteraction("int_3", "permission", None, {"kind": "permission", "options": [
        *OPTIONS, {"optionId": "proj", "label": "Project", "kind": "custom", "response": response}]}, None)
    command = resolve_command("s", custom, dict(response))
    assert command is not None and command.payload["answer"] == {"optionId": "proj"}


def test_a_questions_answer_keeps_its_action_and_content():
    accepted = resolve_command("s", QUESTION, {"action": "accept", "content": {"answers": {"?": "yes"}}})
    assert accepted is not None and accepted.type == "resolveInteraction"
    assert accepted.payload["answer"] == {"action": "accept", "content": {"answers": {"?": "yes"}}}
    declined = resolve_command("s", QUESTION, {"action": "decline"})
    assert declined is not None and declined.payload["answer"] == {"action": "decline"}
    # A reason has no place in a v4 answer: the legacy request alone carries it (no race on meaning).
    assert resolve_command("s", QUESTION, {"action": "decline", "reason": "skipped by user"}) is None
    assert resolve_command("s", QUESTION, {"action": "cancel", "reason": "cancelled"}) is None
    assert resolve_command("s", QUESTION, {"whatever": 1}) is None

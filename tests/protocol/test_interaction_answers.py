"""Permission and plan answers in the shapes the engine's strict schemas read (docs/interactions.md)."""

from zcode_acp.protocol import interactions as ix
from zcode_acp.protocol.host_requests import coding_plan_key, host_answer

# The 0.16 engine's three options, as its permission-options source builds them (in our words).
OFFICIAL = {"reason": "Runs a shell command", "riskLevel": "medium", "options": [
    {"optionId": "allow_once", "kind": "allow_once", "name": "Allow once",
     "response": {"decision": "allow", "reason": "Approved once"}},
    {"optionId": "allow_project", "kind": "allow_always", "name": "Always allow in this project",
     "response": {"decision": "allow", "reason": "Approved for this project", "permissionUpdates": [
         {"type": "addRules", "behavior": "allow", "rules": [{"toolName": "Bash", "ruleContent": "make"}]}],
         "extra": "not in the engine's strict schema"}},
    {"optionId": "deny", "kind": "deny", "name": "Deny", "response": {"decision": "deny", "reason": "STOP and wait"}},
]}


def selected(option_id):
    return {"outcome": {"outcome": "selected", "optionId": option_id}}


def test_the_chosen_options_own_response_goes_back_without_keys_the_engine_refuses():
    options = ix.permission_options(OFFICIAL)
    answer = ix.permission_answer(selected("allow_project"), options, OFFICIAL)
    assert answer == {"decision": "allow", "reason": "Approved for this project", "permissionUpdates": [
        {"type": "addRules", "behavior": "allow", "rules": [{"toolName": "Bash", "ruleContent": "make"}]}]}
    assert ix.permission_answer(selected("deny"), options, OFFICIAL) == {"decision": "deny", "reason": "STOP and wait"}


def test_a_cancelled_or_unknown_choice_is_a_deny_without_a_reason_of_ours():
    options = ix.permission_options(OFFICIAL)
    assert ix.permission_answer({"outcome": {"outcome": "cancelled"}}, options, OFFICIAL) == {"decision": "deny"}
    assert ix.permission_answer(selected("made_up"), options, OFFICIAL) == {"decision": "deny"}


def test_a_response_that_is_no_decision_is_not_sent():
    params = {"options": [{"optionId": "odd", "kind": "allow_once", "name": "Odd", "response": {"decision": "yes"}}]}
    assert ix.permission_answer(selected("odd"), ix.permission_options(params), params) == {"decision": "allow"}


def test_one_option_per_acp_kind_and_the_reason_shown():
    params = {"toolName": "Bash", "input": {"command": "make"}, "reason": "Runs make", "riskLevel": "low",
              "options": [{"optionId": "a", "kind": "allow_once", "name": "Yes"},
                          {"optionId": "b", "kind": "allow", "name": "Always"},
                          {"optionId": "c", "kind": "allow_project", "name": "Project"},
                          {"optionId": "d", "kind": "deny", "name": "No"},
                          {"optionId": "e", "kind": "reject", "name": "Reject"}]}
    kinds = [o["kind"] for o in ix.permission_options(params)]
    assert kinds == ["allow_once", "allow_always", "reject_once"]
    frame = {"method": "interaction/requestPermission", "params": params}
    *_, tool_call = ix.dialog_tool_call(frame)
    assert tool_call["content"][-1]["content"]["text"] == "Runs make (risk: low)"


def test_plan_feedback_is_an_answer_where_the_engine_asks_the_plan_question():
    today = {"schema": {"interaction": "plan_approval"}, "input": {"plan": "1. x"},
             "questions": [{"question": "Review this implementation plan.", "header": "Plan",
                            "options": [{"value": "approve", "label": "Approve"}]}]}
    seed = {"schema": {"interaction": "plan_approval"}, "input": {"plan": "1. x"}}
    typed = {"action": "accept", "content": {"feedback": " use pytest "}}
    assert ix.plan_form_answer(typed, today) == {"action": "accept", "content": {"answer": "use pytest"}}
    assert ix.plan_form_answer(typed, seed) == {"action": "decline", "reason": "use pytest"}
    empty = {"action": "accept", "content": {"feedback": ""}}
    assert ix.plan_form_answer(empty, today) == ix.plan_form_answer(empty, seed) == {
        "action": "accept", "content": {"answer_0": "approve"}}


def rule(provider, access, key, enabled=True):
    return {"providerId": provider, "enabled": enabled, "config": {"access": {"type": access, "apiKey": key}}}


def config(*rules):
    return {"schemaVersion": 1, "config": {"providerConfigRules": {"providerRules": list(rules)}}}


def test_the_coding_plan_key_of_the_asked_provider_wins_then_an_enabled_one():
    plan = "zhipu-coding-plan-api-key"
    both = config(rule("a", plan, "key-a", enabled=False), rule("b", plan, "key-b"), rule("c", "api-key", "no"))
    assert coding_plan_key(both, "a") == "key-a"
    assert coding_plan_key(both, "zhipu") == "key-b"
    assert coding_plan_key(config(rule("c", "api-key", "no"), rule("d", plan, "  ")), "c") is None
    assert coding_plan_key("not a config") is None and coding_plan_key(None) is None


def test_provider_headers_without_a_key_say_why_and_what_to_do():
    answer = host_answer("interaction/requestProviderRuntimeHeaders", {"providerId": "zhipu"}, lambda: None)
    assert answer["headersApplied"] is False
    assert "ZCODE_APP_SERVER_AUTH_MODE" in answer["errorMessage"] and "zcode login" in answer["errorMessage"]
    found = host_answer("interaction/requestProviderRuntimeHeaders", {"providerId": "zhipu"},
                        lambda: config(rule("zhipu", "zhipu-coding-plan-api-key", "k")))
    assert found == {"headersApplied": True, "requestAuth": {"apiKey": "k"}}

"""Permission, plan approval and questions, with and without form support."""

import asyncio
import json

import pytest

from tests.process.harness import NoForms, RecordingClient, bridge, pick, run

FORMS = {"elicitation": {"form": {}}, "_meta": {"terminal_output": True}}
NO_FORMS = {"_meta": {"terminal_output": True}}


def backend_answers(b):
    """Every answer the simulator received to its interaction requests, by JSON-RPC id."""
    asked = {}
    for line in b.trace.read_text().splitlines():
        entry = json.loads(line)
        if "response" in entry:
            asked[entry["response"]] = entry["result"]
    return asked


def interaction_answers(b):
    return [a for a in backend_answers(b).values() if a and ("decision" in a or "action" in a)]


async def engine_answers(b):
    """The answers the engine got to its requests, once all of them reached it.

    On the v4 path a dialog's answer goes first as ``resolveInteraction`` and the engine
    goes on with the turn; the legacy request's answer follows it on the pipe and may land
    after the turn ended (docs/decisions.md, "Dialogs on the v4 path"). A ``session/list``
    asked now is a call to the engine on the same pipe, after it: its answer is the barrier.
    """
    await b.conn.list_sessions(cwd="/tmp")
    return interaction_answers(b)


# What the 0.16 engine sends back for its official options (its permission-options source, in our words).
STOP_AND_WAIT = "The user doesn't want to proceed with this tool use."
ALLOW_ONCE = {"classic": "opt_allow_once", "cli016": "allow_once"}
DENY = {"classic": "opt_deny", "cli016": "deny"}


@pytest.mark.dialects("classic")
@pytest.mark.parametrize("capabilities", [NO_FORMS, FORMS], ids=["no-forms", "forms"])
@run
async def test_permission_card_first_then_one_option_per_kind_then_allow(tmp_path, capabilities):
    client = RecordingClient()
    seen_cards = []

    def answer(session_id, params):
        seen_cards.append([u["toolCallId"] for u in client.of_kind(session_id, "tool_call")])
        return pick("opt_allow_once")

    client.on_permission = answer
    async with bridge(tmp_path, capabilities, client=client) as b:
        sid = await b.new_session()
        response = await b.prompt(sid, "#sim permission kinds=allow_once,allow_project,deny,reject,deny_once,weird")
        assert response.stop_reason == "end_turn"
        [dialog] = client.dialogs_of("session/request_permission")
        assert dialog["toolCall"]["toolCallId"] in seen_cards[0]  # its card was shown before it
        # Issue 21: Deny, Reject, Deny once and the unknown one are all reject_once: one button, not four.
        assert [(o["optionId"], o["kind"]) for o in dialog["options"]] == [
            ("opt_allow_once", "allow_once"), ("opt_allow_project", "allow_always"), ("opt_deny", "reject_once")]
        assert "This command changes files." in json.dumps(dialog["toolCall"]["content"])  # why it asks
        assert client.texts(sid).endswith("Permission granted; done.")
        assert (await engine_answers(b)) == [{"decision": "allow"}]


@pytest.mark.dialects("cli016")
@run
async def test_cli016s_official_options_each_kind_once_with_the_engines_reason_and_risk(tmp_path):
    client = RecordingClient()
    client.on_permission = lambda sid, params: pick("allow_once")
    async with bridge(tmp_path, NO_FORMS, client=client) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim permission command=make reason='This command deletes build/.' risk=critical")
        [dialog] = client.dialogs_of("session/request_permission")
        assert [(o["optionId"], o["kind"]) for o in dialog["options"]] == [
            ("allow_once", "allow_once"), ("allow_project", "allow_always"), ("deny", "reject_once")]
        assert [o["name"] for o in dialog["options"]] == ["Allow once", "Always allow in this project", "Deny"]
        shown = json.dumps(dialog["toolCall"]["content"])
        assert "This command deletes build/." in shown and "critical" in shown
        assert (await engine_answers(b)) == [{"decision": "allow", "reason": "Approved once"}]


@pytest.mark.dialects("cli016")
@run
async def test_always_allow_in_this_project_sticks(tmp_path):
    client = RecordingClient()
    client.on_permission = lambda sid, params: pick("allow_project")
    async with bridge(tmp_path, NO_FORMS, client=client) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim permission command=make")
        await b.prompt(sid, "#sim permission command=make")  # the same request again: allowed by the rule
        assert client.texts(sid).endswith("Permission granted; done.")
        assert len(client.dialogs_of("session/request_permission")) == 1
        [answer] = await engine_answers(b)
        assert answer["decision"] == "allow" and answer["permissionUpdates"] == [
            {"type": "addRules", "behavior": "allow", "rules": [{"toolName": "Bash", "ruleContent": "make"}]}]


@pytest.mark.dialects("cli016")
@run
async def test_a_deny_keeps_the_engines_stop_and_wait_text(tmp_path):
    client = RecordingClient()
    answers = iter([pick("deny"), pick(None)])
    client.on_permission = lambda sid, params: next(answers)
    async with bridge(tmp_path, NO_FORMS, client=client) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim permission")
        await b.prompt(sid, "#sim permission")
        deny, cancel = (await engine_answers(b))
        assert deny["decision"] == "deny" and deny["reason"].startswith(STOP_AND_WAIT)
        assert cancel == {"decision": "deny"}  # no reason of ours: the engine says its own
        assert client.texts(sid).count(STOP_AND_WAIT) == 2


@pytest.mark.dialects("classic")
@run
async def test_permission_deny_and_cancel(tmp_path):
    client = RecordingClient()
    answers = iter([pick("opt_deny"), pick(None)])
    client.on_permission = lambda sid, params: next(answers)
    async with bridge(tmp_path, NO_FORMS, client=client) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim permission")
        assert client.texts(sid).endswith("Permission denied (rejected (opt_deny)).")
        await b.prompt(sid, "#sim permission")
        assert client.texts(sid).endswith("Permission denied (cancelled by user).")
        assert (await engine_answers(b)) == [{"decision": "deny", "reason": "rejected (opt_deny)"},
                                          {"decision": "deny", "reason": "cancelled by user"}]


@run
async def test_plan_approval_without_forms_is_a_permission_dialog(tmp_path):
    client = RecordingClient()
    answers = iter(["approve", "reject"])
    client.on_permission = lambda sid, params: pick(next(answers))
    async with bridge(tmp_path, NO_FORMS, client=client) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim plan")
        assert client.texts(sid).endswith("Plan approved; starting.")
        await b.prompt(sid, "#sim plan")
        assert client.texts(sid).endswith("Plan rejected: rejected")
        dialog = client.dialogs_of("session/request_permission")[0]
        assert dialog["toolCall"]["kind"] == "switch_mode"
        assert "Write the tests" in dialog["toolCall"]["content"][0]["content"]["text"]
        assert [o["optionId"] for o in dialog["options"]] == ["approve", "reject"]


@run
async def test_plan_approval_form_approve_feedback_and_cancel(tmp_path, sim_dialect):
    client = RecordingClient()
    answers = iter([{"action": "accept", "content": {"feedback": "  "}},
                    {"action": "accept", "content": {"feedback": "Use pytest, not unittest"}},
                    {"action": "cancel"}])
    client.on_form = lambda sid, params: next(answers)
    async with bridge(tmp_path, FORMS, client=client) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim plan")
        assert client.texts(sid).endswith("Plan approved; starting.")
        await b.prompt(sid, "#sim plan")
        if sim_dialect == "cli016":  # feedback is an answer other than "approve", not a decline
            assert client.texts(sid).endswith("Plan rejected: feedback: Use pytest, not unittest")
            assert (await engine_answers(b))[1] == {"action": "accept", "content": {"answer": "Use pytest, not unittest"}}
        else:
            assert client.texts(sid).endswith("Plan rejected: Use pytest, not unittest")
        await b.prompt(sid, "#sim plan")
        assert client.texts(sid).endswith("Plan rejected: cancelled")
        form = client.dialogs_of("elicitation/create")[0]
        assert form["message"].startswith("1. Write the tests") and "Leave the box empty" in form["message"]
        assert list(form["requestedSchema"]["properties"]) == ["feedback"]
        assert client.dialogs_of("session/request_permission") == []


@run
async def test_questions_form_answers_skips_overrides_and_multi_select(tmp_path):
    client = RecordingClient()
    answers = iter([
        {"action": "accept", "content": {"q_0": "auth.test.ts", "q_1": ["lint", "unit"], "q_1_other": "e2e"}},
        {"action": "accept", "content": {"q_0": "__skip__", "q_1": ["types"]}},
        {"action": "accept", "content": {"q_0": "auth.test.ts", "q_0_other": "db.test.ts"}},
        {"action": "decline"},
    ])
    client.on_form = lambda sid, params: next(answers)
    async with bridge(tmp_path, FORMS, client=client) as b:
        sid = await b.new_session()
        for _ in range(4):
            await b.prompt(sid, "#sim questions multi=1")
        got = [a.get("content", {}).get("answers") if a.get("action") == "accept" else a
               for a in (await engine_answers(b))]
        assert got == [
            {"Which file should I test?": "auth.test.ts", "Which checks should run?": "lint, unit, e2e"},
            {"Which checks should run?": "types"},
            {"Which file should I test?": "db.test.ts"},
            {"action": "decline", "reason": "cancelled"},
        ]
        form = client.dialogs_of("elicitation/create")[0]
        props = form["requestedSchema"]["properties"]
        assert list(props) == ["q_0", "q_0_other", "q_1", "q_1_other"]
        assert props["q_0"]["oneOf"][-1] == {"const": "__skip__", "title": "Skip this question"}
        assert props["q_1"]["type"] == "array"
        assert form["requestedSchema"]["required"] == []


@run
async def test_questions_without_forms_ask_one_dialog_per_question_and_skip_declines_all(tmp_path):
    client = RecordingClient()
    answers = iter([pick("o_1"),  # user.test.ts
                    pick("o_2"), pick("o_0"), pick("done"),  # multi-select: unit, then lint, then Done
                    pick("skip")])  # the next prompt: skip the first question
    client.on_permission = lambda sid, params: next(answers)
    async with bridge(tmp_path, NO_FORMS, client=client) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim questions multi=1")
        await b.prompt(sid, "#sim questions multi=1")
        assert (await engine_answers(b)) == [
            {"action": "accept", "content": {"answers": {"Which file should I test?": "user.test.ts",
                                                         "Which checks should run?": "unit, lint"}}},
            {"action": "decline", "reason": "skipped by user"}]
        dialogs = client.dialogs_of("session/request_permission")
        assert [d["toolCall"]["title"] for d in dialogs] == [
            "Which file should I test?", "Which checks should run? (pick one now, more after)",
            "Which checks should run? (chosen so far: unit; pick another or Done)",
            "Which checks should run? (chosen so far: unit, lint; pick another or Done)",
            "Which file should I test?"]
        # Issue 21: without forms a multi-select question still takes several answers.
        assert [o["name"] for o in dialogs[3]["options"]] == ["types", "Done (unit, lint)"]


@run
async def test_a_multi_select_question_ends_by_itself_when_every_label_is_chosen(tmp_path):
    client = RecordingClient()
    answers = iter([pick("o_0"), pick("o_0"), pick("o_1"), pick("o_2")])
    client.on_permission = lambda sid, params: next(answers)
    async with bridge(tmp_path, NO_FORMS, client=client) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim questions multi=1")
        assert (await engine_answers(b))[0]["content"]["answers"]["Which checks should run?"] == "lint, types, unit"


@run
async def test_a_failing_form_falls_back_to_the_permission_dialog_once(tmp_path):
    client = NoForms()  # declares forms but cannot show them
    client.on_permission = lambda sid, params: pick("approve")
    async with bridge(tmp_path, FORMS, client=client) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim plan")
        assert client.texts(sid).endswith("Plan approved; starting.")
        assert any(f.get("method") == "elicitation/create" for f in b.frames)
        assert len(client.dialogs_of("session/request_permission")) == 1


@run
async def test_cancel_during_an_open_dialog_withdraws_it_and_declines(tmp_path):
    client = RecordingClient()
    never = asyncio.get_running_loop().create_future()
    client.on_permission = lambda sid, params: never
    async with bridge(tmp_path, NO_FORMS, client=client) as b:
        sid = await b.new_session()
        prompt = asyncio.ensure_future(b.prompt(sid, "#sim permission"))
        await client.wait_for(lambda: client.dialogs)
        dialog_id = next(f["id"] for f in b.frames if f.get("method") == "session/request_permission")
        await b.conn.cancel(session_id=sid)
        assert (await prompt).stop_reason == "cancelled"
        await b.wait_for_frame(lambda f: f.get("method") == "$/cancel_request")
        withdrawn = [f["params"]["requestId"] for f in b.frames if f.get("method") == "$/cancel_request"]
        assert withdrawn == [dialog_id]
        card = client.dialogs_of("session/request_permission")[0]["toolCall"]["toolCallId"]
        failed = [u for u in client.of_kind(sid, "tool_call_update") if u["toolCallId"] == card and
                  u.get("status") in ("completed", "failed")]
        # Closed bare at the cancel on every path: on v4 too nothing of the stopped turn follows the
        # answer, not the engine's words for the denial its row would settle with (docs/v4.md, "Cancel").
        assert failed == [{"sessionUpdate": "tool_call_update", "toolCallId": card, "status": "failed"}]
        never.set_result(pick("opt_allow_once"))  # the user's late click is harmless
        assert (await b.prompt(sid, "#sim stream count=2")).stop_reason == "end_turn"
        assert (await engine_answers(b))[0]["decision"] == "deny"


@run
async def test_a_re_announce_storm_is_one_dialog_and_every_id_gets_the_same_answer(tmp_path, sim_dialect):
    client = RecordingClient()

    async def slow_user(session_id, params):
        await asyncio.sleep(0.4)  # the user thinks; the backend re-announces meanwhile
        return pick(ALLOW_ONCE[sim_dialect])

    client.on_permission = slow_user
    async with bridge(tmp_path, NO_FORMS, client=client, env={"ZCODE_SIM_REANNOUNCE": "0.03"}) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim permission")
        assert len(client.dialogs) == 1
        answers = await engine_answers(b)
        # (the 0.16 engine doubles its re-announce interval: fewer ids in the same wait)
        assert len(answers) >= 3 and all(a == answers[0] and a["decision"] == "allow" for a in answers)
        asked = [json.loads(line) for line in b.trace.read_text().splitlines()]
        assert len([a for a in asked if "response" in a and a["result"] and "decision" in a["result"]]) == len(answers)


@run
async def test_two_sessions_asking_at_once_never_mix(tmp_path, sim_dialect):
    client = RecordingClient()
    decisions = {}

    async def by_session(session_id, params):
        await client.wait_for(lambda: len(client.dialogs) == 2)  # both dialogs open at once
        return pick(ALLOW_ONCE[sim_dialect] if decisions[session_id] == "allow" else DENY[sim_dialect])

    client.on_permission = by_session
    async with bridge(tmp_path, NO_FORMS, client=client) as b:
        one, two = await b.new_session(), await b.new_session()
        decisions.update({one: "allow", two: "deny"})
        await asyncio.gather(b.prompt(one, "#sim permission"), b.prompt(two, "#sim permission"))
        assert client.texts(one).endswith("Permission granted; done.")
        assert "Permission denied (" in client.texts(two) and "granted" not in client.texts(two)
        assert {sid for _, sid, _ in client.dialogs} == {one, two}


@run
async def test_a_question_while_the_turn_streams(tmp_path):
    async with bridge(tmp_path, NO_FORMS) as b:
        sid = await b.new_session()
        response = await b.prompt(sid, "#sim ask_streaming")
        assert response.stop_reason == "end_turn"
        text = b.client.texts(sid)
        assert text.startswith("tick " * 10) and text.endswith("Permission granted; done.and after it.")
        assert len(b.client.dialogs) == 1

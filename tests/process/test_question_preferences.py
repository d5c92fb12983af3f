"""A reopened session's questions wait for the user (issues 31 and 32).

The 0.16 engine answers an unanswered AskUserQuestion by itself (accepted, no answers) unless its
host turned that off: its server-wide setting is on until ``workspace/updateInteractionPreferences``
says otherwise, and it asks a session's runtime preferences only as it makes the session. A session
loaded into a new engine process was never asked, so the bridge tells the engine for every session
it opens (create, load, resume), on the legacy path and on v4.
"""

import asyncio

import pytest

from tests.process.harness import RecordingClient, bridge, run

pytestmark = pytest.mark.dialects("cli016")
FORMS = {"elicitation": {"form": {}}, "_meta": {"terminal_output": True}}
# The engine's countdown, short: a question it would answer by itself is answered long before the user does.
QUICK_COUNTDOWN = {"ZCODE_SIM_AUTO_RESOLVE": "0.2"}
THINKING_TIME = 3.0  # how long the user takes, unless the turn ends first (then the answer is too late)


@run
async def test_a_question_in_a_reloaded_session_waits_for_the_users_answer(tmp_path):
    async with bridge(tmp_path, FORMS, env=QUICK_COUNTDOWN) as first:
        sid = await first.new_session()
        assert (await first.prompt(sid, "#sim stream count=1")).stop_reason == "end_turn"
    client = RecordingClient()
    turn: dict[str, asyncio.Task] = {}

    async def answer_after_thinking(session_id, params):
        # The user answers after a while, or at once if the turn ended without them (a self-answer).
        await asyncio.wait([turn["prompt"]], timeout=THINKING_TIME)
        return {"action": "accept", "content": {"q_0": "auth.test.ts"}}

    client.on_form = answer_after_thinking
    async with bridge(tmp_path, FORMS, env=QUICK_COUNTDOWN, client=client) as second:
        await second.conn.load_session(session_id=sid, cwd="/tmp", mcp_servers=[])
        turn["prompt"] = asyncio.ensure_future(second.prompt(sid, "#sim questions"))
        assert (await turn["prompt"]).stop_reason == "end_turn"
        text = second.client.texts(sid)
        assert 'Answers: {"Which file should I test?":"auth.test.ts"}' in text, text
        assert "Answers: {}" not in text, "the engine answered the question by itself, empty"
        # (one trace for both bridges: the second's resume, then what it told the new engine)
        methods = [call["method"] for call in second.backend_calls()]
        assert methods.index("session/resume") < len(methods) - 1 - methods[::-1].index(
            "workspace/updateInteractionPreferences")
        told = second.backend_calls("workspace/updateInteractionPreferences")
        assert [call["params"]["preferences"] for call in told] == [{"askUserQuestionAutoResolutionEnabled": False}] * 2

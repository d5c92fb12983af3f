"""Issue 32, "notices glued to the next text": clients that join every agent message chunk (most
ignore ``messageId``) showed "alphaZCode stopped: …" and the next answer glued to the notice. A
notice sent as message text is its own paragraph (protocol/translator.py, ``notice_text``)."""

from tests.process.harness import bridge, run
from tests.process.test_prompting import on_v4

STOPPED = "ZCode stopped: the turn reached its limit of model turns."


@run
async def test_a_limit_notice_is_its_own_paragraph_between_two_answers(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        if on_v4():  # the v4 conversation does not say which limit ended a turn (test_prompting.py)
            return
        response = await b.prompt(sid, "#sim end result=error_max_turns text=alpha")
        assert response.stop_reason == "max_turn_requests"
        assert (await b.prompt(sid, "#sim stream count=1 text=beta")).stop_reason == "end_turn"
        assert b.client.texts(sid) == f"alpha\n\n{STOPPED}\n\nbeta"

"""Issue 32, "`/model` listing only the current model": ``/model`` alone answered "Current model:
glm-5" and no other, so a user could not learn which ids ``/model <id>`` takes. It lists every model
the picker offers; on a fresh install it waits for the engine's list rather than offering none."""

from tests.process.harness import bridge, run


@run
async def test_slash_model_alone_lists_every_model(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        assert (await b.prompt(sid, "/model")).stop_reason == "end_turn"  # before any other prompt
        text = b.client.texts(sid)
        assert "Current model: glm-5" in text and "Available: glm-5, glm-5-air" in text
        assert (await b.prompt(sid, "/model glm-5-air")).stop_reason == "end_turn"
        assert b.client.texts(sid).endswith("Model set to glm-5-air.")

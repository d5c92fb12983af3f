"""The conversation's mode on the v4 path goes through the Session's settings (actors/session/v4/mode.py)."""

from zcode_acp.actors.session.settings import Settings
from zcode_acp.actors.session.v4.mode import adopt_modes
from zcode_acp.protocol.session_config import SessionSettings

TEXT = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}


def mode_update(mode: str) -> dict:
    return {"sessionUpdate": "current_mode_update", "currentModeId": mode}


def test_a_mode_already_told_is_not_told_again() -> None:
    settings = Settings(SessionSettings(mode="plan"))
    assert adopt_modes([TEXT, mode_update("plan")], settings) == [TEXT]


def test_a_mode_the_engine_changed_is_adopted_and_announced_with_the_pickers() -> None:
    settings = Settings(SessionSettings(mode="plan"))
    out = adopt_modes([mode_update("build"), TEXT], settings)
    assert [u["sessionUpdate"] for u in out] == ["current_mode_update", "config_option_update", "agent_message_chunk"]
    assert out[0]["currentModeId"] == "build" and settings.current.mode == "build"
    # back to plan later: told again, since the settings now hold build
    assert [u["sessionUpdate"] for u in adopt_modes([mode_update("plan")], settings)] == [
        "current_mode_update", "config_option_update"]

"""Bidi controls in titles (issue 29): "\u202etxt.exe" shows as "exe.txt". Every place a title is
produced for a person passes it through protocol/display_text.shown_title."""

from __future__ import annotations

import pytest

from zcode_acp.hub.registry import Registry, parse_registration
from zcode_acp.protocol import sessions, updates
from zcode_acp.protocol.display_text import BIDI_CONTROLS, shown_title
from zcode_acp.protocol.v4.sessions_index_apply import SessionsIndexState

CONTROLS = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068",
            "\u2069", "\u200e", "\u200f", "\u061c"]


def test_every_bidi_control_is_named() -> None:
    assert set(CONTROLS) == BIDI_CONTROLS


@pytest.mark.parametrize("control", CONTROLS)
def test_a_title_loses_its_bidi_controls(control: str) -> None:
    assert shown_title(f"{control}txt.exe") == "txt.exe"
    assert shown_title("plain 标题") == "plain 标题"


def test_session_info_update_titles_are_shown_safely() -> None:
    assert updates.session_title("\u202etxt.exe")["title"] == "txt.exe"


def test_session_list_titles_from_the_engine_are_shown_safely() -> None:
    listed = sessions.list_sessions({"sessions": [{"sessionId": "s1", "title": "\u2067evil\u2069"}]},
                                    {})
    assert listed[0]["title"] == "evil"


def test_v4_index_titles_are_shown_safely() -> None:
    state = SessionsIndexState()
    state.reset({"sessions": [{"sessionId": "s1", "title": "\u202etxt.exe", "lastActivityAt": 1}]})
    assert [info.get("title") for info in state.session_infos("/w")] == ["txt.exe"]


def test_the_hub_listing_shows_titles_safely() -> None:
    registry = Registry()
    registry.register(parse_registration({"id": "b", "port": 9, "pid": 1, "sessions": [
        {"sessionId": "s1", "title": "\u202etxt.exe"}]}, now_ms=1.0), 0.0)
    assert registry.listing()[0]["sessions"][0]["title"] == "txt.exe"

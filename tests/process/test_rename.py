"""Renaming a session from the editor: ``_session/rename`` and ``/rename`` (docs/protocol-mapping.md).

ACP has no client → agent method for a title (schema v1.19); the bridge offers an extension
method and a slash command, and sends the engine its ``v4/command renameSession``.
"""

import pytest
from acp import RequestError

from tests.process.harness import bridge, run


def titles(client, sid):
    return [u["title"] for u in client.of_kind(sid, "session_info_update") if "title" in u]


async def listed_title(b, sid):
    listed = await b.conn.list_sessions(cwd="/tmp")
    [entry] = [s for s in listed.sessions if s.session_id == sid]
    return entry.title


@pytest.mark.dialects("cli016")
@run
async def test_a_rename_from_the_editor_reaches_the_list_and_an_info_update(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim stream count=1\nFirst words here")
        assert titles(b.client, sid) == ["First words here"]  # the engine's own title first
        answer = await b.conn.ext_method("session/rename", {"sessionId": sid, "title": "  Parser\nfix "})
        assert answer == {"title": "Parser fix"}
        await b.client.wait_for(lambda: titles(b.client, sid)[-1:] == ["Parser fix"])
        assert await listed_title(b, sid) == "Parser fix"
        [command] = [c for c in b.backend_calls("v4/command") if c["params"]["type"] == "renameSession"]
        assert command["params"]["payload"] == {"title": "Parser fix"}
        assert command["params"]["sessionId"]  # the engine's id for the session


@pytest.mark.dialects("cli016")
@run
async def test_the_rename_slash_command(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim stream count=1\nSomething")
        response = await b.prompt(sid, "/rename The second name")
        assert response.stop_reason == "end_turn"
        assert b.client.texts(sid).endswith("Session renamed to The second name.")
        assert titles(b.client, sid)[-1] == "The second name"
        assert await listed_title(b, sid) == "The second name"
        await b.prompt(sid, "/rename")
        assert b.client.texts(sid).endswith("Usage: /rename <title>")
        commands = [c["name"] for u in b.client.of_kind(sid, "available_commands_update")
                    for c in u["availableCommands"]]
        assert "rename" in commands


@run
async def test_a_bad_title_is_refused_with_invalid_params(tmp_path):
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        with pytest.raises(RequestError) as caught:
            await b.conn.ext_method("session/rename", {"sessionId": sid, "title": "   "})
        assert caught.value.code == -32602 and "title" in str(caught.value.data or caught.value)


@pytest.mark.dialects("classic")
@run
async def test_an_engine_without_rename_keeps_the_title_in_the_bridge(tmp_path):
    # The default simulator (and an engine older than 0.16) has no renameSession: the bridge keeps the
    # title in its session records, so the ✎ and /rename work there too (docs/decisions.md, issue 29).
    async with bridge(tmp_path) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim stream count=1")
        answer = await b.conn.ext_method("session/rename", {"sessionId": sid, "title": "Kept by the bridge"})
        assert answer == {"title": "Kept by the bridge"}
        await b.client.wait_for(lambda: titles(b.client, sid)[-1:] == ["Kept by the bridge"])
        assert await listed_title(b, sid) == "Kept by the bridge"
        assert not [c for c in b.backend_calls("v4/command")]  # nothing asked of the engine
        response = await b.prompt(sid, "/rename Second name")
        assert response.stop_reason == "end_turn" and await listed_title(b, sid) == "Second name"
    # A new bridge on the same records lists the kept title too.
    async with bridge(tmp_path) as b:
        assert await listed_title(b, sid) == "Second name"

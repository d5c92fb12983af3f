"""EngineSurface: what a create/resume answer says about the engine (actors/session/engine_surface.py)."""

from __future__ import annotations

from typing import Any

from zcode_acp.actors.session.engine_surface import EngineSurface
from zcode_acp.actors.session.settings import Settings
from zcode_acp.protocol.session_config import SessionSettings

ENTRY = {"ref": {"providerId": "zhipu", "modelId": "glm-5"}, "label": "GLM-5",
         "properties": {"inputFormat": {"supportsText": True}, "outputFormat": {"supportsText": True}}}
TODAY = {"protocol": {"name": "ZCode Protocol", "version": 1},
         "session": {"sessionId": "s1", "workspace": {"workspacePath": "/w", "workspaceKey": "k"}},
         "settings": {"model": {"available": [ENTRY], "current": {"providerId": "zhipu", "modelId": "glm-5"}}},
         "slashCommands": [{"name": "init", "description": "Create AGENTS.md", "inputHint": ""},
                           {"name": "compact", "description": "the engine's", "inputHint": ""}]}


PREFERENCES = "workspace/updateInteractionPreferences"


class FakePort:
    session_id = "acp-1"

    def __init__(self) -> None:
        self.settings = Settings(SessionSettings())
        self.delivered: list[dict[str, Any]] = []
        self.calls: list[tuple[str, dict[str, Any], Any]] = []
        self.remembered: list[dict[str, Any]] = []

    def deliver(self, updates: list[dict[str, Any]]) -> None:
        self.delivered.extend(updates)

    def call(self, method: str, params: dict[str, Any], then: Any) -> None:
        self.calls.append((method, params, then))

    def remember_catalog(self, catalog: dict[str, Any]) -> None:
        self.remembered.append(catalog)

    def workspace_of(self, session: Any) -> dict[str, Any]:
        return dict(session["workspace"])


def test_a_create_of_todays_engine_announces_remembers_and_asks() -> None:
    port = FakePort()
    assert EngineSurface(port).materialized(True, TODAY, has_mcp_servers=True) is True
    kinds = [u["sessionUpdate"] for u in port.delivered]
    assert kinds == ["config_option_update", "available_commands_update"]
    names = [c["name"] for c in port.delivered[-1]["availableCommands"]]
    assert names.count("compact") == 1 and names[-1] == "init"  # the bridge's own compact wins
    assert port.remembered == [TODAY["settings"]["model"]]
    assert [(m, p) for m, p, _ in port.calls] == [
        ("workspace/updateInteractionPreferences", {"workspace": {"workspacePath": "/w", "workspaceKey": "k"},
                                                    "preferences": {"askUserQuestionAutoResolutionEnabled": False}}),
        ("mcp/list", {"workspace": {"workspacePath": "/w", "workspaceKey": "k"}, "mode": "connect"}),
        ("runtime/capabilities", {})]


def test_a_resume_updates_silently_and_capabilities_are_asked_once() -> None:
    port = FakePort()
    surface = EngineSurface(port)
    surface.materialized(False, TODAY, has_mcp_servers=False)
    surface.materialized(False, TODAY, has_mcp_servers=False)
    assert port.delivered == [] and port.settings.current.model == "glm-5"
    assert [m for m, _, _ in port.calls if m != PREFERENCES] == ["runtime/capabilities"]


def test_plan_is_withdrawn_only_on_an_answer_without_the_capability() -> None:
    port = FakePort()
    surface = EngineSurface(port)
    surface.materialized(False, TODAY, has_mcp_servers=False)
    [then] = [then for method, _, then in port.calls if method == "runtime/capabilities"]
    then(None, {"code": -32601, "message": "Method not found"})  # an engine without the method
    assert port.settings.current.plan_works is True and port.delivered == []
    then({}, None)
    assert port.settings.current.plan_works is False
    [update] = port.delivered
    [mode] = [o for o in update["configOptions"] if o["id"] == "mode"]
    assert "plan" not in [o["value"] for o in mode["options"]]


def test_the_seeds_engine_is_not_todays() -> None:
    port = FakePort()
    seed = {"session": {"sessionId": "s1"}, "settings": {"model": {"available": [
        {"providerId": "zhipu", "modelId": "glm-5", "name": "GLM-5"}]}}}
    assert EngineSurface(port).materialized(True, seed, has_mcp_servers=True) is False
    assert port.calls == []
    # Its catalog is remembered too (issue 32: the seed's dialect offered "Default model" every run).
    assert port.remembered == [{"available": [{"providerId": "zhipu", "modelId": "glm-5", "name": "GLM-5"}]}]


def test_every_session_opened_tells_the_engine_its_questions_wait_for_the_user() -> None:
    """Issue 32: the engine answers a question by itself unless told not to, and asks a session's runtime
    preferences only as it makes it; a session resumed in a new engine process must be told too."""
    port = FakePort()
    surface = EngineSurface(port)
    surface.materialized(True, TODAY, has_mcp_servers=False)
    surface.materialized(False, TODAY, has_mcp_servers=False)  # a load or a resume of the same session
    preferences = [params for method, params, _ in port.calls if method == PREFERENCES]
    assert preferences == [{"workspace": {"workspacePath": "/w", "workspaceKey": "k"},
                            "preferences": {"askUserQuestionAutoResolutionEnabled": False}}] * 2

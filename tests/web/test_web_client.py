"""The web client (hub/web/) in a real browser: Debian's chromium driven by Playwright.

The browser part runs in its own process (tests/web/scenario.py) because
Playwright's event loop and this process's gevent patching (tests/conftest.py)
must not meet. The scenario asserts each step on the page and on the frames the
fake hub receives; this test then validates every frame of the run against
the ACP schema, both directions. Screenshots of a 390×844 phone viewport are
left in tests/web/artifacts/ (git-ignored).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.schema import assert_valid_frame
from tests.web.browser import run_scenario
from tests.web.client_frames import assert_valid_page_frame

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
SCENARIO_TIMEOUT = 240


@pytest.fixture(scope="module")
def run() -> dict[str, Any]:
    done = run_scenario("tests.web.scenario", ARTIFACTS, SCENARIO_TIMEOUT)
    frames = json.loads((ARTIFACTS / "frames.json").read_text()) if (ARTIFACTS / "frames.json").exists() else []
    return {"returncode": done.returncode, "output": f"{done.stdout}\n{done.stderr}", "frames": frames}


@pytest.mark.timeout(SCENARIO_TIMEOUT + 30)
def test_the_page_does_everything_the_scenario_checks(run: dict[str, Any]) -> None:
    assert run["returncode"] == 0, run["output"]
    assert "scenario passed" in run["output"]
    for name in ("phone-session.png", "phone-permission.png", "phone-list.png", "phone-quota.png", "phone-files.png",
                 "phone-changes.png"):
        assert (ARTIFACTS / name).stat().st_size > 10_000, f"{name} missing or empty"


def test_every_frame_is_valid_acp(run: dict[str, Any]) -> None:
    assert run["frames"], run["output"]
    agent_requests: dict[int, dict[Any, str]] = {}  # per connection: id of a request to the page → method
    page_requests: dict[int, dict[Any, str]] = {}
    page_methods = set()
    for entry in run["frames"]:
        assert "binary" not in entry, "the page sent a binary frame"
        connection, frame = entry["connection"], entry["frame"]
        if entry["from"] == "server":
            if "method" in frame and "id" in frame:
                agent_requests.setdefault(connection, {})[frame["id"]] = frame["method"]
            assert_valid_frame(frame, page_requests.get(connection, {}))
        else:
            if "method" in frame:
                page_methods.add(frame["method"])
                if "id" in frame:
                    page_requests.setdefault(connection, {})[frame["id"]] = frame["method"]
            assert_valid_page_frame(frame, agent_requests.get(connection, {}))
    assert page_methods == {"initialize", "session/load", "session/new", "session/prompt", "session/cancel",
                            "_zcode/files/list", "_zcode/files/read", "_zcode/files/changes",
                            "session/set_config_option", "session/set_mode"}, page_methods

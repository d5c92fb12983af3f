"""Starting a session in a project root, archiving and deleting sessions from the page, in chromium
at phone size, through the real hub and a serve bridge (tests/web/manage_scenario.py; screenshots in
tests/web/artifacts-manage/, git-ignored)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.web.browser import run_scenario

ARTIFACTS = Path(__file__).resolve().parent / "artifacts-manage"
SCENARIO_TIMEOUT = 180


@pytest.mark.timeout(SCENARIO_TIMEOUT + 30)
def test_sessions_are_started_archived_and_deleted_from_the_page() -> None:
    done = run_scenario("tests.web.manage_scenario", ARTIFACTS, SCENARIO_TIMEOUT)
    output = f"{done.stdout}\n{done.stderr}"
    assert done.returncode == 0 and "scenario passed" in output, output
    for name in ("phone-session-menu.png", "phone-delete-confirm.png", "phone-list-after.png"):
        assert (ARTIFACTS / name).stat().st_size > 10_000, f"{name} missing or empty"

"""Renaming a session from the page, in chromium, through the real hub and a serve bridge
(tests/web/rename_scenario.py; screenshots in tests/web/artifacts-rename/, git-ignored)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.web.browser import run_scenario

ARTIFACTS = Path(__file__).resolve().parent / "artifacts-rename"
SCENARIO_TIMEOUT = 150


@pytest.mark.timeout(SCENARIO_TIMEOUT + 30)
def test_a_session_is_renamed_from_the_page() -> None:
    done = run_scenario("tests.web.rename_scenario", ARTIFACTS, SCENARIO_TIMEOUT)
    output = f"{done.stdout}\n{done.stderr}"
    assert done.returncode == 0 and "scenario passed" in output, output

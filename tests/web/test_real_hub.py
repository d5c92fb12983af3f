"""The web client in chromium against the real hub and a real ``zcode-acp serve`` on the simulator.

The browser part runs in its own process (tests/web/real_scenario.py), for the
same reason as test_web_client.py. The scenario starts the hub and the bridge
itself and stops them (both must exit 0). Screenshots of the 390×844 phone
viewport, and the hub's and the bridge's logs, are left in
tests/web/artifacts-real-hub/ (git-ignored).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.web.browser import run_scenario

ARTIFACTS = Path(__file__).resolve().parent / "artifacts-real-hub"
SCENARIO_TIMEOUT = 180


@pytest.mark.timeout(SCENARIO_TIMEOUT + 30)
def test_the_page_through_the_real_hub_and_serve_bridge() -> None:
    done = run_scenario("tests.web.real_scenario", ARTIFACTS, SCENARIO_TIMEOUT)
    output = f"{done.stdout}\n{done.stderr}"
    assert done.returncode == 0 and "scenario passed" in output, output
    for name in ("real-hub-session.png", "real-hub-permission.png"):
        assert (ARTIFACTS / name).stat().st_size > 10_000, f"{name} missing or empty"

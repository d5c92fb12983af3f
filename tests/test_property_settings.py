"""Issue 21: every property test holds on a loaded machine.

A newcomer's first run failed with hypothesis' ``FailedHealthCheck`` (input
generation too slow under load). This walks every hypothesis test in the suite
and checks the settings it really runs with: no deadline, and the time-based
health check off.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from hypothesis import HealthCheck

TESTS = Path(__file__).parent


def property_tests():
    for path in sorted(TESTS.rglob("test_*.py")):
        if "hypothesis" not in path.read_text(errors="replace"):
            continue
        module = importlib.import_module(".".join(path.relative_to(TESTS.parent).with_suffix("").parts))
        for name, value in vars(module).items():
            if name.startswith("test") and getattr(value, "is_hypothesis_test", False):
                yield f"{module.__name__}::{name}", value


def test_every_property_test_has_no_deadline_and_no_too_slow_check():
    found = dict(property_tests())
    assert len(found) >= 8, sorted(found)  # the walk does see the suite's property tests
    for name, test in found.items():
        used = test._hypothesis_internal_use_settings
        assert used.deadline is None, f"{name}: deadline {used.deadline}"
        assert HealthCheck.too_slow in used.suppress_health_check, f"{name}: too_slow is checked"

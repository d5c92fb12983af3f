"""Every process-level test runs against both simulator dialects (docs/simulator.md, Dialects).

``classic`` plays the seed's app-server, ``today`` today's desktop engine; the
bridge must pass every test on each. A test that concerns one dialect only
says so with ``@pytest.mark.dialects("today")``. ``ZCODE_TEST_DIALECTS=today``
(a comma list) narrows a local run.
"""

from __future__ import annotations

import os

import pytest

ALL_DIALECTS = ("classic", "today")


def wanted_dialects() -> tuple[str, ...]:
    chosen = os.environ.get("ZCODE_TEST_DIALECTS", "")
    names = tuple(name.strip() for name in chosen.split(",") if name.strip() in ALL_DIALECTS)
    return names or ALL_DIALECTS


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "dialects(*names): run this process test only against these simulator dialects")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "sim_dialect" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("dialects")
    names = [name for name in wanted_dialects() if marker is None or name in marker.args]
    # A narrowed run may leave a one-dialect test with nothing: it is then deselected, not failed.
    metafunc.parametrize("sim_dialect", names, ids=names, indirect=True)


@pytest.fixture(autouse=True)
def sim_dialect(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The dialect this run of the test plays; the harness hands it to the simulator."""
    name: str = request.param
    monkeypatch.setenv("ZCODE_SIM_DIALECT", name)
    return name

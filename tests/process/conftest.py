"""Every process-level test runs against three engines (docs/simulator.md, Dialects).

``classic`` plays the seed's app-server, ``cli016`` the 0.16 desktop engine, and ``cli016-v4``
is the 0.16 engine with the bridge on its v4 data plane (docs/v4.md); the bridge must pass
every test on each, and every frame between the bridge and the
simulator must match the dialect's schemas (``engine_schema_check`` below). A test that concerns one dialect only
says so with ``@pytest.mark.dialects("cli016")``. ``ZCODE_TEST_DIALECTS=cli016``
(a comma list) narrows a local run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests import engine_schema

# ``cli016-v4``: the cli016 simulator with the bridge on the engine's v4 data plane
# (ZCODE_ACP_ENGINE_API=v4, docs/v4.md). BRIDGE_VARIANTS value: (simulator dialect, engine API).
ALL_DIALECTS = ("classic", "cli016", "cli016-v4")
BRIDGE_VARIANTS = {"cli016-v4": ("cli016", "v4")}
OLD_NAMES = {"today": "cli016", "today-v4": "cli016-v4"}  # what ZCODE_TEST_DIALECTS took before the rename


def wanted_dialects() -> tuple[str, ...]:
    chosen = os.environ.get("ZCODE_TEST_DIALECTS", "")
    known = (*ALL_DIALECTS, *BRIDGE_VARIANTS)  # (cli016-v4 is in both: the set is what counts)
    names = tuple(OLD_NAMES.get(name.strip(), name.strip()) for name in chosen.split(","))
    names = tuple(name for name in names if name in known)
    return names or ALL_DIALECTS


def simulator_dialect(name: str) -> str:
    return BRIDGE_VARIANTS[name][0] if name in BRIDGE_VARIANTS else name


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "dialects(*names): run this process test only against these simulator dialects")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "sim_dialect" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("dialects")
    names = [name for name in wanted_dialects() if marker is None or simulator_dialect(name) in marker.args]
    # A narrowed run may leave a one-dialect test with nothing: it is then deselected, not failed.
    metafunc.parametrize("sim_dialect", names, ids=names, indirect=True)


@pytest.fixture(autouse=True)
def sim_dialect(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The dialect this run of the test plays; the harness hands it to the simulator (and the engine API to the bridge)."""
    name: str = simulator_dialect(request.param)
    monkeypatch.setenv("ZCODE_SIM_DIALECT", name)
    if request.param in BRIDGE_VARIANTS:
        monkeypatch.setenv("ZCODE_ACP_ENGINE_API", BRIDGE_VARIANTS[request.param][1])
    else:
        monkeypatch.delenv("ZCODE_ACP_ENGINE_API", raising=False)
    return name


# -- the engine-schema check (docs/simulator.md, "The schema check") ------------------------------------------


@pytest.fixture(autouse=True)
def engine_schema_check(request: pytest.FixtureRequest, sim_dialect: str, monkeypatch: pytest.MonkeyPatch,
                        tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every frame between the bridge and the simulator, both ways, checked against schemas/ at teardown.

    The simulator records what it reads and writes (``ZCODE_SIM_FRAMES``, sim/frames_log.py); the
    environment reaches it through the bridge, which inherits it. Set up before the test's own
    fixtures, this is torn down after them, once every process of the test has exited.
    ``ZCODE_TEST_ENGINE_SCHEMA``: ``strict`` (the default) fails the test on any finding, ``report``
    appends the findings to build/engine-schema-report.jsonl, ``off`` records nothing.
    """
    mode = engine_schema.mode_from_env()
    if mode == "off":
        yield
        return
    frames = tmp_path_factory.mktemp("engine-frames") / "frames.jsonl"
    monkeypatch.setenv("ZCODE_SIM_FRAMES", str(frames))
    yield
    failure = engine_schema.conclude(frames, sim_dialect, mode, request.node.nodeid)
    if failure:
        pytest.fail(failure, pytrace=False)

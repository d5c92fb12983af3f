"""Today's engine (docs/backend-protocol.md §11): one test per difference, against the ``today`` simulator.

Everything else in tests/process runs against both dialects; these tests
concern the newer engine's habits only.
"""

import json

import pytest

from tests.process.harness import bridge, run

pytestmark = pytest.mark.dialects("today")


def trace_start(b) -> dict:
    """The simulator's first trace line: the dialect and the provider variables it was given."""
    for line in b.trace.read_text().splitlines():
        entry = json.loads(line)
        if "start" in entry:
            return entry["start"]
    raise AssertionError("the simulator never started")


# -- row 3: provider configuration ------------------------------------------------------------


@run
async def test_provider_files_are_derived_for_the_child_when_absent(tmp_path):
    home = tmp_path / "zcode-home"
    builtin = home / "v2" / "runtime" / "provider" / "zhipu" / "3.15.0" / "abc" / "zcode-builtin.json"
    builtin.parent.mkdir(parents=True)
    builtin.write_text("{}")
    personal = home / "v2" / "provider_config.json"
    personal.write_text("{}")
    # Without both files a desktop engine exits at start: the prompt only works if the bridge named them.
    async with bridge(tmp_path, env={"ZCODE_SIM_PROVIDER_CONFIG": "exit"}) as b:
        sid = await b.new_session()
        assert (await b.prompt(sid, "hello")).stop_reason == "end_turn"
        assert trace_start(b)["env"] == {"ZCODE_BUILTIN_PROVIDER_CONFIG_FILE": str(builtin),
                                         "ZCODE_PERSONAL_PROVIDER_CONFIG_FILE": str(personal)}
    log = b.log.read_text()
    assert f"ZCODE_BUILTIN_PROVIDER_CONFIG_FILE={builtin} (derived" in log


@run
async def test_provider_files_the_user_set_are_never_overridden(tmp_path):
    home = tmp_path / "zcode-home"
    (home / "v2").mkdir(parents=True)
    (home / "v2" / "provider_config.json").write_text("{}")
    mine = tmp_path / "my-builtin.json"
    mine.write_text("{}")
    env = {"ZCODE_BUILTIN_PROVIDER_CONFIG_FILE": str(mine), "ZCODE_PERSONAL_PROVIDER_CONFIG_FILE": str(mine)}
    async with bridge(tmp_path, env=env) as b:
        sid = await b.new_session()
        assert (await b.prompt(sid, "hello")).stop_reason == "end_turn"
        assert trace_start(b)["env"] == env

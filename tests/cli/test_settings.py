"""One table of environment variables: Config reads it, --help prints it, the README shows it."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import pytest

from zcode_acp.config import settings as config
from zcode_acp.config.settings import SETTINGS, Config, SettingError, markdown_table
from zcode_acp.protocol.session_config import MODE_IDS
from tests.cli.helpers import ROOT, SYSTEM_PATH
from zcode_acp.config.remote import RemoteConfig

NUMERIC = [s.name for s in SETTINGS if s.parse in (config.seconds, config.positive_seconds)]


def test_the_readme_table_is_the_settings_table():
    readme = (ROOT / "README.md").read_text()
    assert markdown_table() in readme, (
        "README's configuration table differs from config.SETTINGS; "
        "regenerate it with: .venv/bin/python -m zcode_acp.config.settings")


def test_every_setting_names_a_config_attribute_and_documents_its_real_default():
    fields = {f.name for f in dataclasses.fields(Config)}
    defaults = Config()
    remote_source = (ROOT / "config" / "remote.py").read_text() + \
        (ROOT / "cli" / "main.py").read_text()
    remote_defaults = RemoteConfig()
    for setting in SETTINGS:
        if setting.attr is None:  # remote access: read (with the config file) by remote_config.py
            assert f'"{setting.name}"' in remote_source, setting.name
            continue
        assert setting.attr in fields, setting.name
        if setting.default:  # what the docs say the default is, is what Config does
            assert setting.parse(setting.default) == getattr(defaults, setting.attr), setting.name
    documented = {s.name: s.default for s in SETTINGS}
    assert documented["ZCODE_ACP_REMOTE_PORT"] == str(remote_defaults.bridge_port)
    assert documented["ZCODE_ACP_HUB_PORT"] == str(remote_defaults.hub_port)
    assert documented["ZCODE_ACP_HUB_HOST"] == remote_defaults.hub_host
    assert len({s.name for s in SETTINGS}) == len(SETTINGS)


def test_values_are_parsed_into_the_attributes_the_actors_read():
    config = Config.from_env({
        "ZCODE_BIN": "/opt/zcode/bin/zcode", "ZCODE_ACP_MODE": "build", "ZCODE_HOME": "~/elsewhere",
        "ZCODE_DISALLOWED_TOOLS": "Bash Write", "ZCODE_ACP_SILENCE_PROBE": "0", "ZCODE_ACP_CALL_TIMEOUT": "2.5",
        "ZCODE_ACP_BUSY_LIMIT": "7", "ZCODE_ACP_INTERACTION_TIMEOUT": "30",
    })
    assert config.zcode_bin == "/opt/zcode/bin/zcode"
    assert config.default_mode == "build"
    assert config.zcode_home == Path.home() / "elsewhere"
    assert config.extra_args == ("--disallowed-tools", "Bash Write")
    assert (config.silence_probe, config.call_timeout, config.busy_retry_limit, config.interaction_timeout) == \
        (0.0, 2.5, 7.0, 30.0)


def test_unset_or_empty_means_the_default():
    assert Config.from_env({}) == Config()
    assert Config.from_env({setting.name: "" for setting in SETTINGS}) == Config()


@pytest.mark.parametrize("name", NUMERIC)
@pytest.mark.parametrize("value", ["abc", "-1", "nan", "inf", "1e999"])
def test_a_bad_number_is_one_clear_error_naming_the_variable(name, value):
    with pytest.raises(SettingError) as caught:
        Config.from_env({name: value})
    message = str(caught.value)
    assert message.startswith(f"{name}={value!r} is not valid: expected a number of seconds")
    assert "\n" not in message


def test_the_call_timeout_cannot_be_zero_but_the_others_can():
    with pytest.raises(SettingError):
        Config.from_env({"ZCODE_ACP_CALL_TIMEOUT": "0"})
    assert Config.from_env({"ZCODE_ACP_INTERACTION_TIMEOUT": "0"}).interaction_timeout == 0


def test_the_mode_must_be_one_the_bridge_offers():
    for mode_id in MODE_IDS:
        assert Config.from_env({"ZCODE_ACP_MODE": mode_id}).default_mode == mode_id
    with pytest.raises(SettingError, match=r"ZCODE_ACP_MODE='bogus' is not valid: expected one of plan, build"):
        Config.from_env({"ZCODE_ACP_MODE": "bogus"})


def test_zcode_sim_is_found_next_to_the_interpreter_when_not_on_path(monkeypatch):
    monkeypatch.setenv("PATH", SYSTEM_PATH)
    beside = str(Path(sys.executable).parent / "zcode-sim")
    assert Config.from_env({"ZCODE_BIN": "zcode-sim"}).zcode_bin == beside
    assert os.path.exists(beside)
    # Other names are left to PATH, as given.
    assert Config.from_env({"ZCODE_BIN": "zcode"}).zcode_bin == "zcode"


def test_zcode_sim_on_path_is_left_to_path(monkeypatch):
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{SYSTEM_PATH}")
    assert Config.from_env({"ZCODE_BIN": "zcode-sim"}).zcode_bin == "zcode-sim"


def test_mode_names_are_case_insensitive():
    assert Config.from_env({"ZCODE_ACP_MODE": "Build"}).default_mode == "build"
    assert Config.from_env({"ZCODE_ACP_MODE": " YOLO "}).default_mode == "yolo"
    from zcode_acp.protocol.session_config import validate_mode

    assert validate_mode("Plan") == "plan"  # session/set_mode and /mode alike


def test_the_project_roots_setting_is_in_the_table_and_checked():
    names = [setting.name for setting in SETTINGS]
    assert "ZCODE_ACP_PROJECT_ROOTS" in names
    assert Config.from_env({"ZCODE_ACP_PROJECT_ROOTS": "/srv/a:~/b"})  # valid: absolute or ~/
    with pytest.raises(SettingError, match="ZCODE_ACP_PROJECT_ROOTS='a:/b' is not valid: expected absolute folders"):
        Config.from_env({"ZCODE_ACP_PROJECT_ROOTS": "a:/b"})

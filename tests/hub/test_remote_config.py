"""Remote-access configuration: file, environment, precedence and the mode check."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from zcode_acp.config.remote import (RemoteConfig, config_path, load_remote_config,
                                                parse_remote_config)

HOME = Path("/home/someone")
PRIVATE = 0o100600
SHARED = 0o100644


def parse(document: object | None, env: dict[str, str] | None = None,
          mode: int = PRIVATE) -> RemoteConfig:
    text = None if document is None else json.dumps(document)
    return parse_remote_config(text, mode, env or {}, home=HOME)


def test_defaults_without_file_or_environment() -> None:
    config = parse(None)
    assert config == RemoteConfig()
    assert (config.hub_host, config.hub_port, config.bridge_port) == ("127.0.0.1", 8377, 8378)
    assert config.token is None and not config.enabled and config.hub_autostart


def test_file_values_are_read() -> None:
    config = parse({"remote": {"enabled": True, "token": "file-token-0123456789", "hubHost": "0.0.0.0",
                               "hubPort": 9000, "bridgePort": 9100,
                               "projectRoots": ["~/src", "/srv/work"]}})
    assert config.enabled and config.token == "file-token-0123456789"
    assert (config.hub_host, config.hub_port, config.bridge_port) == ("0.0.0.0", 9000, 9100)
    assert config.project_roots == (HOME / "src", Path("/srv/work"))
    assert config.warnings == ()


def test_environment_overrides_the_file_field_by_field() -> None:
    config = parse({"remote": {"enabled": False, "token": "file-token-0123456789", "hubPort": 9000,
                               "bridgePort": 9100, "projectRoots": ["/a"]}},
                   {"ZCODE_ACP_REMOTE": "yes", "ZCODE_ACP_REMOTE_TOKEN": "env-token-0123456789",
                    "ZCODE_ACP_HUB_PORT": "9001", "ZCODE_ACP_PROJECT_ROOTS": "/b:/c",
                    "ZCODE_ACP_HUB_AUTOSTART": "0"})
    assert config.enabled and config.token == "env-token-0123456789" and config.hub_port == 9001
    assert config.bridge_port == 9100  # not overridden: the file's value stays
    assert config.project_roots == (Path("/b"), Path("/c"))
    assert not config.hub_autostart


@pytest.mark.parametrize("word,expected", [("1", True), ("true", True), ("ON", True),
                                           ("0", False), ("off", False), ("no", False)])
def test_remote_flag_words(word: str, expected: bool) -> None:
    assert parse(None, {"ZCODE_ACP_REMOTE": word}).enabled is expected


def test_invalid_environment_values_fall_back_with_a_warning() -> None:
    config = parse({"remote": {"hubPort": 9000}},
                   {"ZCODE_ACP_HUB_PORT": "not-a-port", "ZCODE_ACP_REMOTE": "maybe"})
    assert config.hub_port == 9000 and not config.enabled
    assert any("ZCODE_ACP_HUB_PORT" in w for w in config.warnings)
    assert any("ZCODE_ACP_REMOTE" in w for w in config.warnings)


def test_invalid_file_values_fall_back_to_defaults() -> None:
    config = parse({"remote": {"hubPort": 70000, "bridgePort": "x", "enabled": "perhaps",
                               "projectRoots": ["relative/dir", 5]}})
    assert (config.hub_port, config.bridge_port, config.enabled) == (8377, 8378, False)
    assert config.project_roots == ()
    assert len(config.warnings) == 5


def test_token_from_a_shared_file_is_refused() -> None:
    config = parse({"remote": {"token": "file-token-0123456789", "hubPort": 9000}}, mode=SHARED)
    assert config.token is None
    assert config.hub_port == 9000  # the rest of the file still counts
    assert any("chmod 600" in w for w in config.warnings)


def test_environment_token_is_fine_whatever_the_file_mode() -> None:
    config = parse({"remote": {"token": "file-token-0123456789"}}, {"ZCODE_ACP_REMOTE_TOKEN": "env-token-0123456789"},
                   mode=SHARED)
    assert config.token == "env-token-0123456789"


def test_malformed_file_is_ignored_with_a_warning() -> None:
    config = parse_remote_config("{not json", PRIVATE, {"ZCODE_ACP_HUB_PORT": "9002"},
                                 home=HOME)
    assert config.hub_port == 9002
    assert any("not valid JSON" in w for w in config.warnings)


def test_config_path_follows_xdg() -> None:
    assert config_path({}, HOME) == HOME / ".config/zcode-acp/config.json"
    assert config_path({"XDG_CONFIG_HOME": "/x"}, HOME) == Path("/x/zcode-acp/config.json")
    assert config_path({"XDG_CONFIG_HOME": "relative"}, HOME) == \
        HOME / ".config/zcode-acp/config.json"


def test_load_reads_the_real_file_and_checks_its_mode(tmp_path: Path,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / "zcode-acp"
    folder.mkdir()
    path = folder / "config.json"
    path.write_text(json.dumps({"remote": {"token": "from-file-0123456789", "hubPort": 9005}}))
    env = {"XDG_CONFIG_HOME": str(tmp_path)}
    os.chmod(path, 0o600)
    config = load_remote_config(env, home=tmp_path)
    assert config.token == "from-file-0123456789" and config.config_path == path
    os.chmod(path, 0o640)
    with caplog.at_level(logging.WARNING):
        config = load_remote_config(env, home=tmp_path)
    assert config.token is None and config.hub_port == 9005
    assert "chmod 600" in caplog.text


def test_a_token_shorter_than_16_characters_is_refused() -> None:
    config = parse({"remote": {"token": "short-token"}}, {})
    assert config.token is None and any("shorter than 16" in w for w in config.warnings)
    config = parse(None, {"ZCODE_ACP_REMOTE_TOKEN": "fifteen-chars-x"})
    assert config.token is None
    assert parse(None, {"ZCODE_ACP_REMOTE_TOKEN": "sixteen-chars-xx"}).token == "sixteen-chars-xx"


def test_public_host_names_for_a_tunnel() -> None:
    config = parse({"remote": {"publicHost": "Agent.Example.org"}}, {})
    assert config.public_hosts == ("agent.example.org",)
    config = parse(None, {"ZCODE_ACP_PUBLIC_HOST": "a.example.org, b.example.org"})
    assert config.public_hosts == ("a.example.org", "b.example.org")
    config = parse({"remote": {"publicHost": "evil.org/path"}}, {})
    assert config.public_hosts == () and config.warnings


def test_a_config_file_that_is_not_an_object_is_named_not_silently_ignored() -> None:
    """Issue 29: a file holding ``[1,2]`` was ignored without a word."""
    config = parse_remote_config("[1,2]", 0o100600, {}, home=Path("/nonexistent"), path=Path("/x/config.json"))
    assert config.warnings == ("/x/config.json: not a JSON object (list); ignored",)


def test_the_warnings_are_in_the_language_of_the_person_reading_them() -> None:
    """A person reads them (doctor, the start-up lines): docs/architecture.md, "Strings a person reads"."""
    config = parse({"remote": {"token": "short"}}, {"ZCODE_ACP_LANG": "zh_CN", "ZCODE_ACP_HUB_PORT": "x"})
    assert config.token is None
    assert "远程令牌短于 16 个字符" in config.token_problem
    assert any(warning.startswith("ZCODE_ACP_HUB_PORT='x' 无效") for warning in config.warnings), config.warnings

"""``zcode-acp setup`` and ``zcode-acp quota`` as a user runs them (cli/quota.py, config/coding_plan.py)."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.quota_server import QuotaServer
from zcode_acp.cli.doctor import check_plan_key
from zcode_acp.cli.quota import run_setup
from zcode_acp.config.coding_plan import find_plan_key, key_path
from zcode_acp.config.settings import Config
from zcode_acp.protocol.host_requests import host_answer, PROVIDER_HEADERS

FIXTURES = Path(__file__).parent.parent / "fixtures" / "quota"
KEY = "plan-key-0123456789abcdef-SECRET"


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("ZCODE_PERSONAL_PROVIDER_CONFIG_FILE", raising=False)
    monkeypatch.setenv("ZCODE_HOME", str(tmp_path / ".zcode"))
    monkeypatch.setenv("ZCODE_ACP_LANG", "en")
    return tmp_path


def quota_command(home: Path, *args: str, lang: str = "en") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ZCODE_", "XDG_CONFIG"))}
    env.update(HOME=str(home), ZCODE_HOME=str(home / ".zcode"), ZCODE_ACP_LANG=lang)
    return subprocess.run([sys.executable, "-m", "zcode_acp", "quota", *args], env=env, capture_output=True,
                          text=True, timeout=60)


def test_setup_keeps_the_key_for_the_user_only_and_never_prints_it(home):
    out = io.StringIO()
    assert run_setup("bigmodel", out, read_key=lambda prompt: f"  {KEY}\n") == 0
    path = key_path(os.environ, home)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == {"provider": "bigmodel", "apiKey": KEY}
    assert KEY not in out.getvalue() and str(path) in out.getvalue()
    found = find_plan_key(os.environ, home, home / ".zcode").key
    assert found is not None and (found.provider, found.source) == ("bigmodel", "setup") and KEY not in repr(found)


def test_setup_refuses_an_unknown_provider_and_an_empty_key(home):
    assert run_setup("openai", io.StringIO(), read_key=lambda prompt: KEY) == 2
    assert run_setup("zai", io.StringIO(), read_key=lambda prompt: "  ") == 1
    assert not key_path(os.environ, home).exists()


def test_a_key_file_others_can_read_is_not_used(home):
    run_setup("zai", io.StringIO(), read_key=lambda prompt: KEY)
    key_path(os.environ, home).chmod(0o644)
    found = find_plan_key(os.environ, home, home / ".zcode")
    assert found.key is None and "chmod 600" in found.warnings[0]


def test_the_engines_own_coding_plan_key_is_reused_with_its_templates_provider(home):
    engine = home / ".zcode" / "v2"
    engine.mkdir(parents=True)
    (engine / "provider_config.json").write_text(json.dumps({"config": {"providerConfigRules": {"providerRules": [
        {"providerId": "p1", "templateId": "bigmodel-api", "enabled": True,
         "config": {"access": {"type": "zhipu-coding-plan-api-key", "apiKey": KEY}}}]}}}))
    found = find_plan_key(os.environ, home, home / ".zcode").key
    assert found is not None and (found.provider, found.source, found.api_key) == ("bigmodel", "engine", KEY)
    [check] = check_plan_key(Config(zcode_home=home / ".zcode"))
    assert "bigmodel" in check.line() and "the engine's provider configuration" in check.line()
    assert KEY not in check.line()


def test_the_engines_provider_header_request_gets_the_kept_key(home):
    params = {"providerId": "account:zai-individual-coding-plan"}
    assert host_answer(PROVIDER_HEADERS, params, lambda: None, lambda: None)["headersApplied"] is False
    assert host_answer(PROVIDER_HEADERS, params, lambda: None, lambda: KEY) == {
        "headersApplied": True, "requestAuth": {"apiKey": KEY}}


def test_quota_prints_one_line_per_window_in_the_users_language(home):
    run_setup("zai", io.StringIO(), read_key=lambda prompt: KEY)
    server = QuotaServer(body=json.loads((FIXTURES / "zai-three-windows.json").read_text()))
    try:
        english = quota_command(home, "--url", server.url)
        chinese = quota_command(home, "--url", server.url, lang="zh-CN")
    finally:
        server.close()
    assert english.returncode == 0, english.stderr
    lines = english.stdout.splitlines()
    assert lines[0] == "GLM Coding Plan (zai, key from zcode-acp setup):"
    assert [line.split(":")[0].strip() for line in lines[1:]] == [
        "5-hour window", "Weekly window", "Monthly MCP tool calls"]
    assert "15% used, resets at " in lines[1]
    assert chinese.returncode == 0 and "5 小时窗口：已用 15%" in chinese.stdout
    assert KEY not in english.stdout + english.stderr + chinese.stdout + chinese.stderr
    assert server.requests[0][1]["Authorization"] == KEY


def test_quota_without_a_key_or_with_a_refused_one_says_what_to_do(home):
    missing = quota_command(home)
    assert missing.returncode == 1 and "zcode-acp setup" in missing.stdout
    run_setup("zai", io.StringIO(), read_key=lambda prompt: KEY)
    server = QuotaServer(body=json.loads((FIXTURES / "key-refused.json").read_text()))
    try:
        refused = quota_command(home, "--url", server.url)
    finally:
        server.close()
    assert refused.returncode == 1 and "refused the Coding Plan key" in refused.stdout

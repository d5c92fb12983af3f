"""The command line in Chinese (issue 24): ``--help``, ``doctor``, the demo and the start-up warning
follow ``LANG=zh_CN.UTF-8`` (and ``ZCODE_ACP_LANG``), and the settings' meanings are one text in two languages."""

from __future__ import annotations

import re

import pytest

from zcode_acp.config.settings import SETTINGS, Config, SettingError, markdown_table
from zcode_acp.protocol.i18n import CATALOG, EN, ZH_CN
from tests.cli.helpers import ROOT, ZCODE_ACP, clean_env, free_port, run

CJK = re.compile(r"[\u4e00-\u9fff]")


def chinese(tmp_path, **extra):
    return clean_env(tmp_path, LANG="zh_CN.UTF-8", **extra)


def test_the_locale_or_zcode_acp_lang_chooses_the_language():
    assert Config.from_env({"LANG": "zh_CN.UTF-8"}).lang == ZH_CN
    assert Config.from_env({"LANG": "zh_CN.UTF-8", "ZCODE_ACP_LANG": "en"}).lang == EN
    assert Config.from_env({"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}).lang == EN
    assert Config.from_env({}).lang == EN


def test_a_bad_setting_is_reported_in_the_locales_language():
    with pytest.raises(SettingError) as chinese:
        Config.from_env({"LANG": "zh_CN.UTF-8", "ZCODE_ACP_BUSY_LIMIT": "soon"})
    assert str(chinese.value) == "ZCODE_ACP_BUSY_LIMIT='soon' 无效：应为秒数（0 或更大）"
    with pytest.raises(SettingError) as english:
        Config.from_env({"LANG": "zh_CN.UTF-8", "ZCODE_ACP_LANG": "en", "ZCODE_ACP_MODE": "bogus"})
    assert str(english.value) == "ZCODE_ACP_MODE='bogus' is not valid: expected one of plan, build, edit, yolo, auto"


def test_the_english_meanings_in_the_catalog_are_the_settings_table():
    for setting in SETTINGS:
        assert setting.meaning_in(EN) == setting.meaning
        english = CATALOG[EN][f"setting.{setting.name}"]
        assert setting.meaning == english.format(modes="plan, build, edit, yolo, auto", sep=":"), setting.name


def test_the_chinese_readme_has_the_chinese_settings_table():
    assert markdown_table(ZH_CN) in (ROOT / "README.zh-CN.md").read_text()


def test_help_in_chinese(tmp_path):
    done = run([ZCODE_ACP, "--help"], chinese(tmp_path))
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "ZCode 编程智能体的 ACP 桥接" in text and "环境变量（留空即使用默认值）：" in text
    assert "  ZCODE_ACP_LANG (默认: 未设置)" in text and "检查当前安装，并打印编辑器配置。" in text
    english = run([ZCODE_ACP, "--help"], chinese(tmp_path, ZCODE_ACP_LANG="en")).stdout
    assert "ACP bridge for the ZCode coding agent." in english and not CJK.search(english)


def test_doctor_in_chinese(tmp_path):
    ports = {"ZCODE_ACP_HUB_PORT": str(free_port()), "ZCODE_ACP_REMOTE_PORT": str(free_port())}
    done = run([ZCODE_ACP, "doctor"], chinese(tmp_path, ZCODE_BIN="zcode-sim", **ports), timeout=90)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].endswith(" 自检")
    assert any(line.startswith("✓ ZCode CLI 能正常启动，并在临时工作区中响应了 session/create") for line in lines)
    assert "运行桥接所需的一切都已就绪。" in lines
    assert any(line.startswith("! 新会话默认处于 yolo 模式") for line in lines)
    checks = [line for line in lines if line[:2] in ("✓ ", "! ", "✗ ")]
    # Every check in Chinese except those that are only a path or a version (Python, a file found).
    assert sum(bool(CJK.search(line)) for line in checks) >= len(checks) - 2, checks
    # Where each editor's configuration goes, and the acpx commands' comments (cli/editors.py).
    assert "── Neovim: CodeCompanion — 你的 CodeCompanion 配置" in lines
    assert "# 不写配置条目，效果相同" in lines


def test_doctor_names_a_missing_cli_and_its_fix_in_chinese(tmp_path):
    ports = {"ZCODE_ACP_HUB_PORT": str(free_port()), "ZCODE_ACP_REMOTE_PORT": str(free_port())}
    done = run([ZCODE_ACP, "doctor"], chinese(tmp_path, ZCODE_BIN="no-such-zcode", **ports), timeout=90)
    assert done.returncode == 1
    failed = [line for line in done.stdout.splitlines() if line.startswith("✗ ")]
    assert failed and failed[0].startswith("✗ ZCode CLI 无法启动：ZCODE_BIN='no-such-zcode' 不在当前进程的 PATH 中")
    assert "—— 解决办法：安装 ZCode CLI" in failed[0]


def test_the_start_up_warning_in_chinese(tmp_path):
    done = run([ZCODE_ACP], chinese(tmp_path, ZCODE_BIN="no-such-zcode"), timeout=30)
    assert "警告：ZCODE_BIN='no-such-zcode' 不在当前进程的 PATH 中" in done.stderr, done.stderr


def test_a_refused_trace_path_is_one_chinese_line(tmp_path):
    """The one line a start refused for its ``--trace`` prints (exit 2) follows the locale too."""
    done = run([ZCODE_ACP, "--trace", str(tmp_path)], chinese(tmp_path), timeout=30)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert f"--trace {str(tmp_path)!r} 是一个文件夹；请给出其中的文件名" in done.stderr


def test_the_demo_in_chinese(tmp_path):
    done = run([ZCODE_ACP, "demo"], chinese(tmp_path), timeout=90)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "运行在模拟后端上" in out and out.count("—— 结束原因：end_turn（上下文：") == 3
    assert "你： 带我熟悉一下这个项目。" in out and "计划：" in out
    # The bridge it started speaks Chinese too: the permission dialog's options and the plan approval.
    assert "  → 允许一次 (allow_once)" in out and "    本项目内始终允许 (allow_always)" in out
    assert "    拒绝 (reject_once)" in out and "  → 批准方案 (allow_once)" in out and "    继续规划 (reject_once)" in out


@pytest.mark.parametrize("command", [[], ["demo"], ["doctor"], ["hub"], ["serve"], ["replay"]])
def test_the_chinese_help_has_no_english_of_typer_and_fits_80_columns(tmp_path, command):
    """Issue 29: ``[default: …]``, ``[required]`` and lines past 80 columns in the Chinese ``--help``."""
    import unicodedata

    done = run([ZCODE_ACP, *command, "--help"], clean_env(tmp_path, ZCODE_ACP_LANG="zh-CN"), timeout=30)
    assert done.returncode == 0, done.stderr
    assert "default:" not in done.stdout and "[required]" not in done.stdout
    widths = [sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)
              for line in done.stdout.splitlines()]
    assert max(widths) <= 80, done.stdout

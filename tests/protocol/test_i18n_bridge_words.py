"""The bridge's own words in the modules the i18n scan once exempted (issue 30) follow the language
(issue 29): a Chinese session, or a Chinese command line, reads them in Chinese; the engine's own
words inside them pass untranslated."""

from __future__ import annotations

from pathlib import Path

from zcode_acp.actors.session.v4.commands import refused
from zcode_acp.actors.transport import trace
from zcode_acp.cli import editors
from zcode_acp.config.coding_plan import parse_key_file
from zcode_acp.protocol import jsonrpc
from zcode_acp.protocol.errors import from_backend_error
from zcode_acp.protocol.host_requests import PROVIDER_HEADERS, host_answer
from zcode_acp.protocol.i18n import EN, ZH_CN
from zcode_acp.protocol.v4.commands import CommandAck


def test_the_framing_of_an_engine_error_follows_the_connection_whatever_the_caller_knew():
    # Most callers do not pass a language: the connection that writes the answer words it.
    error = from_backend_error({"code": 7, "message": "disk full"}, "session/resume")
    assert error.message == "ZCode backend error on session/resume: disk full (code 7)"
    assert jsonrpc.acp_error(1, error.to_dict(), ZH_CN)["error"]["message"] == \
        "ZCode 后端在 session/resume 上出错：disk full（错误码 7）"
    assert jsonrpc.acp_error(1, error, EN)["error"]["message"] == error.message


def test_the_provider_headers_refusal_the_engine_shows_is_in_the_users_language():
    answer = host_answer(PROVIDER_HEADERS, {"providerId": "zhipu"}, lambda: None, lambda: None, ZH_CN)
    assert answer["headersApplied"] is False
    assert answer["errorMessage"].startswith("此模型通过 ZCode 账号登录")
    assert "ZCODE_APP_SERVER_AUTH_MODE" in answer["errorMessage"] and "`zcode login`" in answer["errorMessage"]


def test_a_refused_trace_path_is_one_line_in_the_users_language(tmp_path):
    refusal = trace.trace_path_problem(str(tmp_path))
    assert refusal is not None and "is a folder" in str(refusal)  # the log's words stay English
    assert refusal.words(ZH_CN).startswith(f"--trace {str(tmp_path)!r} 是一个文件夹")


def test_a_refused_coding_plan_key_file_is_explained_in_the_users_language(tmp_path):
    where = tmp_path / "coding-plan.json"
    shared = parse_key_file({"provider": "zai", "apiKey": "k"}, 0o100644, where, ZH_CN)
    assert shared.key is None and shared.warnings == (
        f"{where} 可被其他用户读取（权限 0644）；其中的密钥不会被使用。请运行：chmod 600 {where}",)
    assert parse_key_file([1, 2], 0o100600, where, ZH_CN).warnings == (
        f"{where} 不是 JSON 对象；请重新运行 `zcode-acp setup`",)
    assert "needs a provider" in parse_key_file({}, 0o100600, Path("x")).warnings[0]  # English by default


def test_doctors_editor_notes_and_acpx_comments_in_chinese():
    launch = editors.Launch("/opt/zcode-acp")
    where = {title: place for title, place, _, _ in editors.render_all(launch, ZH_CN)}
    assert where["Neovim: CodeCompanion"] == "你的 CodeCompanion 配置"
    assert where["acpx"] == "~/.acpx/config.json；然后在项目文件夹中运行下面的命令"
    commands = editors.acpx_commands(launch, ZH_CN)
    assert "# 不写配置条目，效果相同\n" in commands and "acpx zcode exec '你的提示词'" in commands
    assert "acpx zcode exec 'your prompt'" in editors.acpx_commands(launch)  # docs/editors.md's


def test_a_v4_command_the_engine_refused_is_said_in_the_sessions_language():
    ack = CommandAck("c-1", "rejected", "somethingNew", "kept as it is", 3, None)
    assert refused(ack, ZH_CN).message == "引擎的回答是 rejected（somethingNew）：kept as it is"
    assert refused(ack).message == "the engine answered rejected (somethingNew): kept as it is"

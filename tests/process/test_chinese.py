"""A session in Chinese (issue 24): with ``LANG=zh_CN.UTF-8`` the bridge names its modes and options,
writes its notices and its dialogs in Chinese; the engine's own words pass through as they are."""

import pytest

from tests.process.harness import RecordingClient, bridge, pick, run

NO_FORMS = {"_meta": {"terminal_output": True}}
CHINESE = {"LANG": "zh_CN.UTF-8"}


@pytest.mark.dialects("classic")
@run
async def test_a_session_in_chinese_modes_a_notice_and_a_permission_dialog(tmp_path):
    client = RecordingClient()
    client.on_permission = lambda sid, params: pick("opt_allow_once")
    async with bridge(tmp_path, NO_FORMS, env=CHINESE, client=client) as b:
        created = await b.conn.new_session(cwd="/tmp", mcp_servers=[])
        sid = created.session_id
        modes = {mode.id: (mode.name, mode.description) for mode in created.modes.available_modes}
        assert modes["build"] == ("构建", "直接实现，有风险的操作先确认")
        assert modes["auto"][0] == "自动" and modes["edit"][0] == "编辑"
        names = {getattr(option, "root", option).id: getattr(option, "root", option).name for option in created.config_options}
        assert names["mode"] == "模式" and names["model"] == "模型"

        # A notice the bridge writes: the engine stopped the turn at its limit.
        response = await b.prompt(sid, "#sim end result=error_max_turns")
        assert response.stop_reason == "max_turn_requests"
        assert "ZCode 已停止：本轮达到了模型调用次数上限。" in client.texts(sid)

        # A permission dialog: the bridge's names for the engine's options, the engine's reason as it is.
        await b.prompt(sid, "#sim permission kinds=allow_once,allow_project,deny")
        [dialog] = client.dialogs_of("session/request_permission")
        assert [(o["optionId"], o["name"]) for o in dialog["options"]] == [
            ("opt_allow_once", "允许一次"), ("opt_allow_project", "本项目内始终允许"), ("opt_deny", "拒绝")]
        shown = [block["content"]["text"] for block in dialog["toolCall"]["content"] if block["type"] == "content"]
        assert "This command changes files." in shown  # the engine's reason, in its own words
        assert client.texts(sid).endswith("Permission granted; done.")


@pytest.mark.dialects("classic")
@run
async def test_plan_approval_and_a_slash_command_answer_in_chinese(tmp_path):
    client = RecordingClient()
    client.on_permission = lambda sid, params: pick("approve")
    async with bridge(tmp_path, NO_FORMS, env=CHINESE, client=client) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim plan")
        [dialog] = client.dialogs_of("session/request_permission")
        assert [(o["optionId"], o["name"]) for o in dialog["options"]] == [("approve", "批准方案"), ("reject", "继续规划")]
        await b.prompt(sid, "/mode")
        assert "当前模式：yolo" in client.texts(sid).rsplit("starting.", 1)[-1]  # (then the modes it offers)


@pytest.mark.dialects("classic")
@run
async def test_zcode_acp_lang_en_keeps_english_whatever_the_locale(tmp_path):
    async with bridge(tmp_path, NO_FORMS, env={**CHINESE, "ZCODE_ACP_LANG": "en"}) as b:
        created = await b.conn.new_session(cwd="/tmp", mcp_servers=[])
        assert {mode.id: mode.name for mode in created.modes.available_modes}["build"] == "Build"


@pytest.mark.dialects("classic")
def test_the_bridges_own_errors_follow_the_sessions_language(tmp_path):
    """Issue 29: every client shows the bridge's -32602 (and its other errors) to the user, so in a
    Chinese session they are Chinese, from each layer that finds a mistake; the engine's words are not ours."""
    from tests.process.raw import RawBridge

    raw = RawBridge(tmp_path, env=CHINESE)
    try:
        ids = iter(range(1, 100))

        def ask(method, params):
            request_id = next(ids)
            raw.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            return raw.until(lambda frame: frame.get("id") == request_id)

        assert ask("initialize", {"protocolVersion": "1"})["error"]["message"] == \
            "参数无效：protocolVersion 必须是整数"  # protocol/handshake.py
        assert "result" in ask("initialize", {"protocolVersion": 1})
        answers = {
            "relative cwd": ask("session/new", {"cwd": "relative/dir", "mcpServers": []}),  # the Supervisor
            "missing cwd": ask("session/new", {"cwd": str(tmp_path / "gone"), "mcpServers": []}),
            "mcp": ask("session/new", {"cwd": str(tmp_path), "mcpServers": [{"name": "m", "type": "ws"}]}),
            "auth": ask("authenticate", {"methodId": "password"}),
            "method": ask("session/nonsense", {}),
        }
        sid = ask("session/new", {"cwd": str(tmp_path), "mcpServers": []})["result"]["sessionId"]
        answers["prompt"] = ask("session/prompt", {"sessionId": sid, "prompt": [{"type": "audio", "data": "",
                                                                                 "mimeType": "audio/wav"}]})
        answers["config"] = ask("session/set_config_option", {"sessionId": sid, "configId": "colour", "value": "red"})
        answers["load"] = ask("session/load", {"sessionId": sid, "cwd": "/", "mcpServers": []})  # the Session
        messages = {name: answer["error"]["message"] for name, answer in answers.items()}
        assert messages["relative cwd"] == "参数无效：cwd 必须是绝对路径"
        assert messages["missing cwd"] == f"参数无效：cwd 不是已存在的目录：{tmp_path / 'gone'}"
        assert messages["mcp"] == ("参数无效：mcpServers[0] ('m') 无法传给 ZCode：使用的传输方式 'ws' 不受支持，"
                                   "ZCode 只接受 stdio、http 和 sse")
        assert messages["auth"].startswith("参数无效：methodId 未知")
        assert messages["method"] == "没有这个方法：session/nonsense"
        assert messages["prompt"] == "参数无效：prompt[0].type 不支持音频（promptCapabilities.audio 为 false）"
        assert messages["config"].startswith("参数无效：configId 未知：'colour'")
        assert messages["load"] == f"参数无效：cwd 与会话的工作区根目录 {tmp_path} 不一致"
        assert {answer["error"]["code"] for name, answer in answers.items() if name != "method"} == {-32602}
        raw.write(b'{"jsonrpc": "2.0", "id": 90, "method": \n[{"jsonrpc": "2.0", "id": 91, "method": "initialize"}]\n')
        parse = raw.until(lambda frame: "error" in frame and frame["error"]["code"] == -32700)
        assert parse["id"] == 90 and parse["error"]["message"].startswith("解析错误：")  # protocol/framing.py
        batch = raw.until(lambda frame: "error" in frame and frame["error"]["code"] == -32600)
        assert batch["error"]["message"] == "无效请求：不支持批量请求"
    finally:
        raw.close()

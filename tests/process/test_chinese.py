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
        assert client.texts(sid).endswith("当前模式：yolo")


@pytest.mark.dialects("classic")
@run
async def test_zcode_acp_lang_en_keeps_english_whatever_the_locale(tmp_path):
    async with bridge(tmp_path, NO_FORMS, env={**CHINESE, "ZCODE_ACP_LANG": "en"}) as b:
        created = await b.conn.new_session(cwd="/tmp", mcp_servers=[])
        assert {mode.id: mode.name for mode in created.modes.available_modes}["build"] == "Build"

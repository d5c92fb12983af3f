"""The notification settings: parsed into Config, a bad value one line and exit 2 (docs/hub.md)."""

import pytest

from tests.cli.helpers import ZCODE_ACP, clean_env, run
from zcode_acp.config.settings import Config, SettingError


def test_notification_settings_reach_the_config():
    config = Config.from_env({
        "ZCODE_ACP_NOTIFY_URL": "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k",
        "ZCODE_ACP_NOTIFY_FORMAT": "WeCom", "ZCODE_ACP_NOTIFY_AFTER": "0", "ZCODE_ACP_NOTIFY_TEXT": "1",
        "ZCODE_ACP_NOTIFY_INTERVAL": "5", "ZCODE_ACP_NOTIFY_LINK": "https://agent.example.org/?token=secret#x",
    })
    assert config.notify_url == "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k"
    assert (config.notify_format, config.notify_after, config.notify_text, config.notify_interval) == \
        ("wecom", 0.0, True, 5.0)
    assert config.notify_page == "https://agent.example.org/"  # a token in the address is cut off
    assert Config().notify_url == "" and Config().notify_text is False


@pytest.mark.parametrize("name,value", [
    ("ZCODE_ACP_NOTIFY_URL", "ftp://example.org/"), ("ZCODE_ACP_NOTIFY_URL", "not a url"),
    ("ZCODE_ACP_NOTIFY_FORMAT", "slack"), ("ZCODE_ACP_NOTIFY_AFTER", "-1"), ("ZCODE_ACP_NOTIFY_TEXT", "yes"),
    ("ZCODE_ACP_NOTIFY_LINK", "agent.example.org"),
])
def test_a_bad_notification_setting_is_refused(name, value):
    with pytest.raises(SettingError, match=name):
        Config.from_env({name: value})


def test_the_bridge_refuses_a_bad_format_with_one_line_and_exit_2(tmp_path):
    done = run([ZCODE_ACP], clean_env(tmp_path, ZCODE_BIN="zcode-sim", ZCODE_ACP_NOTIFY_FORMAT="slack"), timeout=30)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == ["zcode-acp: ZCODE_ACP_NOTIFY_FORMAT='slack' is not valid: expected one of "
                                        "json, wecom, feishu, dingtalk, ntfy"]

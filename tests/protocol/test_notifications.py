"""The webhook bodies, one per service, for each kind of notice (protocol/notifications.py).

Shapes as each service documents its incoming webhook: WeCom's group robot
(``msgtype: markdown``, ``markdown.content``), Feishu/Lark's custom bot
(``msg_type: interactive``, a ``card`` with ``header`` and ``elements``),
DingTalk's custom robot (``msgtype: markdown``, ``markdown.title``/``text``),
ntfy (a plain body, ``Title``/``Click`` headers; RFC 2047 for a non-ASCII title).
"""

import email.header
import json

import pytest

from zcode_acp.protocol import notifications as n

LINK = "https://agent.example.org/#/s/inst1/sess_1"
NOTICES = {
    n.TURN_ENDED: n.Notice(n.TURN_ENDED, n.turn_summary(200, "end_turn"), "Fix the parser", "sess_1", LINK),
    n.DIALOG_WAITING: n.Notice(n.DIALOG_WAITING, n.dialog_summary("permission", ""), "修复解析器", "sess_1", LINK),
    n.BACKEND_FAILED: n.Notice(n.BACKEND_FAILED, "The ZCode backend exited (code 3)."),
}


def body(post):
    return json.loads(post.body)


@pytest.mark.parametrize("kind", n.KINDS)
def test_generic_json_names_the_event_title_summary_and_link(kind):
    notice = NOTICES[kind]
    sent = body(n.render(notice, "json"))
    assert sent["event"] == kind and sent["summary"] == notice.summary
    assert sent["title"] == (notice.title or "Untitled session")
    assert sent.get("link") == (notice.link or None) and sent.get("sessionId") == (notice.session_id or None)
    assert "prompt" not in sent and "answer" not in sent


@pytest.mark.parametrize("kind", n.KINDS)
def test_wecom_is_a_markdown_robot_message(kind):
    post = n.render(NOTICES[kind], "wecom")
    sent = body(post)
    assert set(sent) == {"msgtype", "markdown"} and sent["msgtype"] == "markdown"
    content = sent["markdown"]["content"]
    assert NOTICES[kind].heading in content and NOTICES[kind].summary in content
    assert (f"]({LINK})" in content) == bool(NOTICES[kind].link)
    assert len(content.encode()) <= 4096
    assert post.headers["Content-Type"].startswith("application/json")


@pytest.mark.parametrize("kind", n.KINDS)
def test_feishu_is_an_interactive_card_with_a_button_to_the_session(kind):
    sent = body(n.render(NOTICES[kind], "feishu"))
    assert sent["msg_type"] == "interactive"
    card = sent["card"]
    assert card["header"]["title"] == {"tag": "plain_text", "content": NOTICES[kind].heading}
    assert card["elements"][0]["tag"] == "div" and card["elements"][0]["text"]["tag"] == "lark_md"
    assert NOTICES[kind].summary in card["elements"][0]["text"]["content"]
    buttons = [a for e in card["elements"] if e["tag"] == "action" for a in e["actions"]]
    assert [b["url"] for b in buttons] == ([LINK] if NOTICES[kind].link else [])


@pytest.mark.parametrize("kind", n.KINDS)
def test_dingtalk_is_a_markdown_robot_message_with_a_title(kind):
    sent = body(n.render(NOTICES[kind], "dingtalk"))
    assert sent["msgtype"] == "markdown"
    assert sent["markdown"]["title"] == NOTICES[kind].heading
    assert NOTICES[kind].summary in sent["markdown"]["text"]


@pytest.mark.parametrize("kind", n.KINDS)
def test_ntfy_is_a_plain_body_with_title_and_click_headers(kind):
    notice = NOTICES[kind]
    post = n.render(notice, "ntfy")
    assert post.headers["Content-Type"].startswith("text/plain")
    assert post.body.decode() == notice.summary  # the link rides in Click, not in the text
    title = post.headers["Title"]
    title.encode("ascii")  # a header value must be ASCII: non-ASCII goes RFC 2047-encoded
    decoded = "".join(part.decode(charset or "ascii") if isinstance(part, bytes) else part
                      for part, charset in email.header.decode_header(title))
    assert decoded == notice.heading
    assert post.headers.get("Click") == (notice.link or None)


def test_text_appears_only_when_the_notice_carries_it():
    quiet = NOTICES[n.TURN_ENDED]
    chatty = n.Notice(**{**{f: getattr(quiet, f) for f in quiet.__slots__}, "prompt": "secret plan", "answer": "ok"})
    for fmt in n.FORMATS:
        assert "secret plan" not in n.render(quiet, fmt).body.decode()
        assert "secret plan" in n.render(chatty, fmt).body.decode()


def test_a_long_text_is_clipped():
    notice = n.Notice(n.TURN_ENDED, "done", prompt="x" * 5000)
    assert len(body(n.render(notice, "json"))["prompt"]) == n.TEXT_LIMIT


def test_the_link_is_the_pages_session_route_without_query():
    assert n.session_link("https://agent.example.org/", "i d", "s/1") == "https://agent.example.org/#/s/i%20d/s%2F1"
    assert n.session_link("", "inst", "sess") == ""
    assert n.session_link("https://a.org", "", "sess") == ""


def test_summaries_say_how_long_and_how_it_ended():
    assert n.turn_summary(200.4, "end_turn") == "Finished after 3 min 20 s (end_turn)."
    assert n.turn_summary(5, "") == "Finished after 5 s."
    assert n.dialog_summary("questions", "") == "A question waits for your answer."
    assert n.dialog_summary("permission", "Run `ls`") == "A permission waits for your answer: Run `ls`."
    asked = "Which file should I test?"
    assert n.dialog_summary("questions", asked) == f"A question waits for your answer: {asked}"  # no "?."
    assert n.session_name("/home/me/proj/", "9350c6b5-5d0f") == "proj (9350c6b5)" and n.session_name("", "abc") == "abc"


def test_a_chinese_bridge_writes_its_notices_in_chinese_and_keeps_the_engines_words():
    """The bridge's words follow ZCODE_ACP_LANG (issue 24); the title and the engine's reason pass as they are."""
    turn = n.Notice(n.TURN_ENDED, n.turn_summary(200, "end_turn", "zh-CN"), "Fix the parser", "sess_1", LINK,
                    lang="zh-CN")
    content = body(n.render(turn, "wecom"))["markdown"]["content"]
    assert "本轮已完成：Fix the parser" in content and "用时 3 分 20 秒，已结束（end_turn）。" in content
    assert f"[打开会话]({LINK})" in content
    dialog = n.Notice(n.DIALOG_WAITING, n.dialog_summary("permission", "", "zh-CN"), lang="zh-CN")
    assert dialog.heading == "等待你的回应：未命名会话" and dialog.summary == "一个权限请求正在等待你的回应。"
    failed = n.backend_summary("ZCode backend exited (code 3)", "zh-CN")
    assert failed == "后端出错：ZCode backend exited (code 3)；下一次提问会启动新的后端。"
    card = body(n.render(turn, "feishu"))["card"]
    assert "打开会话" in json.dumps(card, ensure_ascii=False)

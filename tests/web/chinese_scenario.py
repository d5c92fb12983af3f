"""The page in Chinese (issue 24), in a real browser: ``navigator.languages`` zh-CN shows it in Chinese,
the switch shows it in English and is remembered, and a title with markup stays text.

Run by tests/web/test_chinese_page.py in its own process (as tests/web/scenario.py is).
"""

from __future__ import annotations

import traceback
from pathlib import Path

from playwright.async_api import async_playwright, expect

from tests.web.browser import CHROMIUM, CHROMIUM_ARGS, scenario_command
from tests.web.fake_hub import FakeHub
from tests.web.scenario import INITIALIZE_RESULT, WEB_ROOT, session_state, text

TOKEN = "s3cret-token"
WAIT_MS = 10_000
INSTANCES = [{"id": "inst-1", "pid": 4242, "port": 8378, "origin": "editor", "workspace": "/work/demo-project",
              "startedAt": "2025-01-01T00:00:00Z", "version": "0.1.0",
              "sessions": [{"sessionId": "sess-1", "title": "<b>修复</b> login", "updatedAt": "2099-01-01T00:00:00Z",
                            "status": "idle"},
                           {"sessionId": "sess-2", "updatedAt": "2024-01-01T00:00:00Z", "status": "idle"}]}]


HISTORY = [
    text("user_message_chunk", "构建项目", "u1"),
    {"sessionUpdate": "tool_call", "toolCallId": "b1", "title": "Bash: make", "kind": "execute",
     "status": "completed", "rawInput": {"command": "make"}, "_meta": {"background": {"taskId": "exec_1"}}},
    {"sessionUpdate": "tool_call", "toolCallId": "p1", "title": "Bash: ls", "kind": "execute", "status": "pending",
     "rawInput": {"command": "ls"}},
    {"sessionUpdate": "usage_update", "used": 20000, "size": 200000},
]


async def lines_of(locator) -> int:
    """How many lines the element's text takes (its line boxes)."""
    return await locator.evaluate("el => { const r = document.createRange(); r.selectNodeContents(el); "
                                  "return new Set([...r.getClientRects()].map(b => Math.round(b.top))).size; }")


async def check_session(page, hub: FakeHub, artifacts: Path) -> None:
    """The session view at 390 px in Chinese: the connection state, the cards' words, the usage tooltip."""
    await page.locator('.session-row[data-session-id="sess-1"]').click()
    conn = await hub.next_connection()
    await conn.respond(await conn.expect("initialize"), INITIALIZE_RESULT)
    load = await conn.expect("session/load")
    await expect(page.locator(".conn-state")).to_have_text("加载中…")
    for update in HISTORY:
        await conn.update("sess-1", update)
    await conn.respond(load, session_state())
    await expect(page.locator(".conn-state")).to_have_text("已连接")
    transcript = page.locator(".transcript")
    await expect(transcript.locator('.tool-card[data-tool-call-id="b1"] .tool-status')).to_have_text("完成")
    await expect(transcript.locator('.tool-card[data-tool-call-id="p1"] .tool-status')).to_have_text("等待中")
    await expect(transcript.locator('.tool-card[data-tool-call-id="b1"] .badge')).to_have_text("后台")
    await expect(page.locator(".usage")).to_have_attribute("title", "上下文：已用 20k / 共 200k 个 token")
    await page.screenshot(path=str(artifacts / "chinese-session-390.png"))


async def check(page, base: str) -> None:
    await page.goto(base + "/")
    assert await page.evaluate("navigator.languages[0]") == "zh-CN"
    assert await page.evaluate("document.documentElement.lang") == "zh-CN"
    await expect(page.locator("label[for=token]")).to_have_text("访问令牌")
    await expect(page.locator(".token-form button[type=submit]")).to_have_text("连接")
    await page.fill("#token", "wrong-token")
    await page.click(".token-form button[type=submit]")
    await expect(page.locator(".banner")).to_have_text("令牌不正确，hub 拒绝了连接。请检查后重试。")
    await page.fill("#token", TOKEN)
    await page.click(".token-form button[type=submit]")
    instance = page.locator('.instance[data-instance-id="inst-1"]')
    await expect(instance.locator(".new-session")).to_have_text("+ 新建会话")
    await expect(instance.locator(".session-name")).to_have_text(["<b>修复</b> login", "未命名会话"])
    assert await instance.locator(".session-name b").count() == 0  # a title is text, never markup
    await expect(page.locator("label[for=project-path]")).to_have_text("打开项目")
    start = page.locator(".start-form button[type=submit]")
    await expect(start).to_have_text("启动")
    assert await lines_of(start) == 1, "启动 wraps at 390 px"

    # The switch: English, remembered across a reload, and back.
    switch = page.locator(".lang-switch")
    await expect(switch).to_have_text("English")
    await switch.click()
    await expect(instance.locator(".new-session")).to_have_text("+ New session")
    assert await page.evaluate("localStorage.getItem('zcode-acp.lang')") == "en"
    await page.reload()
    await expect(instance.locator(".new-session")).to_have_text("+ New session")
    await expect(instance.locator(".session-name").nth(1)).to_have_text("Untitled session")
    assert await page.evaluate("document.documentElement.lang") == "en"
    await expect(switch).to_have_text("中文")
    await switch.click()
    await expect(instance.locator(".new-session")).to_have_text("+ 新建会话")
    assert await page.evaluate("localStorage.getItem('zcode-acp.lang')") == "zh-CN"


async def main(artifacts: Path) -> int:
    artifacts.mkdir(parents=True, exist_ok=True)
    hub = FakeHub(WEB_ROOT, TOKEN, INSTANCES)
    port = await hub.start()
    failed = False
    errors: list[str] = []
    try:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            context = await browser.new_context(locale="zh-CN", viewport={"width": 390, "height": 844})
            context.set_default_timeout(WAIT_MS)
            expect.set_options(timeout=WAIT_MS)
            page = await context.new_page()
            page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
            try:
                await check(page, f"http://127.0.0.1:{port}")
                await page.screenshot(path=str(artifacts / "chinese-list.png"))
                await check_session(page, hub, artifacts)
            except BaseException:
                failed = True
                traceback.print_exc()
                await page.screenshot(path=str(artifacts / "chinese-failure.png"))
            await browser.close()
    finally:
        await hub.stop()
    if errors:
        failed = True
        print("page errors:", *errors, sep="\n  ")
    print("scenario failed" if failed else "scenario passed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    scenario_command(main)

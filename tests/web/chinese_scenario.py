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
from tests.web.scenario import WEB_ROOT

TOKEN = "s3cret-token"
WAIT_MS = 10_000
INSTANCES = [{"id": "inst-1", "pid": 4242, "port": 8378, "origin": "editor", "workspace": "/work/demo-project",
              "startedAt": "2025-01-01T00:00:00Z", "version": "0.1.0",
              "sessions": [{"sessionId": "sess-1", "title": "<b>修复</b> login", "updatedAt": "2099-01-01T00:00:00Z",
                            "status": "idle"},
                           {"sessionId": "sess-2", "updatedAt": "2024-01-01T00:00:00Z", "status": "idle"}]}]


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

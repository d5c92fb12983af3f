"""Renaming a session from the page: chromium → the real hub → a real ``serve`` bridge on today's
simulated engine (``python -m tests.web.rename_scenario --artifacts DIR``, its own process like
real_scenario.py). The page's rename control calls the bridge's ``_session/rename`` over the page's
own ACP connection; the title then shows on the page, in the hub's instance list and on the list page.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import traceback
from pathlib import Path

from playwright.async_api import Page, async_playwright, expect

from tests.web.browser import open_phone_page, scenario_command
from tests.web.real_scenario import TOKEN, WAIT_MS, Child, environment, instances

HEARTBEAT_WAIT = 25.0  # the bridge re-registers every 10 s: the hub's list has the title by then


async def hub_lists_title(port: int, instance_id: str, title: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HEARTBEAT_WAIT
    while True:
        found = [s.get("title") for i in instances(port) if i["id"] == instance_id for s in i.get("sessions", [])]
        if title in found:
            return
        if loop.time() > deadline:
            raise AssertionError(f"the hub lists {found}, not {title!r}")
        await asyncio.sleep(0.2)  # the hub has no change feed to wait on: polled, bounded by the deadline


async def steps(page: Page, base: str, port: int, instance_id: str) -> None:
    print("step: a new session, named by the engine from its first input", flush=True)
    await page.goto(base + "/")
    await page.fill("#token", TOKEN)
    await page.click(".token-form button[type=submit]")
    instance = page.locator(f'.instance[data-instance-id="{instance_id}"]')
    await instance.locator(".new-session").click()
    await expect(page.locator(".session-view")).to_have_attribute("data-loaded", "true")
    await page.fill(".prompt-input", "#sim stream count=1\nFirst words here")
    await page.click("button.send")
    await expect(page.locator(".session-title")).to_have_text("First words here")

    print("step: renamed from the page", flush=True)
    await page.click("button.rename")
    await expect(page.locator(".rename-input")).to_have_value("First words here")
    await page.fill(".rename-input", "Renamed from the phone")
    await page.click("button.rename-save")
    await expect(page.locator(".rename-form")).to_be_hidden()
    await expect(page.locator(".session-title")).to_have_text("Renamed from the phone")

    print("step: the hub's list and the list page show the new title", flush=True)
    await hub_lists_title(port, instance_id, "Renamed from the phone")
    await page.click("button.back")
    await expect(page.locator(".session-name").filter(has_text="Renamed from the phone")).to_have_count(1)


async def main(artifacts: Path) -> int:
    artifacts.mkdir(parents=True, exist_ok=True)
    failed = False
    with tempfile.TemporaryDirectory(prefix="zcode-acp-rename-") as folder:
        tmp = Path(folder)
        project = (tmp / "projects" / "rename-demo").resolve()
        project.mkdir(parents=True)
        env = environment(tmp, project)
        env["ZCODE_SIM_DIALECT"] = "today"  # renameSession is a v4 command: today's engine has it
        hub = Child([sys.executable, "-m", "zcode_acp", "hub", "--port", "0", "--stay"], env, artifacts / "hub.log")
        bridge: Child | None = None
        try:
            port = int((await hub.wait_line(r"listening on http://[^:]+:(\d+)")).group(1))
            env["ZCODE_ACP_HUB_PORT"] = str(port)
            bridge = Child([sys.executable, "-m", "zcode_acp", "serve", "--cwd", str(project)], env,
                           artifacts / "serve.log")
            instance_id = (await bridge.wait_line(r"registered with the hub at \S+ as (\w+)")).group(1)
            async with async_playwright() as playwright:
                console: list[str] = []
                browser, page = await open_phone_page(playwright, WAIT_MS, console)
                try:
                    await steps(page, f"http://127.0.0.1:{port}", port, instance_id)
                    await page.screenshot(path=str(artifacts / "rename.png"))
                except BaseException:
                    failed = True
                    traceback.print_exc()
                    await page.screenshot(path=str(artifacts / "rename-failure.png"))
                if console:
                    failed = True
                    print("console errors (CSP violations, script errors):", *console, sep="\n  ")
                await browser.close()
        except BaseException:
            failed = True
            traceback.print_exc()
        finally:
            codes = [bridge.stop() if bridge else None, hub.stop()]
            if codes != [0, 0]:
                failed = True
                print(f"exit codes (serve, hub): {codes}")
    print("scenario failed" if failed else "scenario passed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    scenario_command(main)

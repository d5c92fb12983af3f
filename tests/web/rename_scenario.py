"""Renaming a session from the page: chromium → the real hub → a real ``serve`` bridge on today's
simulated engine (``python -m tests.web.rename_scenario --artifacts DIR``, its own process like
real_scenario.py). The page's rename control calls the bridge's ``_session/rename`` over the page's
own ACP connection; the title then shows on the page, in the hub's instance list and on the list page.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from playwright.async_api import Page, expect

from tests.web.browser import scenario_command
from tests.web.real_scenario import TOKEN, instances, through_the_real_hub

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
    # renameSession is a v4 command: the 0.16 engine has it.
    return await through_the_real_hub(artifacts, "rename",
                                      lambda page, base, port, instance_id, project: steps(page, base, port, instance_id),
                                      dialect="cli016")


if __name__ == "__main__":
    scenario_command(main)

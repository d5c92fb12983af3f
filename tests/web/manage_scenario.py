"""Starting, archiving and deleting sessions from the page: chromium at phone size → the real hub →
a real ``serve`` bridge on the simulator (``python -m tests.web.manage_scenario --artifacts DIR``, its
own process like real_scenario.py). "New session" beside the project folder starts a session in that
project root (the hub's ``POST /api/instances``, then ``session/new`` with its cwd); the session's ⋯
menu archives it (``_session/archive``) or, after the page asks, deletes it (``session/delete``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from playwright.async_api import Page, expect

from tests.web.browser import scenario_command
from tests.web.real_scenario import TOKEN, instances, through_the_real_hub

HEARTBEAT_WAIT = 25.0  # the bridge re-registers every 10 s: the hub's list has the change by then


def listed_ids(port: int, instance_id: str) -> list[str]:
    return [s["sessionId"] for i in instances(port) if i["id"] == instance_id for s in i.get("sessions", [])]


async def hub_lists(port: int, instance_id: str, predicate, what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HEARTBEAT_WAIT
    while not predicate(listed_ids(port, instance_id)):
        if loop.time() > deadline:
            raise AssertionError(f"the hub lists {listed_ids(port, instance_id)}: {what}")
        await asyncio.sleep(0.2)  # the hub has no change feed to wait on: polled, bounded by the deadline


async def new_session_in_root(page: Page, project: Path, words: str) -> str:
    """From the list: the project root's path, "New session", a prompt; answers the new session's id."""
    await page.fill("#project-path", str(project))
    await page.click(".start-form button.start-session")
    await expect(page.locator(".session-view")).to_have_attribute("data-loaded", "true")
    await expect(page.locator(".session-workspace")).to_have_attribute("title", str(project))
    await page.fill(".prompt-input", f"#sim stream count=1\n{words}")
    await page.click("button.send")
    await expect(page.locator(".session-title")).to_have_text(words)
    await page.wait_for_function("location.hash.startsWith('#/s/')")
    return await page.evaluate("decodeURIComponent(location.hash.split('/')[3])")


async def steps(page: Page, base: str, port: int, instance_id: str, project: Path, artifacts: Path) -> None:
    print("step: a new session in a project root, from the list", flush=True)
    await page.goto(base + "/")
    await page.fill("#token", TOKEN)
    await page.click(".token-form button[type=submit]")
    await expect(page.locator(f'.instance[data-instance-id="{instance_id}"]')).to_have_count(1)
    archived = await new_session_in_root(page, project, "Archive me")
    await hub_lists(port, instance_id, lambda ids: archived in ids, "the new session is not listed")

    print("step: archived from its menu: gone from the list", flush=True)
    await page.click("button.session-menu-button")
    await page.screenshot(path=str(artifacts / "phone-session-menu.png"))
    await page.click(".session-menu button.archive")
    await expect(page.locator(".list-view")).to_be_visible()
    await expect(page.locator(f'.session-row[data-session-id="{archived}"]')).to_have_count(0)
    await hub_lists(port, instance_id, lambda ids: archived not in ids, "the archived session is still listed")

    print("step: delete asks first; kept, then deleted", flush=True)
    await page.click(".list-view button.refresh")
    deleted = await new_session_in_root(page, project, "Delete me")
    await hub_lists(port, instance_id, lambda ids: deleted in ids, "the second session is not listed")
    await page.click("button.session-menu-button")
    await page.click(".session-menu button.delete")
    question = page.locator(".delete-confirm")
    await expect(question).to_be_visible()
    await page.screenshot(path=str(artifacts / "phone-delete-confirm.png"))
    await page.click(".delete-confirm button.delete-keep")
    await expect(question).to_be_hidden()
    await expect(page.locator(".session-view")).to_be_visible()  # nothing was sent: still here
    await expect(page.locator(".session-title")).to_have_text("Delete me")
    await page.click("button.session-menu-button")
    await page.click(".session-menu button.delete")
    await page.click(".delete-confirm button.delete-confirm-button")
    await expect(page.locator(".list-view")).to_be_visible()
    await expect(page.locator(f'.session-row[data-session-id="{deleted}"]')).to_have_count(0)
    await hub_lists(port, instance_id, lambda ids: deleted not in ids, "the deleted session is still listed")
    await page.click(".list-view button.refresh")
    rows = page.locator(f'.instance[data-instance-id="{instance_id}"] .session-row')
    await expect(rows.filter(has_text="Delete me")).to_have_count(0)
    await expect(rows.filter(has_text="Archive me")).to_have_count(0)
    await page.screenshot(path=str(artifacts / "phone-list-after.png"))


async def main(artifacts: Path) -> int:
    return await through_the_real_hub(
        artifacts, "manage",
        lambda page, base, port, instance_id, project: steps(page, base, port, instance_id, project, artifacts))


if __name__ == "__main__":
    scenario_command(main)

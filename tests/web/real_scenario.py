"""The web client end to end: chromium (Playwright) → the real ``zcode-acp hub`` → a real ``serve`` bridge
on the simulator.

Run as its own process (``python -m tests.web.real_scenario --artifacts DIR``), like scenario.py, so
Playwright's event loop never meets the pytest process's gevent patching. Nothing here is scripted on
the server side: the hub, the bridge and zcode-sim answer for themselves, and each step waits on the
page with Playwright's waiting assertions (or on a line the hub prints). Exit status 0 = every step
passed; a 390×844 screenshot is left in DIR.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import traceback
import urllib.request
from pathlib import Path
from typing import Any
from collections.abc import Awaitable, Callable

from playwright.async_api import Page, async_playwright, expect

from tests.web.browser import open_phone_page, scenario_command

REPO = Path(__file__).resolve().parents[2]
TOKEN = "real-hub-token-0123456789"
WAIT_MS = 15_000
XSS_PROMPT = "Please echo <script>window.__pwned = 1</script> back"


class Child:
    """A child process whose stderr lines are collected by a thread-free asyncio reader."""

    def __init__(self, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.log = log
        self.stream = log.open("wb")
        self.proc = subprocess.Popen(argv, env=env, cwd=REPO, stdin=subprocess.DEVNULL, stdout=self.stream,
                                     stderr=subprocess.STDOUT)

    async def wait_line(self, pattern: str, timeout: float = 20.0) -> re.Match[str]:
        regex = re.compile(pattern)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            for line in self.log.read_text(errors="replace").splitlines():
                if match := regex.search(line):
                    return match
            if self.proc.poll() is not None:
                raise AssertionError(f"{self.proc.args[3]} exited ({self.proc.returncode}) without {pattern!r}:\n"
                                     + self.log.read_text(errors="replace"))
            if loop.time() > deadline:
                raise AssertionError(f"no line {pattern!r} in {timeout}s:\n" + self.log.read_text(errors="replace"))
            await asyncio.sleep(0.05)  # a log file has no readiness to wait on: polled, bounded by the deadline

    def stop(self) -> int | None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.stream.close()
        return self.proc.returncode


def environment(tmp: Path, project: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ZCODE_ACP_", "PLAYWRIGHT_"))}
    env.update(XDG_CONFIG_HOME=str(tmp / "config"), ZCODE_ACP_REMOTE_TOKEN=TOKEN, ZCODE_ACP_HUB_AUTOSTART="0",
               ZCODE_ACP_PROJECT_ROOTS=str(project.parent), ZCODE_BIN="zcode-sim", ZCODE_HOME=str(tmp / "zcode-home"),
               ZCODE_SIM_DATA=str(tmp / "sim-data"), PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return env


def instances(port: int) -> list[dict[str, Any]]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/instances",
                                     headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        listed: list[dict[str, Any]] = json.loads(response.read())
        return listed


async def steps(page: Page, base: str, instance_id: str, project: Path, artifacts: Path) -> None:
    transcript = page.locator(".transcript")

    print("step: token entry lists the serve bridge", flush=True)
    await page.goto(base + "/")
    await page.fill("#token", TOKEN)
    await page.click(".token-form button[type=submit]")
    instance = page.locator(f'.instance[data-instance-id="{instance_id}"]')
    await expect(instance.locator("h2")).to_have_text(project.name)

    print("step: a new session in the project", flush=True)
    await instance.locator(".new-session").click()
    await expect(page.locator(".session-view")).to_have_attribute("data-loaded", "true")
    await expect(page.locator(".conn-state")).to_have_text("live")

    print("step: a prompt streams its answer with tool cards (#sim demo)", flush=True)
    await page.fill(".prompt-input", "#sim demo")
    await page.click("button.send")
    await expect(transcript.locator(".message.agent").last).to_contain_text("a README and a src/ folder")
    bash = transcript.locator(".tool-card").filter(has_text="ls -la")
    await expect(bash.locator(".tool-status")).to_have_text("done")
    await expect(transcript.locator(".tool-card")).to_have_count(2)
    # The demo's plan: one step done, the next pending. The bar names the step it is at.
    await expect(page.locator(".plan summary")).to_have_text("Plan 1/2 · Explore src/")
    await expect(page.locator("button.cancel")).to_be_disabled()

    print("step: a permission dialog, approved (#sim permission)", flush=True)
    await page.fill(".prompt-input", "#sim permission")
    await page.click("button.send")
    dialog = page.locator(".dialog.permission")
    await expect(dialog).to_be_visible()
    await page.screenshot(path=str(artifacts / "real-hub-permission.png"))
    allow = dialog.locator("button").filter(has_text=re.compile("^Allow", re.I)).first
    await allow.click()
    await expect(page.locator(".dialog")).to_have_count(0)
    await expect(transcript.locator(".message.agent").last).to_contain_text("Permission granted")
    await expect(transcript.locator(".tool-card").filter(has_text="rm -rf build/").locator(".tool-status")
                 ).to_have_text("done")
    await expect(page.locator("button.cancel")).to_be_disabled()

    print("step: model text with <script> renders as text", flush=True)
    await page.fill(".prompt-input", XSS_PROMPT)
    await page.click("button.send")
    agent = transcript.locator(".message.agent").last
    await expect(agent).to_contain_text("<script>window.__pwned = 1</script>")
    assert await page.evaluate("window.__pwned") is None
    assert await transcript.locator("script, img, iframe, [onerror]").count() == 0
    await expect(page.locator("button.cancel")).to_be_disabled()

    print("step: cancel a long turn (#sim slow count=200 interval=0.05)", flush=True)
    await page.fill(".prompt-input", "#sim slow count=200 interval=0.05")
    await page.click("button.send")
    await expect(transcript.locator(".message.agent").last).to_contain_text("tick tick")
    await page.click("button.cancel")
    await expect(transcript.locator(".notice").last).to_have_text("Cancelled.")
    await expect(page.locator("button.cancel")).to_be_disabled()
    ticks = (await transcript.locator(".message.agent").last.inner_text()).count("tick")
    assert ticks < 200, f"the turn ran to its end ({ticks} ticks) instead of being cancelled"

    width = await page.evaluate("[document.documentElement.scrollWidth, document.querySelector('.scroller').scrollWidth]")
    assert max(width) <= 390, f"horizontal overflow on a 390 px screen: {width}"
    await page.locator(".scroller").evaluate("el => el.scrollTop = el.scrollHeight")
    await page.screenshot(path=str(artifacts / "real-hub-session.png"))

    print("step: a running session shows it in the list", flush=True)
    # Long enough (15 s) that a loaded machine still finds it running after the page changes.
    await page.fill(".prompt-input", "#sim slow count=300 interval=0.05")
    await page.click("button.send")
    await expect(transcript.locator(".message.agent").last).to_contain_text("tick tick")
    await page.goto(base + "/")  # the list, as a phone opening the page would see it
    row = page.locator(f'.instance[data-instance-id="{instance_id}"] .session-row')
    await expect(row.locator(".dot.running")).to_have_count(1)  # serve announces a turn at once
    await expect(row.locator(".dot.running")).to_have_count(0, timeout=45_000)  # and its end


Steps = Callable[[Page, str, int, str, Path], Awaitable[None]]  # page, base URL, hub port, instance, project


async def through_the_real_hub(artifacts: Path, name: str, steps: Steps, dialect: str | None = None) -> int:
    """A ``--stay`` hub and a ``serve`` bridge on the simulator, a phone-sized page, then ``steps``.

    0 when the steps pass with no console error and both children exit cleanly (screenshots in
    ``artifacts``: ``<name>.png``, or ``<name>-failure.png``)."""
    artifacts.mkdir(parents=True, exist_ok=True)
    failed = False
    with tempfile.TemporaryDirectory(prefix=f"zcode-acp-{name}-") as folder:
        tmp = Path(folder)
        project = (tmp / "projects" / f"{name}-demo").resolve()
        project.mkdir(parents=True)
        (project / "README.md").write_text(f"# {name} demo\n")
        env = environment(tmp, project)
        if dialect:
            env["ZCODE_SIM_DIALECT"] = dialect
        hub = Child([sys.executable, "-m", "zcode_acp", "hub", "--port", "0", "--stay"], env, artifacts / "hub.log")
        bridge: Child | None = None
        try:
            port = int((await hub.wait_line(r"listening on http://[^:]+:(\d+)")).group(1))
            env["ZCODE_ACP_HUB_PORT"] = str(port)
            bridge = Child([sys.executable, "-m", "zcode_acp", "serve", "--cwd", str(project)], env,
                           artifacts / "serve.log")
            instance_id = (await bridge.wait_line(r"registered with the hub at \S+ as ([\w.-]+)")).group(1)
            assert [i["origin"] for i in instances(port) if i["id"] == instance_id] == ["serve"]
            async with async_playwright() as playwright:
                console: list[str] = []
                browser, page = await open_phone_page(playwright, WAIT_MS, console)
                try:
                    await steps(page, f"http://127.0.0.1:{port}", port, instance_id, project)
                    await page.screenshot(path=str(artifacts / f"{name}.png"))
                except BaseException:
                    failed = True
                    traceback.print_exc()
                    await page.screenshot(path=str(artifacts / f"{name}-failure.png"))
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


async def main(artifacts: Path) -> int:
    return await through_the_real_hub(
        artifacts, "real-hub",
        lambda page, base, port, instance_id, project: steps(page, base, instance_id, project, artifacts))


if __name__ == "__main__":
    scenario_command(main)

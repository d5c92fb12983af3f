"""Which browser the web tests drive, and what happens when it is not there.

Debian's chromium package, driven by Playwright for Python: Playwright's own
browser download is not possible on these machines. Locally a missing browser
skips the tests with the reason; under CI (``CI`` set) it fails them, since
.ci/run installs chromium.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from importlib.util import find_spec
from pathlib import Path
from typing import Any, NoReturn

import pytest

REPO = Path(__file__).resolve().parents[2]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def missing() -> str | None:
    if not os.path.exists(CHROMIUM):
        return f"Debian's chromium is not installed at {CHROMIUM} (.ci/run installs it: apt-get install chromium)"
    for module in ("playwright", "aiohttp"):
        if find_spec(module) is None:
            return f"{module} is not installed (pip install -e '.[test]')"
    return None


def require_browser() -> None:
    reason = missing()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the browser tests: {reason}")
    pytest.skip(reason)


def run_scenario(module: str, artifacts: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """Run a browser scenario (``python -m module --artifacts DIR``) in a fresh artifacts folder.

    Its own process: Playwright's event loop and browser never share the test
    runner's. Playwright's variables are left out so it drives Debian's chromium.
    """
    require_browser()
    artifacts.mkdir(exist_ok=True)
    for old in artifacts.glob("*"):
        old.unlink()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAYWRIGHT_")}
    try:
        return subprocess.run([sys.executable, "-m", module, "--artifacts", str(artifacts)],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as expired:
        pytest.fail(f"the browser scenario did not finish in {timeout} s:\n{expired.stdout}\n{expired.stderr}")


def scenario_command(main: Callable[[Path], Awaitable[int]]) -> NoReturn:
    """A scenario module's command line: ``--artifacts DIR``; exits with what ``main`` returns."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--artifacts", type=Path, required=True)
    sys.exit(asyncio.run(main(parser.parse_args().artifacts)))


async def open_phone_page(playwright: Any, wait_ms: int, console: list[str]) -> tuple[Any, Any]:
    """(browser, page): Debian's chromium, headless, a 390×844 touch phone viewport at 2×.

    Every wait (Playwright's and its ``expect``) is bounded by ``wait_ms``; the
    page's console errors and uncaught errors are appended to ``console``.
    """
    from playwright.async_api import expect

    browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
    context = await browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2,
                                        is_mobile=True, has_touch=True)
    context.set_default_timeout(wait_ms)
    expect.set_options(timeout=wait_ms)
    page = await context.new_page()
    page.on("console", lambda msg: console.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda error: console.append(f"page error: {error}"))
    return browser, page

"""Runs the page's own Markdown and diff modules in chromium on given inputs.

``python -m tests.web.render_units`` reads ``{"markdown": [...], "diff": [[old, new], ...]}``
as JSON on stdin and prints ``{"markdown": [<innerHTML>...], "diff": [[[op, text]...]...]}``:
the DOM each input becomes, serialized by the browser itself. Its own process
for the same reason as scenario.py (no gevent around Playwright).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from playwright.async_api import async_playwright

from tests.web.fake_hub import FakeHub
from tests.web.browser import CHROMIUM, CHROMIUM_ARGS
from tests.web.scenario import WEB_ROOT

RENDER = """async (cases) => {
  const { renderMarkdown } = await import("/js/markdown.js");
  const { lineDiff, foldContext } = await import("/js/diff.js");
  const markdown = cases.markdown.map((source) => {
    const box = document.createElement("div");
    box.append(renderMarkdown(source));
    return box.innerHTML;
  });
  const diff = cases.diff.map(([a, b]) => foldContext(lineDiff(a, b)).map((l) => [l.op, l.text]));
  return { markdown, diff, pwned: window.__pwned ?? null };
}"""


async def main() -> int:
    cases = json.load(sys.stdin)
    hub = FakeHub(WEB_ROOT, "unused", [])
    port = await hub.start()
    try:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            page = await browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await page.goto(f"http://127.0.0.1:{port}/")  # the modules load from the page's own origin
            result: dict[str, Any] = await page.evaluate(RENDER, cases)
            result["errors"] = errors
            await browser.close()
    finally:
        await hub.stop()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

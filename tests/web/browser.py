"""Which browser the web tests drive, and what happens when it is not there.

Debian's chromium package, driven by Playwright for Python: Playwright's own
browser download is not possible on these machines. Locally a missing browser
skips the tests with the reason; under CI (``CI`` set) it fails them, since
.ci/run installs chromium.
"""

from __future__ import annotations

import os
from importlib.util import find_spec

import pytest

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

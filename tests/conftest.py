"""Test-wide setup: gevent patching first, exactly as the entry points do."""

# What every entry point of the bridge imports first (cli/main.py, and cli/app.py's hub, serve and
# replay): the standard library patched as the bridge patches it, so the suite runs the ssl users
# run (unpatched: actors/webhook_post.py names gevent's SSLContext itself). Not ``patch_all()``,
# which patches ssl too and would hide that path (tests/cli/test_startup.py checks they agree).
from zcode_acp.cli import runtime  # noqa: F401

import os

if os.environ.get("PYTEST_XDIST_WORKER"):
    # An xdist worker takes its next test from a queue that execnet's receiver, a native thread
    # started before this patching, fills. The main thread waits on that queue's (now gevent)
    # Event; with no timer of its own the hub would call that wait hopeless (LoopExit), though
    # gevent's Event is woken across threads. One idle timer keeps the hub waiting instead.
    import gevent

    def _keep_hub_waiting() -> None:
        while True:
            gevent.sleep(3600)

    gevent.spawn(_keep_hub_waiting)

from hypothesis import HealthCheck, settings  # after patching, like everything else

# The bridge speaks the locale's language (protocol/i18n): the suite expects English unless a
# test asks for Chinese itself, so a developer's zh_CN locale does not turn every test red.
for _name in ("ZCODE_ACP_LANG", "LC_ALL", "LC_MESSAGES"):
    os.environ.pop(_name, None)
os.environ["LANG"] = "C.UTF-8"

# Property tests run on busy machines (CI shares 2 cores with other jobs): a
# slow example or slow input generation there says nothing about the code, so
# no per-example deadline and no "too slow" health check. Every other health
# check stays (they are about the strategies, not the machine). Tests that set
# their own @settings inherit this profile for what they leave out.
settings.register_profile("loaded-machine", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("loaded-machine")


def pytest_sessionfinish(session, exitstatus):
    """A leaked actor is a non-daemon thread: never let one hold the run open."""
    import pykka

    pykka.ActorRegistry.stop_all(block=True, timeout=2)

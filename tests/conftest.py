"""Test-wide setup: gevent patching first, exactly as the entry points do."""

from gevent import monkey

monkey.patch_all()


def pytest_sessionfinish(session, exitstatus):
    """A leaked actor is a non-daemon thread: never let one hold the run open."""
    import pykka

    pykka.ActorRegistry.stop_all(block=True, timeout=2)

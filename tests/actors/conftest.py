import gevent
import pykka
import pytest

from tests.actors.fakes import Probe


@pytest.fixture(autouse=True)
def no_leaked_actors():
    """Every actor a test starts must be stopped by the end of it."""
    yield
    for probe in list(Probe.live):
        probe.stop()
    with gevent.Timeout(2, False):
        while pykka.ActorRegistry.get_all():
            gevent.sleep(0.01)  # actors stopping asynchronously (stop(block=False)) finish here
    leaked = pykka.ActorRegistry.get_all()
    pykka.ActorRegistry.stop_all()
    assert not leaked, f"leaked actors: {leaked}"

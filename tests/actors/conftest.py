import gevent
import pykka
import pytest

from tests.actors.fakes import Probe
from tests.webhook_receiver import Receiver


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


@pytest.fixture
def receiver():
    """``receiver(**options)`` starts a local webhook receiver (tests/webhook_receiver.py), closed after the test."""
    made = []

    def make(**kwargs):
        made.append(Receiver(**kwargs))
        return made[-1]

    yield make
    for each in made:
        each.close()

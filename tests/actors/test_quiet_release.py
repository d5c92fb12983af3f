"""Memory goes back once a burst is over, never while the bridge is busy (actors/memory/quiet_release.py)."""

from __future__ import annotations

from dataclasses import replace

import pykka

from zcode_acp.config.settings import Config
from zcode_acp.actors.messages import ClientFrame, RequestHandle
from zcode_acp.actors.memory.quiet_release import QuietRelease, release_memory
from tests.actors.fakes import Probe


class FakeCpu:
    """A process CPU clock the test advances by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def spend(self, seconds: float) -> None:
        self.now += seconds


def watcher(cpu: FakeCpu, released: list[int]) -> QuietRelease:
    return QuietRelease(lambda: released.append(1), clock=cpu, interval=1.0, quiet_share=0.05, burst_cpu=0.5)


def test_a_burst_then_quiet_releases_once_and_idle_releases_no_more():
    cpu, released = FakeCpu(), []
    quiet = watcher(cpu, released)
    for _ in range(3):  # a burst: most of a core each interval
        cpu.spend(0.8)
        assert not quiet.tick()
    cpu.spend(0.01)  # quiet
    assert quiet.tick() and released == [1]
    for _ in range(5):  # idle for a while: nothing more to give back
        cpu.spend(0.01)
        assert not quiet.tick()
    assert released == [1]
    cpu.spend(0.9)  # the next burst, then quiet again: one more release
    assert not quiet.tick()
    cpu.spend(0.0)
    assert quiet.tick() and released == [1, 1]


def test_a_busy_bridge_never_releases():
    cpu, released = FakeCpu(), []
    quiet = watcher(cpu, released)
    for _ in range(20):
        cpu.spend(0.06)  # just above the quiet share, all along
        assert not quiet.tick()
    assert released == []


def test_light_work_is_not_a_burst():
    cpu, released = FakeCpu(), []
    quiet = watcher(cpu, released)
    for _ in range(9):  # 0.04 s per interval: quiet each time, but 0.36 s in all is below the burst
        cpu.spend(0.04)
        assert not quiet.tick()
    assert released == []


def test_the_release_itself_does_not_count_as_the_next_burst():
    cpu = FakeCpu()
    released: list[int] = []

    def costly_release() -> None:
        released.append(1)
        cpu.spend(0.7)  # a release that took more CPU than a burst

    quiet = QuietRelease(costly_release, clock=cpu, interval=1.0, quiet_share=0.05, burst_cpu=0.5)
    cpu.spend(1.0)
    quiet.tick()
    cpu.spend(0.0)
    assert quiet.tick()
    for _ in range(3):
        cpu.spend(0.0)
        assert not quiet.tick()
    assert released == [1]


def test_release_memory_collects_cyclic_garbage():
    import gc
    import weakref

    class Node:
        pass

    node = Node()
    node.me = node  # a cycle: only the collector frees it
    alive = weakref.ref(node)
    del node
    gc.disable()
    try:
        release_memory()
    finally:
        gc.enable()
    assert alive() is None


def test_a_repeated_initialize_that_declares_nothing_new_tells_no_one(monkeypatch, tmp_path):
    from zcode_acp.actors.supervisor import Supervisor

    broadcasts: list[int] = []
    real = Supervisor._clients_changed

    def counted(self: Supervisor) -> None:
        broadcasts.append(1)
        real(self)

    monkeypatch.setattr(Supervisor, "_clients_changed", counted)
    conn = Probe()
    supervisor = Supervisor.start(replace(Config(), zcode_home=tmp_path), lambda: None)
    try:
        declared = [{"fs": {"readTextFile": True}}, {"fs": {"readTextFile": True}}, None,
                    {"fs": {"readTextFile": True, "writeTextFile": True}}]
        for serial, capabilities in enumerate(declared, 1):
            params = {"protocolVersion": 1, "clientCapabilities": capabilities}
            handle = RequestHandle(serial, serial)
            supervisor.tell(ClientFrame(conn.ref, {"method": "initialize", "params": params}, handle))
            assert conn.wait_reply(handle).result["protocolVersion"] == 1
        # the first, the one that dropped every capability, and the one that added one
        assert len(broadcasts) == 3
        assert supervisor.proxy().capabilities.get().get("fs") == {"readTextFile": True, "writeTextFile": True}
    finally:
        for ref in pykka.ActorRegistry.get_all():
            if not isinstance(ref.actor_class, type) or ref.actor_class.__name__ != "Recorder":
                ref.stop()

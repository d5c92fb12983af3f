"""Recording fakes for actor-level tests.

``Recorder`` is an actor that accepts any message and keeps it. It stands in
for the Backend, a ClientConnection or the Supervisor around the actor under
test; ``wait_for`` blocks (cooperatively, with a timeout) until a matching
message has arrived.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

import gevent
import gevent.event
import pykka

from zcode_acp.actors.messages import Batch
from zcode_acp.protocol import framing


class Store:
    """What a Recorder saw, shared with the test (all greenlets, one thread)."""

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.arrived = gevent.event.Event()


class Recorder(pykka.ThreadingActor):
    def __init__(self, store: Store) -> None:
        super().__init__()
        self.store = store

    def on_receive(self, message: Any) -> Any:
        items = message.items if type(message) is Batch else [message]
        self.store.messages.extend(items)
        self.store.arrived.set()
        return None


class Probe:
    """Test-side handle on a Recorder actor (stopped by the actor tests' conftest)."""

    live: list[Probe] = []

    def __init__(self) -> None:
        self.actor = Store()
        self.ref = Recorder.start(self.actor)
        Probe.live.append(self)

    @property
    def messages(self) -> list[Any]:
        return self.actor.messages

    def of(self, cls_name: str) -> list[Any]:
        return [m for m in self.messages if type(m).__name__ == cls_name]

    def wait_for(self, predicate: Callable[[], Any], timeout: float = 3.0) -> Any:
        with gevent.Timeout(timeout, AssertionError(f"condition not met within {timeout}s")):
            while True:
                result = predicate()
                if result:
                    return result
                self.actor.arrived.clear()
                result = predicate()
                if result:
                    return result
                self.actor.arrived.wait()

    def calls(self, method: str) -> list[Any]:
        return [m for m in self.of("BackendCall") if m.method == method]

    def wait_call(self, method: str, count: int = 1, timeout: float = 3.0) -> Any:
        return self.wait_for(lambda: len(self.calls(method)) >= count and self.calls(method)[count - 1], timeout)

    def replies(self) -> list[Any]:
        return self.of("Reply")

    def wait_reply(self, request_id: Any, timeout: float = 3.0) -> Any:
        return self.wait_for(lambda: next((r for r in self.replies() if r.request_id == request_id), None), timeout)

    def updates(self) -> list[dict[str, Any]]:
        out = []
        for deliver in self.of("Deliver"):
            for line in deliver.payload.splitlines():
                out.append(framing.decode(line)["params"]["update"])
        return out

    def text(self) -> str:
        return "".join(u["content"]["text"] for u in self.updates() if u["sessionUpdate"] == "agent_message_chunk")

    def stop(self) -> None:
        if self in Probe.live:
            Probe.live.remove(self)
            self.ref.stop()

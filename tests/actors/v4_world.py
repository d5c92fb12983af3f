"""A v4 Session against the simulator's plane, for the tests of the engine's guards (issue 31).

``tests/actors/test_session_v4.py``'s ``PlaneBackend``, made to open a session whatever the Session
asks between the ``createSession`` ack and the conversation's subscribe: a legacy ``session/resume``
read for the catalog is answered as an engine without one answers (the session still opens).
"""

from __future__ import annotations

from typing import Any

from tests.actors.test_session_v4 import PlaneBackend
from tests.sim.v4_fakes import WORKSPACE, Engine


class GuardPlane(PlaneBackend):
    def serve_any(self, *methods: str) -> Any:
        """Serve whichever of ``methods`` the Session calls next (a legacy one gets ``-32601``)."""
        def next_call() -> Any:
            for method in methods:
                if len(self.probe.calls(method)) > self.served.get(method, 0):
                    return method
            return None

        method = self.probe.wait_for(next_call)
        if method.startswith("v4/"):
            return self.serve(method)
        count = self.served.get(method, 0) + 1
        call = self.probe.calls(method)[count - 1]
        self.served[method] = count
        call.reply_to.tell(call.reply(None, {"code": -32601, "message": "Method not found"}))
        return call

    def live(self) -> Engine:
        create = self.serve("v4/command")
        assert create.params["type"] == "createSession" and create.params["payload"] == {"workspaceId": WORKSPACE}
        while True:
            call = self.serve_any("session/resume", "v4/conversation/subscribe")
            if call.method == "v4/conversation/subscribe" and call.params["topic"].startswith("conversation/"):
                break
        assert self.engine is not None
        return self.engine

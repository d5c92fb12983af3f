"""A v4 Session's subscriptions ended (issue 31): what the engine needs to let the session go.

The engine keeps publishing to a subscription until it is ended, and keeps a session resident
while it has conversation subscribers (``v4-gateway.ts`` ``hasConversationSubscribers``). So on
``session/close``, when the Session leaves memory, and at teardown the Session ends each topic it
subscribed (``v4/conversation/unsubscribe``), then closes its connection (``v4/connection/flow
{state: "closed"}``, which also clears the engine's flush timers and staged uploads for it).
Answers are not waited for: nothing the Session does next depends on them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from zcode_acp.protocol.v4 import topic as v4topic

FLOW = "v4/connection/flow"
UNSUBSCRIBE = "v4/conversation/unsubscribe"

Send = Callable[[str, dict[str, Any]], None]


def closing_calls(connection_id: str, subscriptions: Iterable[tuple[str, str | None]]) -> list[tuple[str, dict[str, Any]]]:
    """``(method, params)`` for each subscribed ``(topic, subscriptionId)``, then the connection's close."""
    calls = [(UNSUBSCRIBE, v4topic.unsubscribe_params(topic, connection_id, subscription_id))
             for topic, subscription_id in subscriptions if subscription_id is not None]
    return [*calls, (FLOW, {"connectionId": connection_id, "state": "closed"})]

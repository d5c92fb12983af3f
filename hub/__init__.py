"""The machine-level hub: token auth, bridge discovery and a WebSocket proxy.

One per machine, the only entry a tunnel should expose. It holds no ACP
semantics and no session state (docs/hub.md).
"""

"""Network plumbing shared by the bridge's remote transport and the hub: an HTTP/1.1 server on
gevent sockets, the WebSocket layer over it, the token gate, HMAC proofs, the Host/Origin policy,
and the client that registers a bridge with its hub (docs/remote.md, docs/security.md). It knows
nothing of actors: ``actors/transport/remote.py`` and ``hub/`` build on it."""

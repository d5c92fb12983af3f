"""The engine's v4 data plane, pure: wire frames, reassembly, topics, commands (docs/v4.md).

Groundwork: the bridge does not use this package yet. Nothing here does I/O, reads a
clock or touches gevent or pykka; time, ids and bytes come in as arguments.
"""

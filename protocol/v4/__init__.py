"""The engine's v4 data plane, pure: wire frames, reassembly, topics, commands (docs/v4.md).

The bridge's v4 path (``ZCODE_ACP_ENGINE_API=v4``, ``actors/session/v4/``) is built on it.
Nothing here does I/O, reads a clock or touches gevent or pykka; time, ids and bytes come
in as arguments.
"""

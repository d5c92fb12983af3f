"""Pure protocol logic for the ZCode ACP bridge.

Nothing in this package performs I/O, reads clocks, or imports gevent or
pykka: every function takes plain values (dicts, strings, bytes) and returns
plain values. That keeps the translation rules testable with golden JSON and
lets the actor runtime in ``actors/`` stay a thin layer of ownership and
message passing on top.
"""

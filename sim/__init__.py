"""A simulated ZCode app-server (``zcode-sim app-server --stdio``).

It speaks docs/backend-protocol.md over stdio, quirks included, so the bridge can be
run and tested end to end where no real ZCode CLI exists. Behaviour is chosen
by scenario: see ``sim/scenarios.py`` and docs/simulator.md.
"""

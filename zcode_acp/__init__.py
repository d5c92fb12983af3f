"""zcode-acp: an Agent Client Protocol bridge for the ZCode coding agent.

The installed namespace: ``zcode_acp.protocol`` (pure translation rules),
``zcode_acp.actors`` (the actor runtime, transports and command line) and
``zcode_acp.sim`` (the simulated ZCode backend). See docs/architecture.md.
"""

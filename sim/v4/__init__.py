"""The engine's v4 data plane as the simulator plays it (issue 22).

Written from the engine's source, not from the bridge's ``protocol/v4`` package, so the
two can disagree and the tests can catch it. The seam the cli016 server uses is
``plane.DataPlane`` (docs/simulator.md, "v4 data plane").
"""

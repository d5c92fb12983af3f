"""zcode-acp: an Agent Client Protocol bridge for the ZCode coding agent.

The installed namespace: ``zcode_acp.protocol`` (pure translation rules),
``zcode_acp.actors`` (the actor runtime, transports and command line) and
``zcode_acp.sim`` (the simulated ZCode backend). See docs/architecture.md.

The distribution is ``zcode-acp-bridge`` (the PyPI name ``zcode-acp`` belongs
to an unrelated project); the command stays ``zcode-acp``. ``version()`` and
``__version__`` read the installed distribution's metadata, lazily: importing
this package must stay cheap (every entry point does, see docs/decisions.md).
"""

from __future__ import annotations

DIST_NAME = "zcode-acp-bridge"
SOURCE_VERSION = "0.0.0+source"  # running from a tree that was never installed


def version() -> str:
    """The installed distribution's version (``SOURCE_VERSION`` when not installed)."""
    from importlib.metadata import PackageNotFoundError, version as dist_version

    try:
        return dist_version(DIST_NAME)
    except PackageNotFoundError:
        return SOURCE_VERSION


def __getattr__(name: str) -> str:
    if name == "__version__":
        return version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

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

from functools import cache

DIST_NAME = "zcode-acp-bridge"
SOURCE_VERSION = "0.0.0+source"  # running from a tree that was never installed


def _version_from_path() -> str | None:
    """The ``Version:`` of the first ``zcode_acp_bridge`` metadata folder on ``sys.path`` — where
    ``importlib.metadata`` would find it — without importing that (~15 ms, the bridge answers
    ``initialize`` with the version: docs/performance.md, "Start-up"); None when not found here."""
    import os
    import re
    import sys

    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except NotADirectoryError:  # an archive: importlib.metadata looks into those
            return None
        except OSError:  # a path entry that does not exist
            continue
        for name in names:
            stem, _, kind = name.rpartition(".")
            if kind not in ("dist-info", "egg-info") or \
                    re.sub(r"[-_.]+", "_", stem.partition("-")[0]).lower() != "zcode_acp_bridge":
                continue
            try:
                with open(os.path.join(entry or ".", name, "METADATA" if kind == "dist-info" else "PKG-INFO"),
                          encoding="utf-8") as metadata:
                    for line in metadata:
                        if not line.strip():
                            break  # the end of the headers
                        if line.startswith("Version:"):
                            return line[len("Version:"):].strip()
            except OSError:
                pass
            return None
    return None


@cache  # asked at start-up by the Supervisor and by remote access: one look is enough
def version() -> str:
    """The installed distribution's version (``SOURCE_VERSION`` when not installed)."""
    found = _version_from_path()
    if found:
        return found
    from importlib.metadata import PackageNotFoundError, version as dist_version

    try:
        return dist_version(DIST_NAME)
    except PackageNotFoundError:
        return SOURCE_VERSION


def __getattr__(name: str) -> str:
    if name == "__version__":
        return version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

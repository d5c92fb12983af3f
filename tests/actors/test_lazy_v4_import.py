"""A legacy bridge never imports the v4 path: its runtime pays nothing for it at the first session/new.

The v4 path (``actors/session/v4/*.py`` and ``protocol/v4``'s data plane) is imported only by a
session or a sessions-index watch that uses it (docs/performance.md, "start-up"). A fresh
interpreter is the only honest place to look: the test process has imported everything already.
"""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
import zcode_acp.cli.runtime  # what the bridge imports to answer its first request
loaded = sorted(name for name in sys.modules
                if name.startswith("zcode_acp.actors.session.v4") and name != "zcode_acp.actors.session.v4.tasks"
                or name.startswith("zcode_acp.protocol.v4."))
print("\\n".join(loaded))
"""


def test_the_runtime_imports_no_v4_path_module() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == []

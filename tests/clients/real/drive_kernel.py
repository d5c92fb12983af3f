"""agent-client-kernel 0.2.0 (PyPI, a Jupyter kernel) against the bridge: docs/clients.md, not part of the suite.

Run from a project folder with the kernel's own Python, after installing its kernel spec as ``acp``
(docs/clients.md): ``python drive_kernel.py DIALECT``. Each cell is a prompt to the agent.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from jupyter_client.manager import start_new_kernel  # type: ignore[import-not-found]

HERE = Path(__file__).resolve().parent
CELLS = ["hello from a notebook", "#sim permission", "and a second turn in the same session"]


def main(dialect: str) -> None:
    os.environ["ACP_AGENT_COMMAND"] = str(HERE / f"agent-{dialect}.sh")
    manager, client = start_new_kernel(kernel_name="acp", cwd=os.getcwd())
    for code in CELLS:
        out: list[str] = []

        def hook(message: dict, out: list[str] = out) -> None:
            content = message["content"]
            if "text" in content:
                out.append(content["text"])
            elif "data" in content:
                out.append(str(content["data"].get("text/plain", content["data"])))
            elif "evalue" in content:
                out.append("ERROR " + content["evalue"])

        reply = client.execute_interactive(code, timeout=60, output_hook=hook)
        print(f"{code!r}: {reply['content']['status']}: {''.join(out)[:250]!r}", flush=True)
    client.stop_channels()
    manager.shutdown_kernel(now=True)


if __name__ == "__main__":
    main(sys.argv[1])

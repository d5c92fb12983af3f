"""Check the frames a bridge wrote to an editor, as a trace recorded them, against the ACP v1 schemas.

``python -m tests.clients.check_trace TRACE...`` (docs/clients.md): for each trace (``zcode-acp
--trace``, docs/traces.md), every ``bridge>client`` frame on stdio is held to the stable and
unstable v1 schemas that the TypeScript SDK 2.4.0 ships (``tests/acp_schema.py``); a response is
held to the response of the request it answers, found from the ``client>bridge`` frames. It prints
one line per trace (frames checked, frames that fail) and each finding, and exits 1 on any.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.acp_schema import frame_findings


@dataclass
class TraceCheck:
    path: Path
    frames: int = 0
    findings: list[str] = field(default_factory=list)


def check_trace(path: Path) -> TraceCheck:
    result = TraceCheck(path)
    # The client's requests by id, so a response is checked against its own method's schema.
    methods_by_id: dict[Any, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        frame = record.get("frame")
        if not isinstance(frame, dict) or record.get("conn") != "stdio":
            continue
        if record.get("dir") == "client>bridge":
            if "method" in frame and "id" in frame:
                methods_by_id[frame["id"]] = frame["method"]
            continue
        if record.get("dir") != "bridge>client":
            continue
        result.frames += 1
        for finding in frame_findings(frame, methods_by_id):
            result.findings.append(f"{json.dumps(frame)[:300]}\n    {finding}")
    return result


def main(argv: list[str]) -> int:
    failed = False
    for name in argv:
        result = check_trace(Path(name))
        failed = failed or bool(result.findings)
        print(f"{name}: {result.frames} frames, {len(result.findings)} findings")
        for finding in result.findings:
            print("  " + finding)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

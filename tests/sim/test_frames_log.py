"""The simulator's frame recording (sim/frames_log.py), which the engine-schema check reads."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.engine_schema import ENGINE_TO_HOST, HOST_TO_ENGINE, read_recording
from tests.sim.peer import SimPeer


def test_every_frame_read_and_written_is_recorded_in_order_with_its_direction(
        start: Callable[..., SimPeer], tmp_path: Path) -> None:
    path = tmp_path / "frames.jsonl"
    sim = start("classic", env={"ZCODE_SIM_FRAMES": str(path)})
    created = sim.result("session/create", {"workspace": sim.workspace(), "mode": "yolo"})
    sim.send({"id": 77, "method": "session/close", "params": {"sessionId": created["session"]["sessionId"]}})
    sim.answer_to(77)
    sim.send({"not": "a frame the simulator knows"})
    sim.proc.stdin.write(b"this is not json\n")  # type: ignore[union-attr]
    sim.proc.stdin.flush()  # type: ignore[union-attr]
    sim.close()

    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert {record["pid"] for record in records} == {sim.proc.pid}
    assert [record["n"] for record in records] == list(range(len(records)))
    seen = [(record["dir"], json.loads(record["raw"]) if "raw" in record and record["raw"].startswith("{")
             else record.get("frame", record.get("raw"))) for record in records]
    # The simulator's own stdout, frame by frame, is exactly what it recorded as engine->host.
    assert [frame for direction, frame in seen if direction == ENGINE_TO_HOST] == sim.frames
    sent = [frame for direction, frame in seen if direction == HOST_TO_ENGINE]
    assert sent[0]["method"] == "session/create" and sent[1]["result"]  # the answer to the preferences request
    assert sent[-3:] == [{"id": 77, "method": "session/close", "params": {"sessionId": created["session"]["sessionId"]}},
                         {"not": "a frame the simulator knows"}, "this is not json"]
    # A line the bridge wrote is kept byte for byte, not re-encoded.
    assert records[0]["raw"] == json.dumps({"id": 1, "method": "session/create",
                                            "params": {"workspace": sim.workspace(), "mode": "yolo"}})
    assert list(read_recording(path)) == [sim.proc.pid]


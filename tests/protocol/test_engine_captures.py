"""Golden tests: frames an installed ZCode 3.14.4 really sent, through the bridge's own parsing.

The captures (tests/fixtures/engine-captures/, README there) hold the v4 surface, ``workspace/*``
and ``runtime/capabilities``. The bridge reads two of those kinds today: every frame's kind
(``protocol/framing.py`` and ``protocol/jsonrpc.py``, on the line exactly as the engine wrote it)
and the ack of a ``v4/command`` it sent (``actors/session/controls.py``, the steer). The
schemas check the same frames in tests/protocol/test_engine_schemas.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from zcode_acp.actors.session.controls import Controls
from zcode_acp.actors.session.settings import Settings
from zcode_acp.protocol import framing, jsonrpc
from zcode_acp.protocol.session_config import SessionSettings

CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "engine-captures"


def _entries() -> list[dict[str, Any]]:
    entries = []
    for path in sorted(CAPTURES.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if not entry.get("meta") and "_fixtureNote" not in entry:
                entries.append(entry)
    return entries


def _engine_line(entry: dict[str, Any]) -> bytes:
    """The engine's frame as one NDJSON line (the fixtures record no ids: one is given per answer)."""
    if entry["kind"] == "notification":
        frame = {"method": entry["method"], "params": entry["params"]}
    else:
        frame = {"id": f"capture-{entry['seqInFixture']}", "result": entry["result"]}
    return json.dumps(frame, ensure_ascii=False).encode()


ENGINE_FRAMES = [entry for entry in _entries() if entry["dir"] == "engine->host"]


def test_every_captured_engine_frame_is_read_and_classified_as_what_it_is() -> None:
    lines = [_engine_line(entry) for entry in ENGINE_FRAMES]
    frames, skipped, _ = framing.decode_backend_lines(lines)
    assert skipped == 0 and len(frames) == len(ENGINE_FRAMES) > 40
    pending = {frame["id"] for frame in frames if "id" in frame}
    kinds = [jsonrpc.classify_backend(frame, pending.__contains__) for frame in frames]
    assert [kind.value if kind else None for kind in kinds] == [entry["kind"] for entry in ENGINE_FRAMES]
    # The v4 frames are notifications without a sessionId: the Backend routes none of them to a Session.
    v4 = [frame for frame in frames if frame.get("method") == "v4/conversation/frame"]
    assert len(v4) == 8 and all("sessionId" not in frame["params"] for frame in v4)


class SteerPort:
    """What Controls needs to steer a running turn on the 0.16 engine (a v4 sendText)."""

    compact_timeout = 1.0
    speaks_v4 = True
    backend_session_id = "b-1"  # the command's session (the request adds it as well)

    def __init__(self) -> None:
        self.settings = Settings(SessionSettings(mode="yolo"))
        self.calls: list[tuple[str, dict[str, Any], Any, Any]] = []

    def turn_running(self) -> bool:
        return True

    def steer_delivery(self, command_id: str) -> str | None:
        return None

    def when_live(self, action: Any, on_error: Any) -> None:
        action()

    def request(self, method: str, params: dict[str, Any], on_result: Any, on_error: Any,
                timeout: float | None = None) -> None:
        self.calls.append((method, params, on_result, on_error))


REFUSING_ACKS = [entry["result"] for entry in ENGINE_FRAMES
                 if entry["method"] == "v4/command" and entry["result"]["status"] != "accepted"]


def test_the_captures_hold_a_refusing_ack_of_each_kind() -> None:
    assert {ack["status"] for ack in REFUSING_ACKS} == {"rejected", "failed", "stale", "noop"}


@pytest.mark.parametrize("ack", REFUSING_ACKS, ids=lambda ack: f"{ack['status']}-{ack['reasonCode']}")
def test_a_captured_refusing_ack_fails_the_steer_with_the_engines_reason(ack: dict[str, Any]) -> None:
    port = SteerPort()
    results: list[Any] = []
    errors: list[Any] = []
    Controls(port).steer("look at the tests too", results.append, errors.append)
    method, params, on_result, _ = port.calls[0]
    assert method == "v4/command" and params["type"] == "sendText"
    on_result(dict(ack, commandId=params["commandId"]))
    assert results == [] and len(errors) == 1
    assert errors[0]["message"] == f"the engine did not take the text ({ack['status']}: {ack['reasonCode']})"

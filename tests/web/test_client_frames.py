"""The page-frame validator rejects what the schema forbids (so its passes mean something)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tests.web.client_frames import assert_valid_page_frame

PROMPT = {"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
          "params": {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}}


def test_valid_frames_pass() -> None:
    assert_valid_page_frame(PROMPT, {})
    assert_valid_page_frame({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}, {})
    assert_valid_page_frame({"jsonrpc": "2.0", "id": 7, "result": {"outcome": {"outcome": "selected", "optionId": "a"}}},
                            {7: "session/request_permission"})
    assert_valid_page_frame({"jsonrpc": "2.0", "id": 8, "result": {"action": "accept", "content": {"n": 2, "l": ["x"]}}},
                            {8: "elicitation/create"})
    assert_valid_page_frame({"jsonrpc": "2.0", "id": 9, "error": {"code": -32800, "message": "request cancelled"}},
                            {9: "session/request_permission"})


@pytest.mark.parametrize("frame, requests", [
    ({**PROMPT, "params": {"prompt": [{"type": "text", "text": "hi"}]}}, {}),  # no sessionId
    ({**PROMPT, "method": "session/launch_missiles"}, {}),  # not a client method
    ({"jsonrpc": "2.0", "id": 7, "result": {"outcome": {"outcome": "maybe"}}}, {7: "session/request_permission"}),
    ({"jsonrpc": "2.0", "id": 8, "result": {"action": "accept", "content": {"n": {"deep": 1}}}}, {8: "elicitation/create"}),
    ({"jsonrpc": "2.0", "id": 9, "result": {"outcome": {"outcome": "cancelled"}}}, {}),  # never asked
    ({"jsonrpc": "2.0", "method": "session/cancel", "params": {}}, {}),
])
def test_invalid_frames_fail(frame: dict, requests: dict) -> None:
    with pytest.raises((AssertionError, ValidationError)):
        assert_valid_page_frame(frame, requests)

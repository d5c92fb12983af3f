"""The vendored ACP v1 schemas (schemas/acp-v1/) and the frame check built on them."""

from __future__ import annotations

import hashlib
import re

import pytest

from tests.acp_schema import SCHEMAS, frame_findings, schemas
from tests.schema import assert_valid_frame


def test_the_vendored_files_are_the_ones_the_readme_names() -> None:
    readme = (SCHEMAS / "README.md").read_text(encoding="utf-8")
    assert "2.4.0" in readme and "Apache" in readme
    for name, digest in re.findall(r"\| `([^`]+\.json)` \| `([0-9a-f]{64})` \|", readme):
        assert hashlib.sha256((SCHEMAS / name).read_bytes()).hexdigest() == digest, name
    assert (SCHEMAS / "LICENSE").read_text(encoding="utf-8").lstrip().startswith("Apache License")


def chunk(update: dict) -> dict:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}}


def test_a_valid_frame_passes_both_schemas() -> None:
    assert frame_findings(chunk({"sessionUpdate": "agent_message_chunk",
                                 "content": {"type": "text", "text": "hi"}})) == []
    assert [schema.name for schema in schemas()] == ["stable", "unstable"]


@pytest.mark.parametrize("frame, methods", [
    # a content block the schema does not know
    (chunk({"sessionUpdate": "agent_message_chunk", "content": {"type": "txt"}}), None),
    # a notice without its required title (stable since SDK 2.4.0; the Python SDK has no model)
    (chunk({"sessionUpdate": "notice", "severity": "info"}), None),
    # a stop reason the schema does not define
    ({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "finished"}}, {3: "session/prompt"}),
    # a session/list row without its cwd
    ({"jsonrpc": "2.0", "id": 4, "result": {"sessions": [{"sessionId": "a"}]}}, {4: "session/list"}),
])
def test_an_invalid_frame_is_found(frame: dict, methods: dict | None) -> None:
    assert frame_findings(frame, methods)
    with pytest.raises(AssertionError):
        assert_valid_frame(frame, methods)


def test_an_unstable_only_update_is_held_to_the_unstable_schema() -> None:
    good = chunk({"sessionUpdate": "plan_removed", "planId": "p1"})
    bad = chunk({"sessionUpdate": "plan_removed", "planId": 7})
    assert "plan_removed" not in schemas()[0].update_kinds
    assert frame_findings(good) == []
    assert frame_findings(bad) and all(f.startswith("unstable") for f in frame_findings(bad))

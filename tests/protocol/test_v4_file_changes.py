"""A turn's file changes: the request pinned to what the client saw, the answer with each file's diff."""

from __future__ import annotations

import pytest

from zcode_acp.protocol.v4 import file_changes
from zcode_acp.protocol.v4.commands import Base, RowTarget

# The shape of v4ConversationFileChangesResultSchema (zcode-protocol-v4/transport.ts).
ANSWER = {"files": 1, "additions": 2, "deletions": 1, "state": "active", "items": [
    {"path": "src/a.py", "additions": 2, "deletions": 1, "writeCount": 2, "toolNames": ["Edit", "Write"],
     "patches": [{"oldStart": 3, "oldLines": 2, "newStart": 3, "newLines": 3,
                  "lines": [" keep", "-old", "+new", "+more"]}]}]}


def test_the_request_names_the_turn_row_and_the_revision_and_epoch_seen():
    params = file_changes.request_params("sess_1", RowTarget(7, "ent_7"), Base(12, "epoch-a"))
    assert params == {"sessionId": "sess_1", "target": {"rowId": 7, "entityId": "ent_7"},
                      "baseRevision": 12, "baseLogEpoch": "epoch-a"}


def test_no_epoch_no_request():
    with pytest.raises(ValueError):
        file_changes.request_params("sess_1", RowTarget(7, "ent_7"), Base(0))


def test_each_file_gets_its_hunks_as_one_unified_diff():
    out = file_changes.for_client(ANSWER, 7)
    assert (out["rowId"], out["files"], out["additions"], out["deletions"], out["state"]) == (7, 1, 2, 1, "active")
    assert out["items"][0]["diff"] == "--- a/src/a.py\n+++ b/src/a.py\n@@ -3,2 +3,3 @@\n keep\n-old\n+new\n+more\n"
    assert out["items"][0]["toolNames"] == ["Edit", "Write"]


def test_what_is_not_an_item_is_left_out_and_an_empty_ledger_is_empty():
    out = file_changes.for_client({"files": 0, "additions": 0, "deletions": 0, "items": [None, {"x": 1}]}, 3)
    assert out["items"] == [] and out["files"] == 0
    assert file_changes.unified_diff("a", []) == ""

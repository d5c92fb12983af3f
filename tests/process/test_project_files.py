"""The phone's file browser through the real bridge (actors/project_files.py): a raw client lists the
session's folder, reads a file, and is refused a path out of it, each request answered once."""

from __future__ import annotations

import pytest

from tests.process.raw import RawBridge


@pytest.mark.dialects("classic")
def test_a_client_browses_the_sessions_folder_and_nothing_else(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("print('hi')\n")
    (tmp_path / "secret.txt").write_text("SECRET")
    peer = RawBridge(tmp_path, {"ZCODE_ACP_LANG": "zh-CN"})
    try:
        peer.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
        peer.until(lambda f: f.get("id") == 1)
        peer.send({"jsonrpc": "2.0", "id": 2, "method": "session/new",
                   "params": {"cwd": str(project), "mcpServers": []}})
        session = peer.until(lambda f: f.get("id") == 2)["result"]["sessionId"]
        requests = {3: ("_zcode/files/list", {}), 4: ("_zcode/files/read", {"path": "app.py"}),
                    5: ("_zcode/files/read", {"path": "../secret.txt"}), 6: ("_zcode/files/changes", {}),
                    7: ("_zcode/files/list", {"path": "/proc"})}
        for request_id, (method, params) in requests.items():
            peer.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": {"sessionId": session, **params}})
        answers: dict = {}
        peer.until(lambda f: answers.setdefault(f["id"], f) is not None and len(answers) == 5
                   if f.get("id") in requests else False, timeout=20)
        listed = answers[3]["result"]["entries"]
        assert listed == [{"name": "app.py", "kind": "file", "size": 12}]
        assert answers[4]["result"]["text"] == "print('hi')\n"
        assert answers[5]["error"]["code"] == -32602 and "不在会话的文件夹" in answers[5]["error"]["message"]
        assert "SECRET" not in str(answers)
        assert answers[6]["result"]["git"] in (True, False)
        assert answers[7]["error"]["code"] == -32602
        peer.send({"jsonrpc": "2.0", "id": 8, "method": "_zcode/files/list", "params": {"sessionId": "nope"}})
        assert peer.until(lambda f: f.get("id") == 8)["error"]["code"] == -32002
    finally:
        peer.close()

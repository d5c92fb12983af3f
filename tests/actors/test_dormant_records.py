"""What the Supervisor keeps of Sessions not in memory is kept once where they share it
(actors/dormant_records.py)."""

from zcode_acp.actors.dormant_records import DormantRecords
from zcode_acp.actors.messages import Dormant
from zcode_acp.protocol.session_config import SessionSettings


def fresh(text: str) -> str:
    """An equal string that is another object, as each decoded request gives."""
    return "".join(list(text))


def test_equal_settings_folders_and_empty_server_lists_are_kept_once():
    records = DormantRecords()
    for index in range(3):
        records[f"s{index}"] = Dormant(fresh("/work/project"), [], f"b{index}", SessionSettings(mode="build"), True)
    kept = list(records.values())
    assert kept[0].settings is kept[1].settings is kept[2].settings
    assert kept[0].cwd is kept[1].cwd is kept[2].cwd
    assert kept[0].mcp_servers is kept[1].mcp_servers == ()
    assert [record.backend_session_id for record in kept] == ["b0", "b1", "b2"]


def test_what_differs_stays_apart_and_comes_back_as_it_was():
    records = DormantRecords()
    servers = [{"name": "files", "command": "mcp-files", "args": [], "env": []}]
    records["a"] = Dormant("/a", servers, None, SessionSettings(mode="build"), False)
    records["b"] = Dormant("/b", [], "b", SessionSettings(mode="plan"), True, updated_at=1700000000000, title="Fix it")
    a, b = records["a"], records["b"]
    assert a.settings == SessionSettings(mode="build") and b.settings == SessionSettings(mode="plan")
    assert list(a.mcp_servers) == servers and a.root_known is False and a.backend_session_id is None
    assert (b.cwd, b.backend_session_id, b.root_known) == ("/b", "b", True)
    assert (b.updated_at, b.title, a.updated_at, a.title) == (1700000000000, "Fix it", 0, "")


def test_a_backend_id_equal_to_the_session_id_is_the_key_itself():
    records = DormantRecords()
    session_id = fresh("sess_1234")
    records[session_id] = Dormant("/w", [], fresh("sess_1234"), SessionSettings(), True)
    assert records[session_id].backend_session_id is session_id

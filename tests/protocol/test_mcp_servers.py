"""ACP mcpServers → the engine's strict entries (engine-today row 4)."""

import pytest

from zcode_acp.protocol.errors import RpcError
from zcode_acp.protocol.mcp_servers import normalize_mcp_servers
from zcode_acp.sim.mcp_schema import check_mcp_servers
from zcode_acp.sim.model import SimError

# What editors really send (Zed: env as a list of pairs and _meta; others: type "stdio", env as a map).
ZED = {"name": "filesystem", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/w"],
       "env": [{"name": "DEBUG", "value": "1"}], "_meta": {"zed": {"source": "settings"}}}
TYPED_STDIO = {"type": "stdio", "name": "git", "command": "uvx", "args": ["mcp-server-git"],
               "env": {"GIT_DIR": "/w/.git", "PORT": 8080}}
BARE = {"name": "time", "command": "mcp-time"}
HTTP = {"type": "http", "name": "github", "url": "https://api.example.test/mcp",
        "headers": {"Authorization": "Bearer t"}, "_meta": {}, "timeout": 30}
SSE = {"type": "sse", "name": "docs", "url": "https://docs.example.test/sse", "headers": []}


def test_editor_entries_become_the_strict_shapes():
    out = normalize_mcp_servers([ZED, TYPED_STDIO, BARE, HTTP, SSE])
    assert out == [
        {"name": "filesystem", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/w"],
         "env": [{"name": "DEBUG", "value": "1"}]},
        {"name": "git", "command": "uvx", "args": ["mcp-server-git"],
         "env": [{"name": "GIT_DIR", "value": "/w/.git"}, {"name": "PORT", "value": "8080"}]},
        {"name": "time", "command": "mcp-time", "args": [], "env": []},
        {"name": "github", "type": "http", "url": "https://api.example.test/mcp",
         "headers": [{"name": "Authorization", "value": "Bearer t"}]},
        {"name": "docs", "type": "sse", "url": "https://docs.example.test/sse", "headers": []},
    ]
    check_mcp_servers(out)  # the simulator's strict validator (the 0.16 engine) takes them all
    with pytest.raises(SimError):
        check_mcp_servers([ZED])  # and would have refused what the editor sent


@pytest.mark.parametrize(("entry", "named", "why"), [
    ({"command": "x"}, "mcpServers[1]", "has no name"),
    ({"name": "a", "args": []}, "mcpServers[1] ('a')", "without a command"),
    ({"name": "w", "type": "ws", "url": "ws://x"}, "mcpServers[1] ('w')", "transport 'ws'"),
    ({"name": "h", "type": "http"}, "mcpServers[1] ('h')", "without a url"),
    ({"name": "e", "command": "x", "env": {"K": {"nested": 1}}}, "mcpServers[1] ('e')", "env entry 'K'"),
    ({"name": "g", "command": "x", "args": "-v"}, "mcpServers[1] ('g')", "args must be a list"),
    ("npx server", "mcpServers[1]", "must be an object"),
])
def test_an_entry_that_cannot_be_expressed_is_refused_by_name(entry, named, why):
    with pytest.raises(RpcError) as caught:
        normalize_mcp_servers([BARE, entry])
    assert caught.value.code == -32602
    assert named in caught.value.message and why in caught.value.message


def test_absent_or_wrong_container():
    assert normalize_mcp_servers(None) == []
    with pytest.raises(RpcError):
        normalize_mcp_servers({"name": "x"})

"""Issue 9, bad input (items 4, 5, 13, 14): every bad frame gets the right code at once.

The frames are written raw (``\\ud800`` escapes, floats, huge numbers), so the
bridge sees exactly the bytes an adversarial client would send.
"""


import pytest

from tests.process.reliability import running

INIT = b'{"jsonrpc":"2.0","id":"ok-%d","method":"initialize","params":{"protocolVersion":1}}\n'


def rss_mib(pid: int, field: str = "VmRSS") -> float:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field + ":")) / 1024


def five_valid() -> bytes:
    return b"".join(INIT % index for index in range(5))


def answered_ids(b, count: int) -> list:
    return [b.until(lambda f: "method" not in f)["id"] for _ in range(count)]


# -- item 4 -------------------------------------------------------------------------------------------


def test_a_lone_surrogate_in_cwd_is_refused_naming_the_field_and_later_sessions_work(tmp_path):
    with running(tmp_path) as b:
        b.raw.write(b'{"jsonrpc":"2.0","id":"bad","method":"session/new",'
                    b'"params":{"cwd":"/tmp/\\ud800","mcpServers":[]}}\n')
        error = b.answer("bad")["error"]
        assert error["code"] == -32602 and "cwd" in error["message"], error
        assert b.new_session(request_id="good-1") and b.new_session(request_id="good-2")


# -- item 5 -------------------------------------------------------------------------------------------


def test_an_unhashable_cancel_target_drops_none_of_the_frames_after_it(tmp_path):
    with running(tmp_path) as b:
        b.raw.write(b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":{}}}\n' + five_valid())
        assert sorted(answered_ids(b, 5)) == [f"ok-{i}" for i in range(5)]


def test_a_cancel_naming_an_unhashable_session_is_ignored_quietly(tmp_path):
    with running(tmp_path) as b:
        sid = b.new_session()
        b.raw.write(b"".join(b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%s}}\n' % target
                             for target in (b"{}", b"[1]", b"7", b"null")) + five_valid())
        assert sorted(answered_ids(b, 5)) == [f"ok-{i}" for i in range(5)]
        b.prompt("p", sid, "#sim stream count=2")  # the session is untouched
        assert b.answer("p")["result"]["stopReason"] == "end_turn"
        assert "Traceback" not in b.log(), b.log()[-2000:]


def test_a_lone_surrogate_in_an_id_is_refused_and_drops_none_of_the_frames_after_it(tmp_path):
    with running(tmp_path) as b:
        b.raw.write(b'{"jsonrpc":"2.0","id":"\\ud800"}\n' + five_valid())
        ids = answered_ids(b, 6)
        assert ids.count(None) == 1 and sorted(i for i in ids if i) == [f"ok-{i}" for i in range(5)]
        refused = next(f for f in b.frames if f.get("id") is None)
        assert refused["error"]["code"] == -32600


# -- item 13 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("line", [b"{}", b'{"jsonrpc":"2.0"}', b'{"jsonrpc":"2.0","id":null}'])
def test_an_object_that_is_no_frame_gets_invalid_request(tmp_path, line):
    with running(tmp_path) as b:
        b.raw.write(line + b"\n")
        error = b.answer(None)["error"]
        assert error["code"] == -32600


def test_a_float_id_is_echoed_unchanged(tmp_path):
    with running(tmp_path) as b:
        b.raw.write(b'{"jsonrpc":"2.0","id":7.0,"method":"initialize","params":{"protocolVersion":1}}\n')
        answer = b.answer(7.0)
        assert "result" in answer and isinstance(answer["id"], float)


def test_cancel_request_sent_with_an_id_is_answered(tmp_path):
    with running(tmp_path) as b:
        b.send({"jsonrpc": "2.0", "id": "c", "method": "$/cancel_request", "params": {"requestId": "x"}})
        assert b.answer("c")["error"]["code"] == -32600


def test_deeply_nested_capabilities_are_invalid_params_not_an_internal_error(tmp_path):
    deep = b'{"a":' * 990 + b"{}" + b"}" * 990
    with running(tmp_path, initialize=False) as b:
        b.raw.write(b'{"jsonrpc":"2.0","id":"deep","method":"initialize",'
                    b'"params":{"protocolVersion":1,"clientCapabilities":%s}}\n' % deep)
        error = b.answer("deep")["error"]
        assert error["code"] == -32602 and "clientCapabilities" in error["message"], error
        b.initialize()  # and the bridge is fine


def test_a_400_digit_integer_stays_an_integer(tmp_path):
    # (ujson >= 5.10 keeps big integers exact; this guards against a parser that would not.)
    with running(tmp_path) as b:
        server = '{"name":"x","command":"/bin/true","args":[],"env":[],"_meta":{"n":%s}}' % ("9" * 400)
        b.raw.write(b'{"jsonrpc":"2.0","id":"new","method":"session/new","params":{"cwd":"/tmp","mcpServers":[%s]}}\n'
                    % server.encode())
        sid = b.answer("new")["result"]["sessionId"]
        b.prompt("p", sid, "#sim stream count=1")
        assert b.answer("p")["result"]["stopReason"] == "end_turn"
        [(_, mcp_servers)] = b.creates()
        # The engine's strict MCP schema has no _meta: the entry goes without it (docs/protocol-mapping.md).
        assert mcp_servers == [{"name": "x", "command": "/bin/true", "args": [], "env": []}]


def test_a_number_beyond_double_range_is_refused_at_once_not_a_timeout_later(tmp_path):
    with running(tmp_path) as b:
        b.raw.write(b'{"jsonrpc":"2.0","id":"new","method":"session/new","params":{"cwd":"/tmp","mcpServers":'
                    b'[{"name":"x","command":"/bin/true","args":[],"env":[],"_meta":{"n":%s.5}}]}}\n' % (b"9" * 400))
        error = b.answer("new", timeout=2)["error"]  # its id was readable: the answer names it (issue 29)
        assert error["code"] == -32700 and "range" in error["message"], error


def test_a_lone_surrogate_in_prompt_text_is_refused_at_once(tmp_path):
    with running(tmp_path) as b:
        sid = b.new_session()
        b.raw.write(b'{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"sessionId":"%s",'
                    b'"prompt":[{"type":"text","text":"hello \\udc00 world"}]}}\n' % sid.encode())
        error = b.answer("p", timeout=2)["error"]
        assert error["code"] == -32602 and "prompt[0].text" in error["message"], error


# -- item 14 ------------------------------------------------------------------------------------------


def test_a_50_mb_frame_of_empty_objects_costs_bounded_memory(tmp_path):
    with running(tmp_path) as b:
        pid = b.raw.proc.pid
        baseline = rss_mib(pid)
        count = 50_000_000 // 3
        b.raw.write(b"[" + b"{}," * (count - 1) + b"{}]\n")
        error = b.answer(None, timeout=30)["error"]
        peak = rss_mib(pid, "VmHWM")
        assert peak - baseline < 250, f"peak {peak:.0f} MiB from {baseline:.0f} MiB"
        assert error["code"] == -32600 and "too many" in error["message"], error
        b.initialize()
        assert rss_mib(pid) - baseline < 60, f"kept {rss_mib(pid) - baseline:.0f} MiB"

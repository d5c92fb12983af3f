"""The stdio path answers a waiting ``initialize`` before the runtime is imported
(cli/early_answer.py), and every request is still answered exactly once, in order.

The client here writes its requests before the bridge even starts (into the pipe that becomes
its stdin), so the early path is taken every time, and its second request is already there.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from typing import Any

import pytest

from zcode_acp.actors.transport.stdio import StdioTransport
from zcode_acp.protocol import framing
from zcode_acp.protocol.handshake import early_initialize_answer
from tests.cli.helpers import INITIALIZE, clean_env

EARLY = "initialize was answered before the runtime was imported"


def frame(request_id: Any, method: str, params: dict[str, Any]) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n").encode()


class Prefilled:
    """A bridge whose stdin already holds ``written`` when it starts; stdout read line by line, with timeouts."""

    def __init__(self, written: bytes, env: dict[str, str], *options: str) -> None:
        read_end, self.stdin = os.pipe()
        os.write(self.stdin, written)  # small: the pipe holds it whole
        self.proc = subprocess.Popen([sys.executable, "-m", "zcode_acp", "--log-level", "debug", *options],
                                     env=env, stdin=read_end, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        os.close(read_end)
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr = b""
        self.stderr_read = threading.Thread(target=self._read_err, daemon=True)
        threading.Thread(target=self._read, daemon=True).start()
        self.stderr_read.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _read_err(self) -> None:
        self.stderr = self.proc.stderr.read()

    def write(self, data: bytes) -> None:
        os.write(self.stdin, data)

    def next_line(self, timeout: float = 20) -> bytes:
        line = self.lines.get(timeout=timeout)
        assert line is not None, "stdout closed"
        return line

    def answers(self, count: int) -> list[dict[str, Any]]:
        """The next ``count`` responses, in the order written (notifications between them skipped)."""
        found = []
        while len(found) < count:
            frame = json.loads(self.next_line())
            if "method" not in frame:
                found.append(frame)
        return found

    def close(self) -> list[bytes]:
        """The responses stdout carried before the answer to a last request, then stop the bridge.

        The last request (``session/list``) makes sure the runtime is up and its log written: answers
        go out in the order they are made, so an initialize answered twice would be among these. The
        bridge is stopped by SIGTERM (its clean shutdown), not by closing stdin: under the suite's
        gevent patching, the end of a pipe made here was seen to reach the bridge only once this
        process went on (with or without the early answer), which a test blocked on a read does not.
        """
        rest = []
        if self.proc.poll() is None:
            try:
                self.write(frame("last", "session/list", {}))
            except BrokenPipeError:  # it stopped by itself (a bad setting)
                pass
            else:
                while (response := self.answers(1)[0])["id"] != "last":
                    rest.append(response)
        os.close(self.stdin)
        if self.proc.poll() is None:
            self.proc.terminate()
        while (line := self.lines.get(timeout=20)) is not None:
            if "method" not in json.loads(line):
                rest.append(json.loads(line))
        self.proc.wait(timeout=20)
        self.stderr_read.join(20)
        return rest


@pytest.fixture
def env(tmp_path):
    return clean_env(tmp_path, ZCODE_BIN="zcode-sim")


def test_requests_written_with_initialize_are_each_answered_once_in_order(env, tmp_path):
    cwd = str(tmp_path)
    written = (frame(1, "initialize", INITIALIZE) + frame(2, "authenticate", {"methodId": "zcode-credentials"})
               + frame("three", "session/list", {}) + frame(4, "session/new", {"cwd": cwd, "mcpServers": []}))
    bridge = Prefilled(written, env)
    answers = bridge.answers(4)
    # A request the client sends once the bridge has answered: the rest of stdin, after what was read ahead.
    bridge.write(frame(5, "session/list", {}))
    answers += bridge.answers(1)
    bridge.write(frame(6, "session/list", {}))
    answers += bridge.answers(1)
    rest = bridge.close()
    assert rest == [], rest  # nothing answered twice: the runtime's own answer to initialize was not written
    ids = [answer["id"] for answer in answers]
    assert ids[0] == 1  # initialize first; the others in the order the bridge finishes them, each once
    assert sorted(map(str, ids[1:4])) == ["2", "4", "three"] and ids[4:] == [5, 6], ids
    assert all("result" in answer for answer in answers), answers
    assert answers[0]["result"]["agentInfo"]["name"] == "zcode-acp"
    assert next(answer for answer in answers if answer["id"] == 4)["result"]["sessionId"]
    assert EARLY in bridge.stderr.decode(), bridge.stderr.decode()[-3000:]
    # The Supervisor still handled it: the client's name is logged from its initialize.
    assert "client: tests 1" in bridge.stderr.decode()


def test_the_early_answer_is_the_runtimes_answer_byte_for_byte(env, tmp_path):
    written = frame(7, "initialize", {**INITIALIZE, "protocolVersion": 3})
    early = Prefilled(written, env)
    first = early.next_line()
    assert early.close() == []
    assert EARLY in early.stderr.decode(), early.stderr.decode()[-3000:]
    # A log file keeps the bridge on the usual path (it may fail to open: that must stop it first).
    usual = Prefilled(written, env, "--log-file", str(tmp_path / "bridge.log"))
    second = usual.next_line()
    assert usual.close() == []
    assert EARLY not in (tmp_path / "bridge.log").read_text()
    assert first == second
    assert json.loads(first)["result"]["protocolVersion"] == 1


def test_an_initialize_the_runtime_refuses_is_answered_by_the_runtime_once(env):
    bridge = Prefilled(frame(1, "initialize", {"protocolVersion": "one"}) + frame(2, "session/list", {}), env)
    answers = bridge.answers(2)
    assert bridge.close() == []
    assert [answer["id"] for answer in answers] == [1, 2]
    assert answers[0]["error"]["code"] == -32602
    assert EARLY not in bridge.stderr.decode()


def test_a_bad_setting_stops_the_start_before_anything_is_answered(env, tmp_path):
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    bridge = Prefilled(frame(1, "initialize", INITIALIZE), {**env, "ZCODE_HOME": str(not_a_folder)})
    assert bridge.proc.wait(timeout=20) == 2
    assert bridge.lines.get(timeout=20) is None  # stdout closed with nothing on it
    bridge.stderr_read.join(20)
    assert "ZCODE_HOME" in bridge.stderr.decode()
    os.close(bridge.stdin)


def test_early_answer_reads_the_first_line_as_the_connection_does():
    line = frame(1, "initialize", INITIALIZE)
    answer = early_initialize_answer(line + b'{"partial', "1.2.3")
    assert answer is not None and json.loads(answer)["id"] == 1
    assert early_initialize_answer(line[:-1], "1.2.3") is None  # the line is not complete yet
    assert early_initialize_answer(frame(1, "session/list", {}) + line, "1.2.3") is None  # not first
    assert early_initialize_answer(b'{"jsonrpc":"2.0","method":"initialize","params":{}}\n', "1") is None  # no id
    assert early_initialize_answer(b"\n\n" + line, "1.2.3") == answer  # blank lines are skipped, as the splitter does


def test_the_transport_drops_each_answer_already_written_once():
    answered = framing.encode({"jsonrpc": "2.0", "id": 1, "result": {"x": 1}})
    new_session = framing.encode({"jsonrpc": "2.0", "id": 2, "result": {"sessionId": "s"}})
    other = framing.encode({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
    request = framing.encode({"jsonrpc": "2.0", "id": 2, "method": "session/request_permission", "params": {}})
    transport = StdioTransport(0, 1, answered=(answered, new_session))
    assert transport._without_answered(other) == other  # a frame before it: kept
    assert transport._without_answered(other + answered + other) == other + other
    assert transport._without_answered(request) == request  # the bridge's own request with that id: kept
    # Known by its head: the runtime's answer to that id is dropped even if its result differs.
    later = framing.encode({"jsonrpc": "2.0", "id": 2, "result": {"sessionId": "s", "more": 1}})
    assert transport._without_answered(later) == b""
    assert transport.answered == []
    assert transport._without_answered(answered) == answered  # the same frame again (a new request): written


EARLY_NEW = "initialize and session/new was answered before the runtime was imported"


def usual_session_new(env, tmp_path, cwd: str, catalog: str | None = None) -> dict[str, Any]:
    """The runtime's own answer to the same session/new (a log file keeps the bridge on its usual path),
    in a home of its own that remembers ``catalog`` (a first run learns one, and the next would offer it)."""
    home = tmp_path / "usual-home"
    if catalog is not None:
        (home / "v2").mkdir(parents=True)
        (home / "v2" / "acp-model-catalog.json").write_text(catalog)
    usual = Prefilled(frame(1, "initialize", INITIALIZE) + frame(2, "session/new", {"cwd": cwd, "mcpServers": []}),
                      {**env, "ZCODE_HOME": str(home)}, "--log-file", str(tmp_path / "usual.log"))
    _, answer = usual.answers(2)
    assert usual.close() == []
    assert "was answered before the runtime" not in (tmp_path / "usual.log").read_text()
    return answer


def test_a_session_new_right_after_initialize_is_answered_early_once_and_the_session_is_real(env, tmp_path):
    cwd = str(tmp_path)
    bridge = Prefilled(frame(1, "initialize", INITIALIZE) + frame(2, "session/new", {"cwd": cwd, "mcpServers": []}),
                       env)
    _, created = bridge.answers(2)
    session_id = created["result"]["sessionId"]
    bridge.write(frame(3, "session/prompt", {"sessionId": session_id,
                                             "prompt": [{"type": "text", "text": "#sim stream count=2"}]}))
    [prompted] = bridge.answers(1)
    assert "result" in prompted, prompted
    rest = bridge.close()
    assert rest == [], rest  # the runtime's answer to session/new was not written again
    assert EARLY_NEW in bridge.stderr.decode(), bridge.stderr.decode()[-3000:]
    assert prompted == {"jsonrpc": "2.0", "id": 3, "result": prompted["result"]}
    assert prompted["result"]["stopReason"] == "end_turn"  # the runtime made the session with that id
    stored = json.loads((tmp_path / "zcode-home" / "v2" / "acp-lazy-sessions.json").read_text())
    assert stored[session_id]["cwd"] == cwd
    usual = usual_session_new(env, tmp_path, cwd)
    assert {**created["result"], "sessionId": "x"} == {**usual["result"], "sessionId": "x"}


def test_the_early_session_new_offers_the_remembered_models_as_the_runtime_does(env, tmp_path):
    folder = tmp_path / "zcode-home" / "v2"
    folder.mkdir(parents=True)
    catalog = {"version": 1, "available": [
        {"ref": {"providerId": "zhipu", "modelId": "glm-5"}, "label": "GLM-5"},
        {"ref": {"providerId": "zhipu", "modelId": "glm-5-air"}, "label": "GLM-5-Air"}]}
    (folder / "acp-model-catalog.json").write_text(json.dumps(catalog))
    cwd = str(tmp_path)
    bridge = Prefilled(frame(1, "initialize", INITIALIZE) + frame(2, "session/new", {"cwd": cwd, "mcpServers": []}),
                       env)
    _, created = bridge.answers(2)
    assert bridge.close() == []
    assert EARLY_NEW in bridge.stderr.decode()
    [model] = [o for o in created["result"]["configOptions"] if o["id"] == "model"]
    assert [o["value"] for o in model["options"]] == ["glm-5", "glm-5-air"]
    usual = usual_session_new(env, tmp_path, cwd, json.dumps(catalog))
    assert {**created["result"], "sessionId": "x"} == {**usual["result"], "sessionId": "x"}


@pytest.mark.parametrize("params", [{"cwd": "/no/such/folder", "mcpServers": []}, {"cwd": "relative", "mcpServers": []},
                                    {"cwd": "/tmp", "mcpServers": [{"name": "x"}]},
                                    {"cwd": "/tmp", "mcpServers": [], "additionalDirectories": ["/etc"]}])
def test_a_session_new_the_runtime_refuses_is_answered_by_the_runtime_once(env, params):
    bridge = Prefilled(frame(1, "initialize", INITIALIZE) + frame(2, "session/new", params), env)
    _, refused = bridge.answers(2)
    assert bridge.close() == []
    assert refused["error"]["code"] == -32602
    assert EARLY in bridge.stderr.decode() and EARLY_NEW not in bridge.stderr.decode()


def test_a_session_new_written_once_initialize_is_answered_is_answered_early_too(env, tmp_path):
    """What an editor does: read the initialize answer, then write session/new (within the wait)."""
    read_end, stdin = os.pipe()
    os.write(stdin, frame(1, "initialize", INITIALIZE))
    proc = subprocess.Popen([sys.executable, "-m", "zcode_acp", "--log-level", "debug"], env=env, stdin=read_end,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(read_end)
    try:
        assert json.loads(proc.stdout.readline())["id"] == 1
        os.write(stdin, frame(2, "session/new", {"cwd": str(tmp_path), "mcpServers": []}))
        assert "sessionId" in json.loads(proc.stdout.readline())["result"]
        os.write(stdin, frame(3, "session/list", {}))
        while "method" in (answer := json.loads(proc.stdout.readline())):
            pass  # the session's commands, announced after its answer
        assert answer["id"] == 3  # not a second answer to 2
    finally:
        os.close(stdin)
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    assert EARLY_NEW in err.decode(), err.decode()[-3000:]

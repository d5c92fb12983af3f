"""The Backend actor against tiny stand-in programs."""

import functools
import os
import stat
from dataclasses import dataclass, replace
from typing import Any

from zcode_acp.actors.backend import Backend
from zcode_acp.config.settings import Config
from zcode_acp.actors.messages import BackendCall, RegisterRoute, TerminateBackend
from tests.actors.fakes import Probe


@dataclass(frozen=True)
class Answer:
    """The reply type these tests ask the Backend for."""

    tag: str
    result: Any
    error: Any


def call(method, params, asker, tag, timeout=None):
    return BackendCall(method, params, asker.ref, functools.partial(Answer, tag), timeout)


def script(tmp_path, body: str) -> str:
    path = tmp_path / "fake-zcode"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_backend_death_fails_every_pending_request_and_tells_its_sessions(tmp_path):
    # Reads one request, then dies without answering.
    backend = Backend.start(replace(Config(), zcode_bin=script(tmp_path, "read line; exit 3")))
    asker, session = Probe(), Probe()
    backend.tell(RegisterRoute("b-1", session.ref))
    backend.tell(call("session/read", {"sessionId": "b-1"}, asker, "first"))
    backend.tell(call("session/read", {"sessionId": "b-1"}, asker, "second"))
    replies = asker.wait_for(lambda: len(asker.of("Answer")) == 2 and asker.of("Answer"))
    assert {r.tag for r in replies} == {"first", "second"}
    for reply in replies:
        assert reply.result is None and "exited (code 3)" in reply.error["message"]
    lost = session.wait_for(lambda: session.of("BackendLost"))
    assert "exited" in lost[0].reason
    backend.stop()


def test_a_chinese_bridge_words_the_backends_death_and_its_timeouts_in_chinese(tmp_path):
    """Issue 29: what the Backend writes itself reaches the user in the bridge's language; its log stays English."""
    chinese = replace(Config(), lang="zh-CN")
    asker, session = Probe(), Probe()
    backend = Backend.start(replace(chinese, zcode_bin=script(tmp_path, "read line; exit 3")))
    try:
        backend.tell(RegisterRoute("b-1", session.ref))
        backend.tell(call("session/read", {"sessionId": "b-1"}, asker, "first"))
        [reply] = asker.wait_for(lambda: asker.of("Answer"))
        assert reply.error["message"] == "ZCode 后端已退出（退出码 3）"
        [lost] = session.wait_for(lambda: session.of("BackendLost"))
        assert lost.reason == "ZCode 后端已退出（退出码 3）"
    finally:
        backend.stop()
    backend = Backend.start(replace(chinese, zcode_bin=script(tmp_path, "sleep 30")))
    try:
        backend.tell(call("session/read", {}, asker, "late", 0.2))
        [late] = asker.wait_for(lambda: [a for a in asker.of("Answer") if a.tag == "late"])
        assert late.error["timeout"] and late.error["message"] == "ZCode 后端在 0.2 秒内没有回应 session/read"
    finally:
        backend.ask(TerminateBackend(0.5))
        backend.stop()


def test_requests_time_out_with_a_clear_error(tmp_path):
    backend = Backend.start(replace(Config(), zcode_bin=script(tmp_path, "sleep 30")))
    asker = Probe()
    backend.tell(call("session/read", {}, asker, "t", 0.2))
    [reply] = asker.wait_for(lambda: asker.of("Answer"))
    assert reply.error["timeout"] and "did not answer session/read within 0.2s" in reply.error["message"]
    backend.ask(TerminateBackend(0.5))
    backend.stop()


def test_backend_requests_are_answered_and_unknown_ones_refused(tmp_path):
    # Asks the bridge two things, writes the answers to a file, then waits.
    out = tmp_path / "answers"
    body = (
        'echo \'{"id": 900, "method": "session/requestRuntimePreferences", "params": {}}\'\n'
        'echo \'{"id": 901, "method": "workspace/unknownThing", "params": {}}\'\n'
        f'head -n 3 > {out}\n'
        "sleep 30"
    )
    backend = Backend.start(replace(Config(), zcode_bin=script(tmp_path, body)))
    asker = Probe()
    backend.tell(call("session/list", {}, asker, "spawn-me", 0.5))
    asker.wait_for(lambda: asker.of("Answer"), timeout=3)
    lines = out.read_text().splitlines()
    answers = {line for line in lines}
    assert any('"memoryEnabled":false' in line for line in answers)
    assert any('"code":-32601' in line and '"id":901' in line for line in answers)
    assert all('"jsonrpc"' not in line for line in answers)  # the backend dialect has none
    backend.ask(TerminateBackend(0.5))
    backend.stop()


def test_a_missing_binary_is_a_clear_error_naming_zcode_bin(tmp_path):
    backend = Backend.start(replace(Config(), zcode_bin=str(tmp_path / "nope")))
    asker = Probe()
    backend.tell(call("session/create", {}, asker, "x"))
    [reply] = asker.wait_for(lambda: asker.of("Answer"))
    assert "ZCODE_BIN" in reply.error["message"]
    assert not os.path.exists(tmp_path / "nope")
    backend.stop()


def test_cli016s_host_requests_with_string_ids_are_answered_at_arrival(tmp_path):
    # The 0.16 engine: string ids, two header requests and the scoped runtime preferences (engine-today.md rows 1-2).
    out = tmp_path / "answers"
    body = (
        'echo \'{"id": "server-1", "method": "interaction/requestProviderRuntimeHeaders", '
        '"params": {"sessionId": "s", "providerId": "zhipu", "reason": "session_create"}}\'\n'
        'echo \'{"id": "server-2", "method": "interaction/requestOfficialMcpAuthHeaders", '
        '"params": {"sessionId": "s", "servers": []}}\'\n'
        'echo \'{"id": "server-3", "method": "session/requestRuntimePreferences", '
        '"params": {"scope": "runtime-materialization", "sessionId": "s"}}\'\n'
        'echo \'{"id": "server-4", "method": "workspace/unknownThing", "params": {}}\'\n'
        f'head -n 5 > {out}\n'
        "sleep 30"
    )
    backend = Backend.start(replace(Config(), zcode_bin=script(tmp_path, body)))
    asker = Probe()
    backend.tell(call("session/list", {}, asker, "spawn-me", 0.5))
    asker.wait_for(lambda: asker.of("Answer"), timeout=3)
    import json

    answers = {frame["id"]: frame for frame in map(json.loads, out.read_text().splitlines()) if "method" not in frame}
    assert answers["server-1"]["result"]["headersApplied"] is False
    assert answers["server-1"]["result"]["errorMessage"]
    assert answers["server-2"]["result"] == {"ok": False, "reason": "official_auth_unavailable"}
    assert answers["server-3"]["result"]["memoryEnabled"] is False
    assert answers["server-4"]["error"]["code"] == -32601
    backend.ask(TerminateBackend(0.5))
    backend.stop()

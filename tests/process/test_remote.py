"""Remote clients on one bridge: the editor on stdio (the official SDK) and further
ACP clients over a real WebSocket, on the same sessions (docs/remote.md)."""

from __future__ import annotations

import asyncio
import os
import json
import socket
from pathlib import Path

import pytest
import websockets

from tests.process.harness import TIMEOUT, RecordingClient, bridge, file_contains, pick, run
from tests.process.remote import REMOTE_ENV, TOKEN, RemoteClient, remote_url
from zcode_acp.net.tokens import token_subprotocol

FORMS = {"elicitation": {"form": {}}, "_meta": {"terminal_output": True}}
NO_FORMS = {"_meta": {"terminal_output": True}}


def backend_answers(b) -> list[dict]:
    """Every answer the simulator received to its interaction requests."""
    answers = []
    for line in b.trace.read_text().splitlines():
        entry = json.loads(line)
        if "response" in entry and isinstance(entry.get("result"), dict) and (
                "decision" in entry["result"] or "action" in entry["result"]):
            answers.append(entry["result"])
    return answers


async def attach(b, capabilities=None) -> RemoteClient:
    remote = await RemoteClient.connect(await remote_url(b.log))
    await remote.initialize(capabilities if capabilities is not None else NO_FORMS)
    return remote


async def watch(remote: RemoteClient, sid: str) -> RemoteClient:
    """A remote client gets a session's updates once it has named it: here by loading it."""
    loaded = await remote.request("session/load", {"sessionId": sid, "cwd": "/tmp", "mcpServers": []})
    assert "result" in loaded, loaded
    return remote


async def http_status(url: str, path: str, headers: dict[str, str]) -> tuple[int, str]:
    host, port = url.removeprefix("ws://").split("/")[0].split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n{head}\r\n".encode())
    await writer.drain()
    response = await asyncio.wait_for(reader.read(), TIMEOUT)
    writer.close()
    status_line = response.split(b"\r\n", 1)[0].decode()
    return int(status_line.split()[1]), response.decode(errors="replace")


UPGRADE = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
           "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}


@run
async def test_refusals_are_real_status_lines_and_the_endpoint_is_loopback_only(tmp_path):
    async with bridge(tmp_path, env=REMOTE_ENV) as b:
        url = await remote_url(b.log)
        assert url.startswith("ws://127.0.0.1:")
        assert (await http_status(url, "/acp", UPGRADE))[0] == 401  # no token
        assert (await http_status(url, "/acp", {**UPGRADE, "Authorization": "Bearer wrong"}))[0] == 401
        # The right token in the URL is refused too: a URL ends up in logs (docs/security.md).
        assert (await http_status(url, f"/acp?token={TOKEN}", UPGRADE))[0] == 401
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        assert (await http_status(url, "/other", {**UPGRADE, **bearer}))[0] == 404
        assert (await http_status(url, "/acp", bearer))[0] == 400  # not an upgrade
        with pytest.raises(websockets.InvalidStatus) as refused:
            await websockets.connect(url, additional_headers={"Authorization": "Bearer nope-nope-nope-nope"})
        assert refused.value.response.status_code == 401
        # A header token works, and so does the subprotocol a browser uses (answered with the plain one).
        remote = RemoteClient(await websockets.connect(url, subprotocols=["zcode-acp", token_subprotocol(TOKEN)]))
        assert remote.socket.subprotocol == "zcode-acp"
        assert (await remote.initialize())["result"]["protocolVersion"] == 1
        await remote.close()
        remote = RemoteClient(await websockets.connect(url, additional_headers={"Authorization": f"Bearer {TOKEN}"}))
        assert (await remote.initialize())["result"]["protocolVersion"] == 1
        await remote.close()
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        listening = [line.split() for line in Path("/proc/net/tcp").read_text().splitlines()[1:]]
        local = [fields[1] for fields in listening if fields[3] == "0A" and int(fields[1].split(":")[1], 16) == port]
        assert local == [f"0100007F:{port:04X}"]  # 127.0.0.1 only, never 0.0.0.0


@run
async def test_without_a_token_remote_stays_off_with_one_warning(tmp_path):
    env = {k: v for k, v in REMOTE_ENV.items() if k != "ZCODE_ACP_REMOTE_TOKEN"}
    async with bridge(tmp_path, env=env) as b:
        sid = await b.new_session()
        assert (await b.prompt(sid, "#sim stream count=3")).stop_reason == "end_turn"
        log = b.log.read_text()
        assert log.count("ZCODE_ACP_REMOTE_TOKEN") == 1 and "remote ACP clients" not in log


@run
async def test_broadcast_and_prompt_echo_both_ways(tmp_path):
    async with bridge(tmp_path, env=REMOTE_ENV) as b:
        sid = await b.new_session()
        remote = await attach(b)
        loaded = await remote.request("session/load", {"sessionId": sid, "cwd": "/tmp", "mcpServers": []})
        assert "result" in loaded
        assert (await b.prompt(sid, "#sim stream count=5 text=E")).stop_reason == "end_turn"
        await remote.wait_for(lambda: remote.texts(sid) == "EEEEE")
        [echo] = remote.of_kind(sid, "user_message_chunk")
        assert echo["content"]["text"] == "#sim stream count=5 text=E" and echo["messageId"]
        assert b.client.of_kind(sid, "user_message_chunk") == []  # the sender gets no echo of its own
        answer = await remote.request("session/prompt", {"sessionId": sid, "prompt": [
            {"type": "text", "text": "#sim stream count=3 text=R"}, {"type": "text", "text": "from the phone"}]})
        assert answer["result"]["stopReason"] == "end_turn"
        await b.client.wait_for(lambda: b.client.texts(sid).endswith("RRR"))
        [echo] = b.client.of_kind(sid, "user_message_chunk")
        assert echo["content"]["text"] == "#sim stream count=3 text=R\nfrom the phone"  # text blocks joined
        assert len(remote.of_kind(sid, "user_message_chunk")) == 1  # still only the editor's
        await remote.close()


@run
async def test_a_remote_client_joins_only_after_its_own_initialize(tmp_path):
    """Attached is not joined: no updates (nor dialogs) before its initialize, all of them after."""
    async with bridge(tmp_path, env=REMOTE_ENV) as b:
        sid = await b.new_session()
        lurker = await RemoteClient.connect(await remote_url(b.log))  # attached, never initialized
        joined = await watch(await attach(b), sid)
        assert (await b.prompt(sid, "#sim stream count=4 text=A")).stop_reason == "end_turn"
        await joined.wait_for(lambda: joined.texts(sid) == "AAAA")
        # Its own initialize's answer follows, on the same connection, whatever was sent to it before.
        assert "result" in await lurker.initialize(NO_FORMS)
        assert lurker.updates == {}
        # A session it has not named sends it nothing either; once it loads it: the replay, then live.
        assert (await b.prompt(sid, "#sim stream count=2 text=C")).stop_reason == "end_turn"
        assert lurker.updates == {}
        await watch(lurker, sid)
        assert (await b.prompt(sid, "#sim stream count=3 text=B")).stop_reason == "end_turn"
        await lurker.wait_for(lambda: lurker.texts(sid) == "AAAACCBBB")
        await lurker.close()
        await joined.close()


@run
async def test_three_clients_race_for_a_permission_the_first_answer_wins(tmp_path):
    client = RecordingClient()
    never = asyncio.get_running_loop().create_future()
    client.on_permission = lambda sid, params: never  # the editor never answers
    async with bridge(tmp_path, NO_FORMS, env=REMOTE_ENV, client=client) as b:
        sid = await b.new_session()
        first, second = await attach(b), await attach(b)
        prompt = asyncio.ensure_future(b.prompt(sid, "#sim permission"))
        await first.wait_for(lambda: first.dialogs)
        await second.wait_for(lambda: second.dialogs)
        await client.wait_for(lambda: client.dialogs)
        [dialog] = first.dialogs
        assert dialog["method"] == "session/request_permission"
        option = next(o["optionId"] for o in dialog["params"]["options"] if o["kind"].startswith("allow"))
        await first.socket.send(json.dumps({"jsonrpc": "2.0", "id": dialog["id"], "result": pick(option)}))
        assert (await prompt).stop_reason == "end_turn"
        await second.wait_for(lambda: any(f.get("method") == "$/cancel_request" for f in second.frames))
        assert [f["params"]["requestId"] for f in second.frames if f.get("method") == "$/cancel_request"] \
            == [second.dialogs[0]["id"]]
        await b.wait_for_frame(lambda f: f.get("method") == "$/cancel_request")
        assert not any(f.get("method") == "$/cancel_request" for f in first.frames)  # the winner keeps its own
        assert [a["decision"] for a in backend_answers(b)] == ["allow"]  # exactly one reply reached the backend
        await first.close()
        await second.close()


@run
async def test_a_client_that_attaches_later_gets_the_open_question_after_its_replay(tmp_path):
    client = RecordingClient()
    never = asyncio.get_running_loop().create_future()
    client.on_permission = lambda sid, params: never
    async with bridge(tmp_path, NO_FORMS, env=REMOTE_ENV, client=client) as b:
        sid = await b.new_session()
        prompt = asyncio.ensure_future(b.prompt(sid, "#sim permission"))
        await client.wait_for(lambda: client.dialogs)
        remote = await attach(b)
        loaded = await remote.request("session/load", {"sessionId": sid, "cwd": "/tmp", "mcpServers": []})
        await remote.wait_for(lambda: remote.dialogs)
        assert remote.frames.index(remote.dialogs[0]) > remote.frames.index(loaded)  # after its replay
        option = next(o["optionId"] for o in remote.dialogs[0]["params"]["options"] if o["kind"].startswith("allow"))
        await remote.socket.send(json.dumps({"jsonrpc": "2.0", "id": remote.dialogs[0]["id"], "result": pick(option)}))
        assert (await prompt).stop_reason == "end_turn"  # it joined the same race, and won
        await b.wait_for_frame(lambda f: f.get("method") == "$/cancel_request")
        # On v4 the turn goes on from resolveInteraction; the legacy answer behind it may reach the trace later.
        await file_contains(b.trace, '"decision"')
        assert [a["decision"] for a in backend_answers(b)] == ["allow"]
        await remote.close()


@run
async def test_cancel_and_preempt_from_another_client(tmp_path):
    async with bridge(tmp_path, env=REMOTE_ENV) as b:
        sid = await b.new_session()
        remote = await attach(b)
        await remote.request("session/load", {"sessionId": sid, "cwd": "/tmp", "mcpServers": []})
        running = asyncio.ensure_future(b.prompt(sid, "#sim slow count=200 interval=0.05"))
        await b.client.wait_for(lambda: "tick" in b.client.texts(sid))
        await remote.notify("session/cancel", {"sessionId": sid})
        assert (await running).stop_reason == "cancelled"
        running = asyncio.ensure_future(b.prompt(sid, "#sim slow count=200 interval=0.05"))
        await b.client.wait_for(lambda: b.client.texts(sid).count("tick") > 3)
        answer = await remote.request("session/prompt", {"sessionId": sid, "prompt": [
            {"type": "text", "text": "#sim stream count=2 text=Z"}]})
        if os.environ.get("ZCODE_ACP_ENGINE_API") == "v4":
            # On v4 a prompt during a turn is the engine's to route (docs/decisions.md, "A prompt during a
            # turn is the engine's to route"): the remote's prompt is queued or steered in, not a preemption.
            assert (await running).stop_reason == "end_turn"
            assert "Queued: " in b.client.texts(sid) or "Sent to the running turn" in b.client.texts(sid)
        else:
            assert (await running).stop_reason == "cancelled"  # preempted by the remote's prompt
        assert answer["result"]["stopReason"] == "end_turn"
        await remote.close()


@run
async def test_a_replay_goes_only_to_the_client_that_loads(tmp_path):
    async with bridge(tmp_path, env=REMOTE_ENV) as b:
        sid = await b.new_session()
        assert (await b.prompt(sid, "#sim stream count=4 text=H")).stop_reason == "end_turn"
        before = len(b.client.updates.get(sid, []))
        remote = await attach(b)
        await remote.request("session/load", {"sessionId": sid, "cwd": "/tmp", "mcpServers": []})
        assert "HHHH" in remote.texts(sid)  # the history, replayed to the requester
        assert (await b.prompt(sid, "#sim stream count=1 text=Q")).stop_reason == "end_turn"  # a barrier
        editor = b.client.updates[sid][before:]
        assert all(u["sessionUpdate"] != "user_message_chunk" or "count=1" in u["content"]["text"] for u in editor)
        assert "HHHH" not in "".join(u.get("content", {}).get("text", "") for u in editor
                                     if isinstance(u.get("content"), dict))
        await remote.close()


@run
async def test_forms_only_while_every_recipient_can_show_them_recomputed_when_one_leaves(tmp_path):
    client = RecordingClient()
    async with bridge(tmp_path, FORMS, env=REMOTE_ENV, client=client) as b:
        sid = await b.new_session()
        remote = await attach(b, NO_FORMS)
        remote.on_dialog = lambda frame: None  # it leaves the dialog to the editor
        await b.prompt(sid, "#sim plan")
        assert client.dialogs[-1][0] == "session/request_permission"  # the phone cannot show forms
        await remote.close()
        await file_contains(b.log, "a remote client left")
        await b.prompt(sid, "#sim plan")
        assert client.dialogs[-1][0] == "elicitation/create"  # recomputed when it left


@run
async def test_the_editor_leaving_closes_every_remote_socket_with_1001(tmp_path):
    async with bridge(tmp_path, env=REMOTE_ENV) as b:
        remote = await attach(b)
        b.proc.stdin.close()
        await asyncio.wait_for(remote.reader, TIMEOUT)
        assert remote.close_code == 1001


@pytest.mark.timeout(300)  # 150,000 updates must overflow the socket and the 8 MiB buffer: minutes on a busy machine
@run
async def test_a_stalled_remote_client_is_dropped_and_never_slows_the_editor(tmp_path):
    async with bridge(tmp_path, env=REMOTE_ENV) as b:
        sid = await b.new_session()
        url = await remote_url(b.log)
        # A client that connects and then stops reading (its library queues one message).
        stalled = await websockets.connect(url, max_queue=1, max_size=None,
                                           additional_headers={"Authorization": f"Bearer {TOKEN}"})
        await stalled.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                       "params": {"protocolVersion": 1, "clientCapabilities": {}}}))
        await stalled.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/load",  # it watches sid
                                       "params": {"sessionId": sid, "cwd": "/tmp", "mcpServers": []}}))
        # 30 MB in deltas of 1,000 characters: more than the 8 MB bound plus both kernels' socket
        # buffers hold, in few enough updates that a loaded machine streams them well within the timeout.
        chunk = "abcdefghij" * 100
        response = await b.prompt(sid, f"#sim stream count=30000 text={chunk}", timeout=200)
        assert response.stop_reason == "end_turn"
        assert b.client.texts(sid) == chunk * 30000  # the editor lost nothing
        assert "disconnecting it with 1013" in await file_contains(b.log, "reads too slowly")
        with pytest.raises(websockets.ConnectionClosed):  # its buffers full, it may never read the close frame
            while True:
                await asyncio.wait_for(stalled.recv(), TIMEOUT)
        await file_contains(b.log, "a remote client left")


@run
async def test_bad_frames_from_one_remote_client_never_affect_another(tmp_path):
    async with bridge(tmp_path, env=REMOTE_ENV) as b:
        sid = await b.new_session()
        bad, good = await attach(b), await attach(b)
        await bad.socket.send("{not json")
        await bad.socket.send(json.dumps({"jsonrpc": "2.0", "id": 5, "method": "session/prompt", "params": {}}))
        await bad.wait_for(lambda: len([f for f in bad.frames if "error" in f]) >= 2)
        codes = sorted(f["error"]["code"] for f in bad.frames if "error" in f)
        assert codes == [-32700, -32602]
        await bad.socket.send(b"binary is refused")
        await asyncio.wait_for(bad.reader, TIMEOUT)
        assert bad.close_code == 1003
        answer = await good.request("session/prompt", {"sessionId": sid, "prompt": [
            {"type": "text", "text": "#sim stream count=2 text=G"}]})
        assert answer["result"]["stopReason"] == "end_turn"
        await good.close()


def test_port_is_the_next_free_one_when_taken(tmp_path):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]

    @run
    async def body(tmp_path):
        async with bridge(tmp_path, env={**REMOTE_ENV, "ZCODE_ACP_REMOTE_PORT": str(port)}) as b:
            url = await remote_url(b.log)
            assert int(url.rsplit(":", 1)[1].split("/")[0]) > port

    try:
        body(tmp_path)
    finally:
        taken.close()


@run
async def test_the_backend_never_inherits_the_token_or_any_remote_setting(tmp_path):
    # The backend and every tool it runs (a model-written shell command) see this environment.
    env = {**REMOTE_ENV, "ZCODE_ACP_PROJECT_ROOTS": str(tmp_path), "ZCODE_ACP_PUBLIC_HOST": "agent.example.org",
           "ZCODE_ACP_REMOTE_PORT": "8378", "MY_COPY_OF_IT": f"x{TOKEN}x", "KEEP_ME": "still here"}
    async with bridge(tmp_path, env=env) as b:
        await remote_url(b.log)  # remote access is up in the bridge
        sid = await b.new_session()
        assert (await b.prompt(sid, "#sim stream count=1")).stop_reason == "end_turn"  # the backend runs
        (backend,) = b.backend_pids()
        names = dict(item.split(b"=", 1) for item in Path(f"/proc/{backend}/environ").read_bytes().split(b"\0")
                     if b"=" in item)
        assert names[b"KEEP_ME"] == b"still here" and names[b"ZCODE_BIN"]
        leaked = [name for name, value in names.items()
                  if name.startswith((b"ZCODE_ACP_REMOTE", b"ZCODE_ACP_HUB_", b"ZCODE_ACP_PROJECT", b"ZCODE_ACP_PUBLIC"))
                  or TOKEN.encode() in value]
        assert leaked == []


@run
async def test_the_bridge_endpoint_refuses_a_foreign_host_or_origin(tmp_path):
    # A DNS-rebinding page or a page elsewhere reaching the bridge's loopback port: 403, token or not.
    async with bridge(tmp_path, env=REMOTE_ENV) as b:
        url = await remote_url(b.log)
        authorized = {**UPGRADE, "Authorization": f"Bearer {TOKEN}"}
        host, port = url.removeprefix("ws://").split("/")[0].split(":")
        assert (await http_status(url, "/acp", {**authorized, "Origin": "https://attacker.example"}))[0] == 403
        assert (await http_status(url, "/acp", {**authorized, "Origin": f"http://{host}:{int(port) + 1}"}))[0] == 403
        reader, writer = await asyncio.open_connection(host, int(port))
        head = "".join(f"{k}: {v}\r\n" for k, v in authorized.items())
        writer.write(f"GET /acp HTTP/1.1\r\nHost: rebind.attacker.example:{port}\r\n{head}\r\n".encode())
        answer = await asyncio.wait_for(reader.read(), TIMEOUT)
        writer.close()
        assert answer.startswith(b"HTTP/1.1 403 ")
        # The loopback origin itself is fine (a page the hub serves never reaches here, a script may).
        remote = RemoteClient(await websockets.connect(url, origin=f"http://{host}:{port}",
                                                       additional_headers={"Authorization": f"Bearer {TOKEN}"}))
        assert (await remote.initialize())["result"]["protocolVersion"] == 1
        await remote.close()


@run
async def test_the_editors_bridge_announces_a_new_session_to_the_hub_at_once(tmp_path):
    from tests.hub.harness import HubProcess, get_json

    hub = HubProcess(tmp_path / "hub-home")
    try:
        # The hub's token for the bridge too; the heartbeat is 10 s, the session must show well before.
        env = {**REMOTE_ENV, "ZCODE_ACP_HUB_PORT": str(hub.port), "ZCODE_ACP_REMOTE_TOKEN": "test-token-0123456789"}
        async with bridge(tmp_path, env=env) as b:
            await file_contains(b.log, "registered with the hub")
            sid = await b.new_session()
            assert (await b.prompt(sid, "#sim stream count=1")).stop_reason == "end_turn"
            deadline = asyncio.get_running_loop().time() + 5
            while not any(s["sessionId"] == sid for i in get_json(f"{hub.url}/api/instances") for s in i["sessions"]):
                assert asyncio.get_running_loop().time() < deadline, "not announced before the 10 s heartbeat"
                await asyncio.sleep(0.1)  # polls the hub's answer, bounded by the deadline
    finally:
        hub.stop()

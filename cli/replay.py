"""``zcode-acp replay FILE``: run this build on a recorded trace and show what changed.

The bridge runs as a child process, exactly as an editor runs it, on
``zcode-sim --replay FILE`` (the trace's backend side). This module plays the
clients — the editor on stdio, and every remote client the trace recorded
(``ws-1`` …) on the bridge's WebSocket endpoint, opened when its first frame
is due, with a token of this run's own. It sends the recorded ``client>bridge``
frames in the recording's order across connections, each only once the bridge
has sent every connection as many frames as it had before it in the recording
(so answers, dialogs and streamed updates the client reacted to are there
first), with the recorded pauses unless ``--fast``. Ids the bridge makes up
(session ids, its own request ids per connection) are learned as the answers
come and substituted into what is sent.

Then what the bridge sent is compared with the recording, per connection and
session, after normalisation (protocol/trace.py), and printed as a readable
diff; the simulator's divergences (requests the trace does not have, or never
got) are printed too. Exit code 0 only when there is no difference at all.
``--update`` rewrites the trace's ``bridge>client`` side with what was sent now.
docs/traces.md.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import tempfile
import time
from typing import Any
from collections.abc import Callable

import gevent
import gevent.event
import ujson

from zcode_acp.net import websocket

from zcode_acp.net import websocket_handshake as handshake
from zcode_acp.protocol import trace as fmt
from zcode_acp.protocol import trace_redaction as redaction
from zcode_acp.cli.replay_driver import REMOTE_URL, STDIO, Connection, Replay, zcode_sim


def run_replay(path: str, update: bool = False, fast: bool = False, timeout: float = 10.0,
               out: Callable[[str], None] = print) -> int:
    with open(path, "rb") as handle:
        trace = fmt.parse(handle.read())
    conns = list(dict.fromkeys(trace.conns(fmt.CLIENT_IN) + trace.conns(fmt.CLIENT_OUT)))
    if not trace.conns(fmt.CLIENT_IN):
        out(f"{path}: the trace has no client frames")
        return 2
    if trace.dropped():
        out(f"{path}: warning: the recording dropped frames (it could not keep up); expect differences")
    replay = Replay(trace, conns, fast, timeout)
    remote_token = secrets.token_urlsafe(24)  # this run's own: a trace never holds the recorded one
    with tempfile.TemporaryDirectory(prefix="zcode-acp-replay-") as scratch:
        report = os.path.join(scratch, "backend-report.jsonl")
        log_path = os.path.join(scratch, "bridge.log")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ZCODE_ACP_", "ZCODE_SIM_")) and k != "ZCODE_DISALLOWED_TOOLS"}
        env.update({k: str(v) for k, v in (trace.header.get("env") or {}).items()})
        env.update(ZCODE_BIN=zcode_sim(), ZCODE_HOME=os.path.join(scratch, "home"),
                   ZCODE_SIM_REPLAY=os.path.abspath(path), ZCODE_SIM_REPLAY_REPORT=report,
                   ZCODE_SIM_REPLAY_TIMEOUT=str(timeout))
        if any(name != STDIO for name in conns):  # remote clients: the endpoint on, with a token of ours
            env.update(ZCODE_ACP_REMOTE="1", ZCODE_ACP_REMOTE_TOKEN=remote_token)
            env.setdefault("ZCODE_ACP_HUB_AUTOSTART", "0")
        if replay.content:  # redacted workspace roots: real folders here, the same ones on the backend side
            replay.known = _workspaces(trace, scratch)
            standins = os.path.join(scratch, "standins.json")
            with open(standins, "wb") as known_file:
                known_file.write(fmt.dumps(replay.known))
            env["ZCODE_SIM_REPLAY_STANDINS"] = standins
        if fast:
            env["ZCODE_SIM_REPLAY_FAST"] = "1"
        with open(log_path, "wb") as log_file:
            proc: Any = subprocess.Popen([sys.executable, "-m", "zcode_acp", "--log-level", "debug"],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log_file, env=env)
            reader = gevent.spawn(_read, proc, replay)

            def write(text: str) -> None:
                try:
                    proc.stdin.write(text.encode("utf-8", "surrogatepass") + b"\n")
                    proc.stdin.flush()
                except (BrokenPipeError, OSError):
                    replay.notes.append("the bridge stopped reading its input")

            def close() -> None:
                try:
                    proc.stdin.close()
                except OSError:
                    pass

            def open_conn(conn: Connection) -> None:
                if conn.name == STDIO:
                    conn.write, conn.close = write, close
                else:
                    _open_remote(conn, replay, log_path, remote_token, timeout)

            stdio = replay.conns.get(STDIO)
            if stdio is None:
                stdio = replay.conns[STDIO] = Connection(STDIO)  # only remote clients were recorded
            open_conn(stdio)
            replay.drive(open_conn)
            reader.join(timeout=timeout)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                replay.notes.append("the bridge did not exit after its input closed; killed it")
                proc.kill()
                proc.wait()
        differences = replay.compare()
        divergences = _divergences(report)
        for note in replay.notes:
            out(f"note: {note}")
        for item in divergences:
            out(f"backend: {item.get('divergence')}: {item.get('message')}")
        clients = "" if conns == [STDIO] else f" to {len(conns)} clients"
        out("\n".join(differences) if differences else
            f"{path}: the bridge sent what was recorded ({replay.recorded_count} frames{clients})")
        if (differences or divergences) and not update:
            with open(log_path, "rb") as log_reader:
                tail = log_reader.read().decode("utf-8", "replace").splitlines()[-15:]
            out("bridge log (last lines):\n  " + "\n  ".join(tail))
    if update:
        # A content-redacted trace stays so: today's texts (built from stand-ins) go in as lengths and hashes.
        fresh = replay.updated(redaction.Redactor(content=replay.content, salt=secrets.token_bytes(16)))
        temporary = path + ".tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as written:
            written.write(fmt.serialise(fresh))
        os.replace(temporary, path)
        out(f"{path}: bridge>client side rewritten ({replay.actual_count} frames)")
        return 1 if divergences else 0
    return 1 if differences or divergences else 0


def _workspaces(trace: fmt.Trace, scratch: str) -> dict[str, str]:
    """A folder for each redacted ``cwd`` the client sent: a new session's root must exist."""
    known: dict[str, str] = {}
    for number, digest in enumerate(redaction.workspace_placeholders(r["frame"] for r in trace.frames(fmt.CLIENT_IN)), 1):
        folder = os.path.join(scratch, "workspaces", f"w{number}")
        os.makedirs(folder, exist_ok=True)
        known[digest] = folder
    return known


def _remote_url(log_path: str, timeout: float) -> str:
    """The endpoint's address, from the bridge's log (it says where it listens once it does)."""
    deadline = time.monotonic() + timeout
    while True:
        with open(log_path, "rb") as handle:
            match = REMOTE_URL.search(handle.read().decode("utf-8", "replace"))
        if match:
            return match.group(1)
        if time.monotonic() > deadline:
            raise RuntimeError(f"the bridge did not open its remote endpoint within {timeout:g}s")
        gevent.sleep(0.02)


def _open_remote(conn: Connection, replay: Replay, log_path: str, token: str, timeout: float) -> None:
    """A remote client on the bridge's WebSocket endpoint: one ACP frame per text message."""
    socket = handshake.connect(_remote_url(log_path, timeout), [("Authorization", f"Bearer {token}")],
                               name=f"replay-{conn.name}")

    def received(text: str) -> None:
        replay.receive_text(conn.name, text)

    def closed(info: websocket.CloseInfo) -> None:
        replay.changed.set()

    socket.start(on_message=received, on_close=closed)

    def write(text: str) -> None:
        if not socket.send_text(text):
            replay.notes.append(f"{conn.name}: the bridge closed this connection before a frame could be sent")

    def close() -> None:
        socket.close(websocket.CloseCode.NORMAL, "replay done")
        socket.wait_closed(timeout)

    conn.write, conn.close = write, close


def _read(proc: Any, replay: Replay) -> None:
    for line in proc.stdout:
        replay.receive_text(STDIO, line)
    replay.changed.set()


def _divergences(report: str) -> list[dict[str, Any]]:
    if not os.path.exists(report):
        return []
    items = []
    with open(report, "rb") as handle:
        for line in handle:
            try:
                item = ujson.loads(line)
            except ValueError:
                continue
            if isinstance(item, dict) and "divergence" in item:
                items.append(item)
    return items

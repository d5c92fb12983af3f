"""Driving the real ``zcode-acp`` process with the official ACP Python SDK.

``Bridge`` starts the bridge exactly as an editor would (``spawn_agent_process``)
on the simulated backend, records every update per session, validates every
frame the bridge sends against the SDK's schema models, and offers waits on
conditions (with timeouts, never sleeps).
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar
from collections.abc import Awaitable, Callable

from acp import spawn_agent_process, text_block
from acp.connection import StreamDirection

from tests.schema import assert_valid_frame

BIN = Path(sys.executable).parent
SIM = str(BIN / "zcode-sim")
TIMEOUT = 15.0
# "At once", for an answer that must not wait on the engine: under every wait the bridge could
# otherwise be stuck in (the call timeout: 15 s by default, and a test that lowers it keeps it above
# this), and wide enough for a loaded 2-core CI machine, where a prompt failed by a dying engine
# once took 1.6 s. A bound by wall clock is not a benchmark: it tells apart "at once" from "after a
# timeout" and nothing finer (bench/ holds the figures).
AT_ONCE = 5.0
T = TypeVar("T")


def dialect() -> str:
    """The simulator dialect this run plays (``tests/process/conftest.py`` sets it per test)."""
    return os.environ.get("ZCODE_SIM_DIALECT", "classic")


def run(coro_fn: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
    """Run an async test body in a fresh event loop."""

    @functools.wraps(coro_fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return asyncio.run(asyncio.wait_for(coro_fn(*args, **kwargs), 90))

    return wrapper


def is_backend(pid: int) -> bool:
    """A child of the bridge that is a backend (not its process-group watchdog)."""
    try:
        return b"app-server" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


class RecordingClient:
    """An ACP client that records updates and answers requests by policy."""

    def __init__(self) -> None:
        self.updates: dict[str, list[dict[str, Any]]] = {}
        self.changed = asyncio.Condition()
        # Dialog policies: (session_id, request dict) → result dict, or an awaitable of one.
        self.on_permission: Callable[[str, dict[str, Any]], Any] = allow_first
        self.on_form: Callable[[str, dict[str, Any]], Any] = accept_empty
        self.dialogs: list[tuple[str, str, dict[str, Any]]] = []  # (method, session id, params)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        data = update.model_dump(by_alias=True, exclude_none=True, mode="json")
        async with self.changed:
            self.updates.setdefault(session_id, []).append(data)
            self.changed.notify_all()

    async def _dialog(self, method: str, session_id: str, params: dict[str, Any], policy: Callable) -> Any:
        async with self.changed:
            self.dialogs.append((method, session_id, params))
            self.changed.notify_all()
        answer = policy(session_id, params)
        if asyncio.iscoroutine(answer) or isinstance(answer, asyncio.Future):
            answer = await answer
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> Any:
        params = {"toolCall": tool_call.model_dump(by_alias=True, exclude_none=True, mode="json"),
                  "options": [o.model_dump(by_alias=True, exclude_none=True, mode="json") for o in options]}
        return await self._dialog("session/request_permission", session_id, params, self.on_permission)

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        params = {"message": message, **mode.model_dump(by_alias=True, exclude_none=True, mode="json")}
        return await self._dialog("elicitation/create", params.get("sessionId"), params, self.on_form)

    def dialogs_of(self, method: str) -> list[dict[str, Any]]:
        return [params for m, _, params in self.dialogs if m == method]

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = TIMEOUT) -> None:
        async with self.changed:
            await asyncio.wait_for(self.changed.wait_for(predicate), timeout)

    def texts(self, session_id: str, kind: str = "agent_message_chunk") -> str:
        return "".join(u["content"]["text"] for u in self.updates.get(session_id, [])
                       if u["sessionUpdate"] == kind)

    def of_kind(self, session_id: str, kind: str) -> list[dict[str, Any]]:
        return [u for u in self.updates.get(session_id, []) if u["sessionUpdate"] == kind]


def pick(option_id: str | None) -> dict[str, Any]:
    """A permission answer: the option with this id, or the cancelled outcome."""
    if option_id is None:
        return {"outcome": {"outcome": "cancelled"}}
    return {"outcome": {"outcome": "selected", "optionId": option_id}}


def allow_first(session_id: str, params: dict[str, Any]) -> dict[str, Any]:
    return pick(next(o["optionId"] for o in params["options"] if o["kind"].startswith("allow")))


def accept_empty(session_id: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {}}


class NoForms(RecordingClient):
    """A client without an elicitation handler: forms fail with -32601."""

    create_elicitation = None  # type: ignore[assignment]


# The legacy method and the v4 command (protocol/v4/commands.py) that do the same act.
V4_COMMAND_OF = {
    "session/send": "sendText", "session/stop": "stop", "session/create": "createSession",
    "session/setModel": "switchModelConfig", "session/setMode": "switchCollaborationMode",
    "session/compact": "compact", "session/rename": "renameSession", "session/fork": "forkAssistant",
    "session/delete": "deleteSession", "session/steer": "sendText",
}


def catalog_reads(calls: list[dict[str, Any]]) -> set[int]:
    """Indices of the ``session/resume`` calls that are part of a v4 create (docs/v4.md, "Lifecycle"):
    the engine's only catalog source for a ``createSession`` draft is a resume's snapshot, and a resume
    of a session it holds in memory is a read that changes nothing. Such a read is the first call that
    names a session, after a ``createSession`` command; any other resume brings a session back."""
    reads, named, creates = set(), set(), 0
    for index, call in enumerate(calls):
        params = call.get("params") if isinstance(call.get("params"), dict) else {}
        if call.get("method") == "v4/command" and params.get("type") == "createSession":
            creates += 1
        session_id = params.get("sessionId")
        if call.get("method") == "session/resume" and session_id not in named and creates > len(reads):
            reads.add(index)
        if isinstance(session_id, str):
            named.add(session_id)
    return reads


class Bridge:
    def __init__(self, conn: Any, proc: Any, client: RecordingClient, trace: Path, log: Path) -> None:
        self.conn = conn
        self.proc = proc
        self.client = client
        self.trace = trace
        self.log = log
        self.frames: list[dict[str, Any]] = []
        self.methods: dict[Any, str] = {}
        # The SDK logs and swallows what an observer raises, so a frame that fails
        # the schema is kept here and fails the test when the bridge is left.
        self.invalid: list[str] = []
        self.frame_arrived = asyncio.Event()  # set by each incoming frame: ``wait_for_frame`` waits on it

    async def wait_for_frame(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = TIMEOUT) -> None:
        """Until a frame from the bridge matches: also one the client's handlers never see (a request
        the SDK answers "method not found", such as ``$/cancel_request``), which wakes no
        ``client.wait_for``."""
        async def seen() -> None:
            while not any(predicate(frame) for frame in self.frames):
                self.frame_arrived.clear()
                await self.frame_arrived.wait()
        await asyncio.wait_for(seen(), timeout)

    def observe(self, event: Any) -> None:
        message = event.message
        if event.direction == StreamDirection.OUTGOING:
            if "method" in message and "id" in message:
                self.methods[message["id"]] = message["method"]
            return
        self.frames.append(message)
        self.frame_arrived.set()
        try:
            assert_valid_frame(message, self.methods)
        except AssertionError as error:
            self.invalid.append(f"{error}\n  in {message}")

    async def new_session(self, cwd: str = "/tmp") -> str:
        response = await self.conn.new_session(cwd=cwd, mcp_servers=[])
        return response.session_id

    async def prompt(self, session_id: str, text: str, timeout: float = TIMEOUT) -> Any:
        return await asyncio.wait_for(self.conn.prompt(session_id=session_id, prompt=[text_block(text)]), timeout)

    def backend_calls(self, method: str | None = None) -> list[dict[str, Any]]:
        if not self.trace.exists():
            return []
        calls = [json.loads(line) for line in self.trace.read_text().splitlines() if line.strip()]
        calls = [c for c in calls if "method" in c]  # (the trace also holds the answers it got)
        return [c for c in calls if method is None or c["method"] == method]

    async def backend_calls_once(self, method: str, where: Callable[[dict[str, Any]], bool] = lambda call: True,
                                 timeout: float = TIMEOUT) -> list[dict[str, Any]]:
        """The calls of ``method`` that match ``where``, once there is one (or none at the timeout).

        A call the bridge makes as it answers the client (a cancel's v4 stop goes out just before
        the cancelled prompt's answer) can reach the engine's trace a moment after that answer
        reaches the test, so a test that reads it right after the answer waits for it here."""
        return await eventually(lambda: [call for call in self.backend_calls(method) if where(call)], bool, timeout)

    def engine_acts(self, method: str) -> list[dict[str, Any]]:
        """The calls of the legacy ``method`` and of the v4 command that does the same act, in order.

        On the v4 path (docs/v4.md) the bridge prompts with ``v4/command sendText``, not
        ``session/send``; a test that checks *that* the bridge did something reads it here and
        holds on either path. A v4 command comes back shaped like the legacy call:
        ``{"method": "v4/command", "command": type, "params": {"sessionId": …, **payload}}`` — the
        payload keeps the engine's own names (``text``, not ``content``).
        """
        command = V4_COMMAND_OF.get(method)
        acts = []
        calls = self.backend_calls()
        reads = catalog_reads(calls)  # a v4 create's catalog read is the create's act, not a resume
        for index, call in enumerate(calls):
            if index in reads:
                continue
            if call["method"] == method:
                acts.append(call)
            elif command is not None and call["method"] == "v4/command" and call["params"].get("type") == command:
                params = call["params"]
                acts.append({"method": "v4/command", "command": command,
                             "params": {"sessionId": params.get("sessionId"), **(params.get("payload") or {})}})
        return acts

    def models_selected(self) -> list[dict[str, Any]]:
        """Each model selection the bridge sent, as ``session/setModel``'s ``model`` ref: on the v4
        path ``switchModelConfig {provider, model, thought}`` is the same act (an empty thought: none)."""
        selected = []
        for act in self.engine_acts("session/setModel"):
            params = act["params"]
            if act["method"] == "session/setModel":
                selected.append(params["model"])
                continue
            ref: dict[str, Any] = {"providerId": params["provider"], "modelId": params["model"]}
            if params.get("thought"):
                ref["options"] = {"reasoningLevel": params["thought"]}
            selected.append(ref)
        return selected

    def backend_pids(self) -> list[int]:
        """Children of the bridge process (the backend), from /proc."""
        pids = []
        for task in Path(f"/proc/{self.proc.pid}/task").glob("*"):
            children = (task / "children").read_text().split()
            pids += [int(pid) for pid in children]
        return [pid for pid in pids if is_backend(pid)]


@asynccontextmanager
async def bridge(tmp_path: Path, capabilities: dict[str, Any] | None = None, env: dict[str, str] | None = None,
                 client: RecordingClient | None = None):
    client = client or RecordingClient()
    trace = tmp_path / "backend-trace.jsonl"
    log = tmp_path / "bridge.log"
    environment = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "ZCODE_HOME": str(tmp_path / "zcode-home"),
        "ZCODE_BIN": SIM,
        "ZCODE_SIM_TRACE": str(trace),
        "ZCODE_SIM_DATA": str(tmp_path / "sim-data"),
        "ZCODE_SIM_DIALECT": dialect(),
    }
    if os.environ.get("ZCODE_SIM_FRAMES"):  # the engine-schema check (tests/process/conftest.py)
        environment["ZCODE_SIM_FRAMES"] = os.environ["ZCODE_SIM_FRAMES"]
    if os.environ.get("ZCODE_ACP_ENGINE_API"):  # the cli016-v4 run (tests/process/conftest.py)
        environment["ZCODE_ACP_ENGINE_API"] = os.environ["ZCODE_ACP_ENGINE_API"]
    environment.update(env or {})
    with open(log, "wb") as log_file:
        async with spawn_agent_process(
            client, sys.executable, "-m", "zcode_acp", "--log-level", "debug",
            env=environment, transport_kwargs={"stderr": log_file}, use_unstable_protocol=True,
        ) as (conn, proc):
            harness = Bridge(conn, proc, client, trace, log)
            conn._conn.add_observer(harness.observe)
            caps = capabilities if capabilities is not None else {"_meta": {"terminal_output": True}}
            from acp.schema import ClientCapabilities

            await conn.initialize(protocol_version=1,
                                  client_capabilities=ClientCapabilities.model_validate(caps))
            yield harness
            assert not harness.invalid, "frames that fail the schema:\n" + "\n".join(harness.invalid)


async def file_contains(path: Path, needle: str, timeout: float = TIMEOUT) -> str:
    """The file's text once it contains ``needle`` (the bridge persists off its event loop)."""
    return await eventually(lambda: path.read_text() if path.exists() else "", lambda text: needle in text, timeout)


async def eventually(read: Callable[[], T], done: Callable[[T], bool], timeout: float = TIMEOUT) -> T:
    """What ``read`` gives once ``done`` holds for it, or at the timeout: for what another process
    writes to a file, which has no event to wait on."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = read()
        if done(value) or loop.time() > deadline:
            return value
        await asyncio.sleep(0.02)

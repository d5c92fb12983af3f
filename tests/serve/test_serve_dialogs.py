"""``zcode-acp serve`` has no editor: when the phone's socket drops, nobody can see a waiting dialog.
It waits for a client to come back (ZCODE_ACP_DIALOG_GRACE), is re-sent to the one that loads the
session, and is declined only when the grace ends (docs/interactions.md, issue 29)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.serve.harness import AcpClient, ServeProcess, open_session, prompt


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder.resolve()


@pytest.fixture
def started() -> Iterator[list[ServeProcess]]:
    processes: list[ServeProcess] = []
    yield processes
    for process in processes:
        if process.proc.poll() is None:
            process.kill()


def next_dialog(client: AcpClient) -> dict[str, Any]:
    """The next request the bridge sends this client (the socket's timeout bounds the wait)."""
    while True:
        for index, frame in enumerate(client.notifications):
            if frame["method"] == "session/request_permission":
                del client.notifications[: index + 1]
                return frame
        client._read()


def text_until(client: AcpClient, needle: str) -> str:
    while needle not in client.text():
        client._read()
    return client.text()


def serve(tmp_path: Path, project: Path, started: list[ServeProcess], **env: str) -> str:
    process = ServeProcess(tmp_path, project, None, registered=False, **env)
    started.append(process)
    return f"ws://127.0.0.1:{process.port}/acp"


def test_a_dialog_waiting_when_the_phone_drops_is_re_sent_to_the_phone_that_loads_the_session(
        tmp_path: Path, project: Path, started: list[ServeProcess]) -> None:
    url = serve(tmp_path, project, started)
    phone = AcpClient(url)
    session_id = open_session(phone, project)
    prompt(phone, session_id, "#sim permission command=make")
    first = next_dialog(phone)
    phone.close()  # the socket drops with the dialog open

    back = AcpClient(url)
    assert "result" in back.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    assert "result" in back.call("session/load", {"sessionId": session_id, "cwd": str(project), "mcpServers": []})
    again = next_dialog(back)
    assert again["params"]["toolCall"]["toolCallId"] == first["params"]["toolCall"]["toolCallId"]
    [allow] = [o["optionId"] for o in again["params"]["options"] if o["kind"] == "allow_once"]
    back.socket.send(json.dumps({"jsonrpc": "2.0", "id": again["id"],
                                 "result": {"outcome": {"outcome": "selected", "optionId": allow}}}))
    assert "Permission granted; done." in text_until(back, "Permission granted; done.")
    back.close()


def test_a_dialog_nobody_comes_back_for_is_declined_when_the_grace_ends(
        tmp_path: Path, project: Path, started: list[ServeProcess]) -> None:
    url = serve(tmp_path, project, started, ZCODE_ACP_DIALOG_GRACE="0.5")
    phone = AcpClient(url)
    session_id = open_session(phone, project)
    prompt(phone, session_id, "#sim permission command=make")
    next_dialog(phone)
    phone.close()
    started[0].wait_line(r"a dialog waits for a client to load its session \(up to 0\.5 s\)")
    started[0].wait_line(r"a dialog no client could see was declined after 0\.5 s")
    back = AcpClient(url)  # back after the grace: the turn went on without the answer, the tool refused
    assert "result" in back.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    assert "result" in back.call("session/load", {"sessionId": session_id, "cwd": str(project), "mcpServers": []})
    assert "Permission denied (no client is connected)." in text_until(back, "connected).")
    back.close()

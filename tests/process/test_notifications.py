"""Notifications from the real bridge, driven by the official SDK, to a webhook on 127.0.0.1
(docs/hub.md, "Notifications")."""

import asyncio
import socket
from pathlib import Path

import pytest
from acp import RequestError

from tests.process.harness import RecordingClient, bridge, pick, run
from tests.webhook_receiver import Receiver

TOKEN = "remote-token-never-in-a-notification"
FORMS = {"elicitation": {"form": {}}, "_meta": {"terminal_output": True}}


@pytest.fixture
def hook():
    receiver = Receiver()
    yield receiver
    receiver.close()


@pytest.fixture
def hung():
    receiver = Receiver(hang=True)
    yield receiver
    receiver.close()


def notify_env(url, **extra):
    return {"ZCODE_ACP_NOTIFY_URL": url, "ZCODE_ACP_NOTIFY_AFTER": "0", "ZCODE_ACP_NOTIFY_INTERVAL": "0",
            "ZCODE_ACP_REMOTE": "1", "ZCODE_ACP_REMOTE_TOKEN": TOKEN, "ZCODE_ACP_HUB_AUTOSTART": "0",
            "ZCODE_ACP_HUB_PORT": "9", "ZCODE_ACP_NOTIFY_LINK": f"https://agent.example.org/?token={TOKEN}",
            **extra}


# classic: today's simulated permission writes a tool.updated that breaks the engine's schema (a
# simulator fault outside this test's subject, seen on tests/process/test_interactions.py too).
@pytest.mark.dialects("classic")
@run
async def test_a_dialog_a_turn_end_and_a_backend_death_each_reach_the_webhook(tmp_path, hook):
    client = RecordingClient()
    client.on_permission = lambda sid, params: pick("deny")
    async with bridge(tmp_path, env=notify_env(hook.url), client=client) as b:
        sid = await b.new_session()
        response = await b.prompt(sid, "#sim permission\nTidy the build folder")
        assert response.stop_reason == "end_turn"
        posts = await hook.until(2)
        with pytest.raises(RequestError):  # the turn fails with the backend's death: that is the point
            await b.prompt(sid, "#sim die")
        posts = await hook.until(4)
    bodies = [p.json() for p in posts]
    by_event = {}
    for body in bodies:
        by_event.setdefault(body["event"], []).append(body)
    assert set(by_event) == {"dialog_waiting", "turn_ended", "backend_failed"}, bodies
    dialog, ended = by_event["dialog_waiting"][0], by_event["turn_ended"][0]
    assert dialog["sessionId"] == sid and "permission waits for your answer" in dialog["summary"]
    assert ended["sessionId"] == sid and ended["summary"].endswith("(end_turn).")
    assert ended["title"] == f"tmp ({sid[:8]})"  # not opted in: the folder and the id, never the title
    assert dialog["link"].startswith("https://agent.example.org/#/s/") and dialog["link"].endswith(f"/{sid}")
    assert "exited" in by_event["backend_failed"][0]["summary"]
    for post in posts:
        assert TOKEN not in post.everything()  # never the token, not even from the link's address
        assert "prompt" not in post.json() and "answer" not in post.json()  # no text unless opted in


@pytest.mark.dialects("cli016")
@run
async def test_text_is_sent_when_opted_in(tmp_path, hook):
    async with bridge(tmp_path, env=notify_env(hook.url, ZCODE_ACP_NOTIFY_TEXT="1")) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim stream count=2\nSay hello")
        [post] = await hook.until(1)
    assert post.json()["prompt"] == "#sim stream count=2\nSay hello"
    assert post.json()["answer"]  # the engine's final answer
    assert post.json()["title"] == "Say hello"  # the 0.16 engine names it in an event (session.titleUpdated)


@pytest.mark.dialects("cli016")
@run
async def test_a_webhook_that_never_answers_never_delays_the_editor(tmp_path, hung):
    async with bridge(tmp_path, env=notify_env(hung.url, ZCODE_ACP_NOTIFY_FORMAT="ntfy")) as b:
        sid = await b.new_session()
        first = await b.prompt(sid, "#sim stream count=3")
        await hung.until(1, arrived=True)  # the turn's notice is held by the webhook, unanswered
        answers = [await b.prompt(sid, f"#sim stream count=3 text=t{i}") for i in range(3)]
        assert hung.posts == []  # every answer above came while the webhook still held its first post
    assert first.stop_reason == "end_turn" and [a.stop_reason for a in answers] == ["end_turn"] * 3


@pytest.mark.dialects("cli016")
@run
async def test_an_https_webhook_whose_certificate_ssl_cert_file_trusts_gets_the_notice(tmp_path):
    # The bridge patches socket but not ssl (cli/runtime.py): the stdlib's ssl cannot wrap a
    # gevent socket, so every https webhook failed with a TypeError before any handshake.
    secure = Receiver(tls=tmp_path / "tls")
    try:
        env = notify_env(secure.url, SSL_CERT_FILE=str(secure.cert))
        async with bridge(tmp_path, env=env) as b:
            sid = await b.new_session()
            await b.prompt(sid, "#sim stream count=2")
            posts = await secure.until(1)
    finally:
        secure.close()
    assert [p.json()["event"] for p in posts] == ["turn_ended"] and posts[0].json()["sessionId"] == sid


@run
async def test_the_engine_never_inherits_the_webhook_url_or_its_key(tmp_path, hook):
    # The backend and every tool it runs (a model-written shell command) see its environment.
    env = notify_env(hook.url, MY_COPY_OF_IT=f"curl {hook.url}", KEEP_ME="still here")
    async with bridge(tmp_path, env=env) as b:
        sid = await b.new_session()
        assert (await b.prompt(sid, "#sim stream count=1")).stop_reason == "end_turn"  # the backend runs
        (backend,) = b.backend_pids()
        names = dict(item.split(b"=", 1) for item in Path(f"/proc/{backend}/environ").read_bytes().split(b"\0")
                     if b"=" in item)
    assert names[b"KEEP_ME"] == b"still here"
    assert [name for name, value in names.items()
            if name.startswith(b"ZCODE_ACP_NOTIFY_") or b"webhook-key" in value] == []


@pytest.mark.dialects("classic")
@run
async def test_on_the_seeds_engine_notices_name_the_folder_the_question_and_carry_the_answer(tmp_path, hook):
    # The default simulator (classic): turn.completed has no ``response``; the title is the prompt's start.
    client = RecordingClient()
    client.on_form = lambda sid, params: {"action": "accept", "content": {"q_0": "auth.test.ts"}}
    async with bridge(tmp_path, FORMS, env=notify_env(hook.url, ZCODE_ACP_NOTIFY_TEXT="1"), client=client) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim stream count=2 text=hello\nSECRET-PROMPT-7f3a9")
        await b.prompt(sid, "#sim questions")
        posts = await hook.until(3)
    bodies = [p.json() for p in posts]
    assert bodies[0]["event"] == "turn_ended" and "hello" in bodies[0]["answer"]
    [dialog] = [body for body in bodies if body["event"] == "dialog_waiting"]
    assert "Which file should I test?" in dialog["summary"] and "AskUserQuestion" not in dialog["summary"]
    assert dialog["title"] != "Untitled session"


@pytest.mark.dialects("classic")
@run
async def test_without_text_no_notice_carries_the_prompts_words_not_even_as_the_title(tmp_path, hook):
    client = RecordingClient()
    client.on_form = lambda sid, params: {"action": "accept", "content": {"q_0": "auth.test.ts"}}
    async with bridge(tmp_path, FORMS, env=notify_env(hook.url), client=client) as b:
        sid = await b.new_session()
        await b.prompt(sid, "#sim questions\nSECRET-PROMPT-7f3a9 password=hunter2")
        await b.prompt(sid, "#sim stream count=1\nSECRET-PROMPT-7f3a9 again")
        posts = await hook.until(3)
    assert len(posts) == 3
    for post in posts:
        assert "SECRET-PROMPT" not in post.everything() and "hunter2" not in post.everything()
        assert post.json()["title"] == f"tmp ({sid[:8]})"  # the session's folder (/tmp) and its id


@pytest.mark.dialects("cli016")
@run
async def test_an_https_webhook_that_hangs_the_handshake_never_delays_the_editor(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as listener:  # accepts, never says a word of TLS
        listener.setblocking(False)
        url = f"https://127.0.0.1:{listener.getsockname()[1]}/hook?key=webhook-key"
        async with bridge(tmp_path, env=notify_env(url)) as b:
            sid = await b.new_session()
            first = await b.prompt(sid, "#sim stream count=3")
            held = await accepted(listener)  # the turn's notice is in its TLS handshake, unanswered
            try:
                answers = [await b.prompt(sid, f"#sim stream count=3 text=t{i}") for i in range(3)]
            finally:
                held.close()
    assert first.stop_reason == "end_turn" and [a.stop_reason for a in answers] == ["end_turn"] * 3


async def accepted(listener, timeout=15.0):
    """The first connection on a non-blocking ``listener`` (polled: nothing else can wake the loop)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        try:
            return listener.accept()[0]
        except BlockingIOError:
            assert loop.time() < deadline, "the bridge never connected"
            await asyncio.sleep(0.02)

"""One webhook POST (actors/webhook_post.py): https verified against the trust store and
SSL_CERT_FILE, no redirect followed, a bounded answer, one deadline for the whole attempt."""

import socket
import ssl
import tracemalloc

import gevent
import gevent.event
import pytest

from zcode_acp.actors.webhook_post import ANSWER_LIMIT, WebhookStatus, post
from zcode_acp.protocol.notifications import Post

BODY = Post(b'{"event": "turn_ended"}', {"Content-Type": "application/json"})


def test_https_reaches_a_webhook_whose_certificate_ssl_cert_file_trusts(receiver, tmp_path, monkeypatch):
    hook = receiver(tls=tmp_path / "tls")
    monkeypatch.setenv("SSL_CERT_FILE", str(hook.cert))
    assert post(hook.url, BODY, 5.0) == 200
    [received] = hook.wait_for(1)
    assert received.path == "/hook?key=webhook-key" and received.json() == {"event": "turn_ended"}


def test_the_https_test_runs_the_users_ssl_where_the_stdlib_client_fails(receiver, tmp_path, monkeypatch):
    """The suite patches socket but not ssl, as the bridge's entry points do (tests/conftest.py), so the
    test above proves webhook_post's own TLS: urllib's default, the code before the fix, fails here as
    it failed for users (issue 29), before any byte reaches the receiver."""
    import urllib.request

    from gevent import monkey

    assert monkey.is_module_patched("socket") and not monkey.is_module_patched("ssl")
    hook = receiver(tls=tmp_path / "tls")
    monkeypatch.setenv("SSL_CERT_FILE", str(hook.cert))
    request = urllib.request.Request(hook.url, data=BODY.body, headers=BODY.headers, method="POST")
    with pytest.raises(TypeError, match="_wrap_socket"):
        urllib.request.urlopen(request, timeout=5, context=ssl.create_default_context())
    assert hook.posts == []


def test_an_untrusted_certificate_is_refused_before_anything_is_sent(receiver, tmp_path, monkeypatch):
    hook = receiver(tls=tmp_path / "tls")
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with pytest.raises(ssl.SSLCertVerificationError):
        post(hook.url, BODY, 5.0)
    assert hook.posts == [] and hook.arrived == 0


def test_a_hanging_https_endpoint_ends_at_the_deadline_and_parks_only_its_greenlet():
    with socket.create_server(("127.0.0.1", 0)) as listener:  # accepts, never says a word of TLS
        url = f"https://127.0.0.1:{listener.getsockname()[1]}/hook"
        attempt = gevent.spawn(post, url, BODY, 0.5)
        ticked = gevent.event.Event()
        gevent.spawn(ticked.set)
        assert ticked.wait(5)  # the loop ran something else while the handshake waited
        assert not attempt.ready()
        attempt.join(10)
    assert isinstance(attempt.exception, TimeoutError)


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_not_followed(receiver, status):
    elsewhere = receiver()
    hook = receiver(statuses=(status,), location=elsewhere.url)
    with pytest.raises(WebhookStatus, match=f"HTTP {status}"):
        post(hook.url, BODY, 5.0)
    assert len(hook.posts) == 1
    assert elsewhere.wait_for(1, timeout=0.3) == [] and elsewhere.arrived == 0


def test_a_huge_answer_is_cut_off_and_costs_no_memory(receiver):
    hook = receiver(answer_size=128 << 20)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        assert post(hook.url, BODY, 30.0) == 200
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert hook.answered.wait(15)  # the receiver stopped: the bridge hung up on it
    assert hook.sent < 32 << 20  # what the socket buffers took, never the whole answer
    assert peak < 8 * ANSWER_LIMIT


def test_a_trickling_answer_ends_at_the_deadline(receiver):
    hook = receiver(answer_size=200, trickle=0.05)  # 10 s in all, a byte every 50 ms
    with pytest.raises(TimeoutError):
        post(hook.url, BODY, 0.5)
    assert hook.sent < 200


def test_a_url_that_is_not_http_is_refused():
    with pytest.raises(ValueError):
        post("file:///etc/passwd", BODY, 1.0)

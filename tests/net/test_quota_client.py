"""Reading the quota from a local fake of the provider's endpoint (net/quota_client.py): real answer
shapes, refusals, slowness, huge bodies, redirects, TLS; the key sent only as the endpoint takes it."""

from __future__ import annotations

import json
from pathlib import Path

import gevent
import pytest

from tests.quota_server import QuotaServer
from zcode_acp.net.quota_client import ANSWER_LIMIT, fetch_quota
from zcode_acp.protocol.quota import QuotaUnavailable, quota_url

FIXTURES = Path(__file__).parent.parent / "fixtures" / "quota"
KEY = "plan-key-0123456789abcdef"


@pytest.fixture
def quota_server():
    made: list[QuotaServer] = []

    def start(**options) -> QuotaServer:
        made.append(QuotaServer(**options))
        return made[-1]
    yield start
    for server in made:
        server.close()


def answer(name: str) -> object:
    return json.loads((FIXTURES / name).read_text())


def test_the_quota_is_read_with_the_bare_key_over_verified_https(quota_server, tmp_path, monkeypatch):
    server = quota_server(body=answer("zai-three-windows.json"), tls=tmp_path / "tls")
    monkeypatch.setenv("SSL_CERT_FILE", str(server.cert))
    snapshot = fetch_quota("zai", KEY, url=server.url)
    assert [m.id for m in snapshot.meters] == ["five_hour", "weekly", "mcp_monthly"]
    [(path, headers)] = server.requests
    assert path == "/api/monitor/usage/quota/limit" and headers["Authorization"] == KEY


def test_an_untrusted_certificate_reads_nothing(quota_server, tmp_path, monkeypatch):
    server = quota_server(body=answer("zai-three-windows.json"), tls=tmp_path / "tls")
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with pytest.raises(QuotaUnavailable) as refused:
        fetch_quota("zai", KEY, url=server.url)
    assert refused.value.reason == "quota.error.network" and server.requests == []


@pytest.mark.parametrize("options, reason", [
    ({"body": answer("key-refused.json")}, "quota.error.key_refused"),
    ({"body": {"error": "x"}, "status": 401}, "quota.error.key_refused"),
    ({"body": {}, "status": 503}, "quota.error.provider"),
    ({"body": b"<html>not json</html>"}, "quota.error.shape"),
    ({"body": {}, "status": 302, "location": "http://127.0.0.1:9/elsewhere"}, "quota.error.provider"),
])
def test_an_answer_without_quota_says_why_and_goes_nowhere_else(quota_server, options, reason):
    server = quota_server(**options)
    with pytest.raises(QuotaUnavailable) as refused:
        fetch_quota("zai", KEY, url=server.url)
    assert refused.value.reason == reason and len(server.requests) == 1  # a redirect is not followed
    assert KEY not in str(refused.value)


def test_a_huge_answer_is_cut_at_the_limit(quota_server):
    server = quota_server(answer_size=8 * ANSWER_LIMIT)
    with pytest.raises(QuotaUnavailable) as refused:
        fetch_quota("zai", KEY, url=server.url)
    assert refused.value.reason == "quota.error.shape"


def test_a_silent_endpoint_ends_at_the_deadline_and_holds_nothing_else_up(quota_server):
    server = quota_server(hang=True, body={})
    reading = gevent.spawn(fetch_quota, "zai", KEY, url=server.url, deadline=0.5)
    ticked = gevent.event.Event()
    gevent.spawn(ticked.set)
    assert ticked.wait(2.0)  # the hub kept running while the read waited
    reading.join(10)
    assert isinstance(reading.exception, QuotaUnavailable) and reading.exception.reason == "quota.error.network"


def test_each_provider_has_its_own_endpoint():
    assert quota_url("zai") == "https://api.z.ai/api/monitor/usage/quota/limit"
    assert quota_url("bigmodel") == "https://open.bigmodel.cn/api/monitor/usage/quota/limit"

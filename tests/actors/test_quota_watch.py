"""The QuotaWatch (actors/quota.py) with a fake key lookup and a fake provider: reads are bounded in
number, never at once, the news goes to the Supervisor only when the snapshot changed, quota/read is
answered exactly once, and a key the provider refuses stops the reads."""

from __future__ import annotations

from datetime import datetime, UTC

import gevent
import gevent.event

from tests.actors.fakes import Probe
from zcode_acp.actors.messages import QuotaAtFailure, ReadQuota, RefreshQuota
from zcode_acp.actors.quota import QuotaWatch
from zcode_acp.config.coding_plan import PlanKey, PlanKeyLookup
from zcode_acp.protocol.quota import QuotaUnavailable, parse_quota

KEY = PlanKey("zai", "plan-key-SECRET", "setup")
NOW = datetime(2026, 2, 9, 12, 0, tzinfo=UTC)


def at(percent: float):
    return parse_quota({"data": {"limits": [{"type": "TOKENS_LIMIT", "unit": 3, "number": 5,
                                              "percentage": percent}]}}, NOW)


class Provider:
    """Answers each read with the next of ``answers`` (a snapshot or an exception); counts the reads."""

    def __init__(self, *answers) -> None:
        self.answers = list(answers)
        self.reads = 0
        self.gate: gevent.event.Event | None = None  # set: reads wait for it
        self.started = gevent.event.Event()

    def __call__(self, key):
        assert key is KEY
        self.reads += 1
        self.started.set()
        if self.gate is not None:
            self.gate.wait(5)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer


def start(provider, key=KEY, min_interval=60.0):
    supervisor = Probe()
    watch = QuotaWatch.start(supervisor.ref, None, find_key=lambda: PlanKeyLookup(key), fetch=provider,
                             min_interval=min_interval)
    return supervisor, watch


def test_a_refresh_reads_once_and_tells_the_supervisor_of_a_new_snapshot():
    provider = Provider(at(50))
    supervisor, watch = start(provider)
    try:
        watch.tell(RefreshQuota())
        changed = supervisor.wait_for(lambda: supervisor.of("QuotaChanged"))
        assert changed[0].snapshot.meters[0].used_percent == 50 and changed[0].crossings == ()
        watch.tell(RefreshQuota())  # within the interval: no second read now
        conn = Probe()
        watch.tell(ReadQuota(conn.ref, 7, "en"))  # answered from the fresh snapshot
        reply = conn.wait_reply(7)
        assert reply.error is None and reply.result["pools"][0]["meters"][0]["usedPercent"] == 50
        assert provider.reads == 1
        conn.stop()
    finally:
        watch.stop()
        supervisor.stop()


def test_a_refresh_asked_for_too_soon_is_done_when_the_interval_ends():
    provider = Provider(at(50), at(85))
    supervisor, watch = start(provider, min_interval=0.3)
    try:
        watch.tell(RefreshQuota())
        supervisor.wait_for(lambda: supervisor.of("QuotaChanged"))
        watch.tell(RefreshQuota())
        watch.tell(RefreshQuota())
        second = supervisor.wait_for(lambda: len(supervisor.of("QuotaChanged")) == 2 and supervisor.of("QuotaChanged"))
        assert provider.reads == 2  # two asked for in the interval: one trailing read, not two
        [(meter, level)] = second[1].crossings
        assert meter.id == "five_hour" and level == 80.0
    finally:
        watch.stop()
        supervisor.stop()


def test_the_same_snapshot_again_tells_nobody():
    provider = Provider(at(50))
    supervisor, watch = start(provider, min_interval=0.0)
    try:
        watch.tell(RefreshQuota())
        supervisor.wait_for(lambda: supervisor.of("QuotaChanged"))
        conn = Probe()
        watch.tell(ReadQuota(conn.ref, 1, "en"))  # min_interval 0: a read
        conn.wait_reply(1)
        assert provider.reads == 2 and len(supervisor.of("QuotaChanged")) == 1
        conn.stop()
    finally:
        watch.stop()
        supervisor.stop()


def test_reads_during_a_read_share_it_and_each_is_answered_once():
    provider = Provider(at(40))
    provider.gate = gevent.event.Event()
    supervisor, watch = start(provider, min_interval=0.0)
    conn = Probe()
    try:
        for request_id in (1, 2, 3):
            watch.tell(ReadQuota(conn.ref, request_id, "en"))
        assert provider.started.wait(3)
        provider.gate.set()
        for request_id in (1, 2, 3):
            conn.wait_reply(request_id)
        assert sorted(r.request_id for r in conn.replies()) == [1, 2, 3] and provider.reads == 1
    finally:
        conn.stop()
        watch.stop()
        supervisor.stop()


def test_without_a_key_nothing_is_read_and_quota_read_gets_no_pools():
    provider = Provider(at(40))
    supervisor, watch = start(provider, key=None)
    conn = Probe()
    try:
        watch.tell(RefreshQuota())
        watch.tell(ReadQuota(conn.ref, 9, "en"))
        reply = conn.wait_reply(9)
        assert reply.error is None and reply.result["pools"] == []
        assert provider.reads == 0 and supervisor.of("QuotaChanged") == []
    finally:
        conn.stop()
        watch.stop()
        supervisor.stop()


def test_a_refused_key_stops_the_reads_and_a_failed_read_is_an_error_that_says_why():
    refused = Provider(QuotaUnavailable("quota.error.key_refused"))
    supervisor, watch = start(refused, min_interval=0.0)
    conn = Probe()
    try:
        watch.tell(ReadQuota(conn.ref, 1, "en"))
        assert conn.wait_reply(1).result["pools"] == []
        watch.tell(RefreshQuota())
        watch.tell(RefreshQuota())
        watch.tell(ReadQuota(conn.ref, 3, "en"))  # handled after the refreshes (one mailbox, in order)
        assert conn.wait_reply(3).result["pools"] == []
        assert refused.reads == 1
    finally:
        conn.stop()
        watch.stop()
        supervisor.stop()
    down = Provider(QuotaUnavailable("quota.error.network", "no answer within 10 s"))
    supervisor, watch = start(down, min_interval=0.0)
    conn = Probe()
    try:
        watch.tell(ReadQuota(conn.ref, 2, "zh-CN"))
        reply = conn.wait_reply(2)
        assert reply.error["code"] == -32603 and "无法连接服务商" in reply.error["message"]
        assert "SECRET" not in reply.error["message"]
    finally:
        conn.stop()
        watch.stop()
        supervisor.stop()


def test_a_turn_the_limit_stopped_gets_the_snapshot_read_again_when_it_is_stale():
    # The last read is older than the interval: the failure waits for a new read and gets its figures.
    provider = Provider(at(60), at(100))
    supervisor, watch = start(provider, min_interval=0.0)
    turn = Probe()
    try:
        watch.tell(RefreshQuota())
        supervisor.wait_for(lambda: supervisor.of("QuotaChanged"))
        watch.tell(QuotaAtFailure(turn.ref, 3))
        [answer] = turn.wait_for(lambda: turn.of("QuotaForFailure"))
        assert answer.key == 3 and answer.snapshot.meters[0].used_percent == 100
        assert provider.reads == 2
    finally:
        turn.stop()
        watch.stop()
        supervisor.stop()


def test_a_turn_the_limit_stopped_gets_a_fresh_snapshot_at_once():
    provider = Provider(at(100))
    supervisor, watch = start(provider)
    turn = Probe()
    try:
        watch.tell(RefreshQuota())
        supervisor.wait_for(lambda: supervisor.of("QuotaChanged"))
        watch.tell(QuotaAtFailure(turn.ref, 1))
        [answer] = turn.wait_for(lambda: turn.of("QuotaForFailure"))
        assert answer.snapshot.meters[0].used_percent == 100 and provider.reads == 1
    finally:
        turn.stop()
        watch.stop()
        supervisor.stop()


def test_a_turn_the_limit_stopped_without_a_key_is_answered_without_a_snapshot():
    supervisor, watch = start(Provider(at(100)), key=None)
    turn = Probe()
    try:
        watch.tell(QuotaAtFailure(turn.ref, 1))
        [answer] = turn.wait_for(lambda: turn.of("QuotaForFailure"))
        assert answer.snapshot is None
    finally:
        turn.stop()
        watch.stop()
        supervisor.stop()

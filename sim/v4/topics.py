"""Topic subscriptions: ``v4/conversation/subscribe|resync|unsubscribe`` and the frames they get.

As the engine serves them (``zcode-protocol-v4/transport.ts`` and the captures): the
answer to a subscribe or resync is only an ack ``{subscriptionId, mode, logEpoch}``; the
state follows as ``v4/conversation/frame`` notifications, sent after that answer. A
subscribe without a usable base gets a snapshot (``deliveryKind: initial``); with a base
``{logEpoch, seq}`` the engine still retains, it is resumed with one deltas frame (mode
``resume``). A resync answers on the same subscription, with a ``recovery`` snapshot
(``forceSnapshot`` or no usable base) or ``recovery`` deltas. Every commit of a topic is
then sent to each of its subscriptions as an ``online`` deltas frame. Ordinals grow per
subscription; ``logicalFrameId`` is ``<subscriptionId>-lf-<n>`` with ``n`` counting every
logical frame this server sent.

Frames are never written while a request is being answered: ``hold`` queues them and
``release`` sends them once the answer is out (``plane.DataPlane`` does both).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from .coalesce import coalesce
from .errors import INVALID_PARAMS, V4Error
from .faults import Faults
from .log import Commit, DeltaLog
from .wire import DEFAULT_FRAGMENT_BYTES, logical_frame, wrap

FRAME_METHOD = "v4/conversation/frame"


class TopicSource(Protocol):
    """A topic's state: its log, and the snapshot a subscriber starts from."""

    log: DeltaLog

    def snapshot(self) -> dict[str, Any]: ...


@dataclass(slots=True)
class Subscription:
    subscription_id: str
    topic: str
    connection_id: str
    ordinal: int = 0
    stale_ids: list[str] = field(default_factory=list)
    """Ids this connection held for the topic before: what a stale-id fault impersonates."""


class TopicServer:
    def __init__(self, send: Callable[[dict[str, Any]], None], *, clock: Callable[[], float],
                 faults: Faults | None = None, fragment_bytes: int = DEFAULT_FRAGMENT_BYTES,
                 coalesce_ms: float = 0.0) -> None:
        self._send = send
        self.coalesce_ms = coalesce_ms
        """Above 0: conversation commits wait this long and go out as one merged frame (coalesce.py)."""
        self._pending: dict[str, tuple[float, list[Commit]]] = {}
        """subscription id → (when its first waiting commit came, the waiting commits)."""
        """Writes one notification frame ``{method, params}``."""
        self.clock = clock
        self.faults = faults if faults is not None else Faults()
        self.fragment_bytes = fragment_bytes
        self.sources: dict[str, TopicSource] = {}
        self.subscriptions: dict[str, Subscription] = {}
        self._ids = itertools.count(1)
        self._frames = itertools.count(1)
        self._held = 0
        self._outbox: list[dict[str, Any]] = []
        self._retired: dict[tuple[str, str], list[str]] = {}

    # -- sources -------------------------------------------------------------------------

    def add_source(self, source: TopicSource) -> None:
        self.sources[source.log.topic] = source
        source.log.listeners.append(self._on_commit)

    def remove_source(self, topic: str) -> None:
        source = self.sources.pop(topic, None)
        if source is not None and self._on_commit in source.log.listeners:
            source.log.listeners.remove(self._on_commit)

    # -- holding frames while an answer is pending ---------------------------------------

    def hold(self) -> None:
        self._held += 1

    def release(self) -> None:
        self._held = max(0, self._held - 1)
        if self._held == 0:
            outbox, self._outbox = self._outbox, []
            for frame in outbox:
                self._send(frame)

    # -- methods -------------------------------------------------------------------------

    def subscribe(self, params: dict[str, Any]) -> dict[str, Any]:
        topic = _text(params, "topic")
        connection_id = _text(params, "connectionId")
        source = self._source(topic)
        subscription = Subscription(f"sub-{next(self._ids)}", topic, connection_id,
                                    stale_ids=list(self._retired.get((connection_id, topic), [])))
        self.subscriptions[subscription.subscription_id] = subscription
        commits = self._resumable(source, params.get("base"))
        mode = "snapshot" if commits is None else "resume"
        if commits is None:
            self._send_snapshot(subscription, source, "initial")
        elif commits:
            self._send_deltas(subscription, source, commits, "initial")
        ack: dict[str, Any] = {"subscriptionId": subscription.subscription_id, "mode": mode,
                               "logEpoch": source.log.log_epoch}
        if topic.startswith("conversation/"):  # the engine times only conversation opens (transport.ts)
            ack["openTiming"] = {"version": 1, "initialFrameEncodeMs": 0, "sessionRuntimeState": "warm",
                                 "snapshotRowCount": _row_count(source)}
        return {"ack": ack}

    def resync(self, params: dict[str, Any]) -> dict[str, Any]:
        subscription = self._owned(params)
        self._pending.pop(subscription.subscription_id, None)  # the resync answers from the client's own base
        source = self._source(subscription.topic)
        commits = None if params.get("forceSnapshot") else self._resumable(source, params.get("base"))
        if commits is None:
            self._send_snapshot(subscription, source, "recovery")
        elif commits:
            self._send_deltas(subscription, source, commits, "recovery")
        mode = "snapshot" if commits is None else "resume"
        return {"ack": {"subscriptionId": subscription.subscription_id, "mode": mode,
                        "logEpoch": source.log.log_epoch}}

    def unsubscribe(self, params: dict[str, Any]) -> dict[str, Any]:
        subscription = self._owned(params)
        del self.subscriptions[subscription.subscription_id]
        self._pending.pop(subscription.subscription_id, None)
        self._retired.setdefault((subscription.connection_id, subscription.topic), []).append(
            subscription.subscription_id)
        return {}

    def drop_connection(self, connection_id: str) -> None:
        """A connection went away: its subscriptions end without an unsubscribe."""
        for key in [k for k, s in self.subscriptions.items() if s.connection_id == connection_id]:
            del self.subscriptions[key]
            self._pending.pop(key, None)

    # -- frames --------------------------------------------------------------------------

    def _on_commit(self, commit: Commit) -> None:
        source = self.sources.get(commit.topic)
        if source is None:
            return
        for subscription in [s for s in self.subscriptions.values() if s.topic == commit.topic]:
            if self.coalesce_ms > 0 and commit.topic.startswith("conversation/"):
                since, waiting = self._pending.get(subscription.subscription_id, (self.clock(), []))
                self._pending[subscription.subscription_id] = (since, [*waiting, commit])
                continue
            self._send_deltas(subscription, source, [commit], "online")

    def flush(self, now_ms: float, *, everything: bool = False) -> None:
        """Send the waiting commits whose flush window has passed, one merged frame per subscription."""
        for subscription_id, (since, commits) in list(self._pending.items()):
            if not everything and now_ms - since < self.coalesce_ms:
                continue
            del self._pending[subscription_id]
            subscription = self.subscriptions.get(subscription_id)
            source = self.sources.get(commits[0].topic)
            if subscription is None or source is None:
                continue
            ops = coalesce([op for commit in commits for op in commit.ops])
            self._send_frame(subscription, commits[0].from_seq, commits[-1].to_seq, {"kind": "deltas", "deltas": ops},
                             "online", deltas=True)

    def _send_snapshot(self, subscription: Subscription, source: TopicSource, delivery_kind: str) -> None:
        payload = {"kind": "snapshot", "snapshot": source.snapshot()}
        self._send_frame(subscription, 0, source.log.seq, payload, delivery_kind, deltas=False)

    def _send_deltas(self, subscription: Subscription, source: TopicSource, commits: list[Commit],
                     delivery_kind: str) -> None:
        ops = [op for commit in commits for op in commit.ops]
        payload = {"kind": "deltas", "deltas": ops}
        self._send_frame(subscription, commits[0].from_seq, commits[-1].to_seq, payload, delivery_kind, deltas=True)

    def _send_frame(self, subscription: Subscription, from_seq: int, to_seq: int, payload: dict[str, Any],
                    delivery_kind: str, *, deltas: bool) -> None:
        subscription.ordinal += 1
        number = next(self._frames)
        sent_at = int(self.clock())
        frame = logical_frame(subscription.topic, subscription.subscription_id, from_seq, to_seq, sent_at, payload)
        if deltas and self.faults.take("gap"):
            return  # lost on the way: the next frame starts past the client's seq
        notifications = wrap(frame, delivery_kind=delivery_kind, ordinal=subscription.ordinal,
                             logical_frame_id=f"{subscription.subscription_id}-lf-{number}",
                             fragment_bytes=self.fragment_bytes, force_fragments=self.faults.take("fragment"),
                             corrupt_checksum=self.faults.take("checksum"))
        if self.faults.take("stale_subscription"):
            stale = subscription.stale_ids[-1] if subscription.stale_ids else f"{subscription.subscription_id}-old"
            stale_frame = {**frame, "subscriptionId": stale}
            self._emit(wrap(stale_frame, delivery_kind=delivery_kind, ordinal=subscription.ordinal,
                            logical_frame_id=f"{stale}-lf-{number}", fragment_bytes=self.fragment_bytes))
        self._emit(notifications)
        if self.faults.take("duplicate"):
            self._emit(notifications)

    def _emit(self, notifications: list[dict[str, Any]]) -> None:
        for params in notifications:
            message = {"method": FRAME_METHOD, "params": params}
            if self._held:
                self._outbox.append(message)
            else:
                self._send(message)

    # -- inside --------------------------------------------------------------------------

    def _source(self, topic: str) -> TopicSource:
        source = self.sources.get(topic)
        if source is None:
            kind, _, key = topic.partition("/")
            what = "Session" if kind == "conversation" else "Topic"
            raise V4Error(INVALID_PARAMS, f"{what} not found: {key or topic}")
        return source

    def _owned(self, params: dict[str, Any]) -> Subscription:
        topic = _text(params, "topic")
        connection_id = _text(params, "connectionId")
        subscription = self.subscriptions.get(_text(params, "subscriptionId"))
        if subscription is None or subscription.topic != topic or subscription.connection_id != connection_id:
            raise V4Error(INVALID_PARAMS, f"Unknown subscription {params.get('subscriptionId')} for {topic}")
        return subscription

    @staticmethod
    def _resumable(source: TopicSource, base: Any) -> list[Commit] | None:
        """The commits after ``base``, or None when a snapshot is needed (no base, other epoch, too old)."""
        if not isinstance(base, dict) or base.get("logEpoch") != source.log.log_epoch:
            return None
        seq = base.get("seq")
        if not isinstance(seq, int) or isinstance(seq, bool):
            return None
        return source.log.since(seq)


def _text(params: dict[str, Any], key: str) -> str:
    value = params.get(key) if isinstance(params, dict) else None
    if not isinstance(value, str) or not value:
        raise V4Error(INVALID_PARAMS, f"Invalid params: {key} must be a non-empty string")
    return value


def _row_count(source: TopicSource) -> int:
    rows = source.snapshot().get("rows")
    return len(rows["window"]) if isinstance(rows, dict) and isinstance(rows.get("window"), list) else 0

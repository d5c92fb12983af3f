"""The GLM Coding Plan's quota, read from the provider and said the ACP way (docs/quota.md).

Pure: the provider's answer in, a snapshot out. The provider is Z.ai (``api.z.ai``,
international) or BigModel (``open.bigmodel.cn``, China); both serve
``GET /api/monitor/usage/quota/limit`` with the plan's API key as a bare ``Authorization``
header, and answer (HTTP 200 even for a refused key; ``success``/``code`` tell)::

    {"code": 200, "success": true, "msg": "...", "data": {"level": "pro", "limits": [
      {"type": "TOKENS_LIMIT", "unit": 3, "number": 5, "percentage": 15, "nextResetTime": <epoch ms>,
       "usage": 800000000, "currentValue": 127694464, "remaining": 672305536},
      {"type": "TOKENS_LIMIT", "unit": 6, "number": 1, "percentage": 53, "nextResetTime": <epoch ms>},
      {"type": "TIME_LIMIT", "unit": 5, "number": 1, "percentage": 22, "usage": 1000,
       "currentValue": 224, "remaining": 776, "nextResetTime": <epoch ms>, "usageDetails": [...]}]}}

The windows, as public monitors of this endpoint name them: ``TOKENS_LIMIT`` unit 3 is the rolling
5-hour window (``number`` hours), unit 6 the weekly one (``number`` weeks), unit 7 a monthly one;
``TIME_LIMIT`` is the monthly allowance of MCP tool calls (web search, reader). ``percentage`` is the
share used. Every field may be missing (older plans send no ``unit``, some no reset time): what the
provider did not report stays absent, never a guessed zero (the ACP quota RFD's rule).

The snapshot has the shape of the ACP RFD "Quotas and Limits" (``quota_update`` and
``quota/read``): one pool ``plan`` whose meters are the windows, in the order the provider sent them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, UTC
from typing import Any

from zcode_acp.protocol.i18n import CATALOG, EN, t

PROVIDERS = {"zai": "https://api.z.ai", "bigmodel": "https://open.bigmodel.cn"}
QUOTA_PATH = "/api/monitor/usage/quota/limit"
WARNING_PERCENT = 80.0  # a meter at or above it is `warning`; the bridge tells the user once
ALERT_PERCENTS = (80.0, 95.0, 100.0)  # the levels whose crossing the user hears about
POOL_ID = "plan"


class QuotaUnavailable(Exception):
    """The provider gave no quota: ``reason`` is a catalog key (``quota.error.*``) the user reads."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason + (f": {detail}" if detail else ""))
        self.reason, self.detail = reason, detail


@dataclass(frozen=True)
class Meter:
    id: str  # five_hour, weekly, monthly, mcp_monthly, or <type>_<unit>_<number> for an unknown one
    window: str | None  # ISO 8601 duration: PT5H, P7D, P1M; None when the provider says nothing of it
    used_percent: float | None
    resets_at: datetime | None
    used: int | None = None
    limit: int | None = None
    remaining: int | None = None

    @property
    def status(self) -> str | None:
        if self.used_percent is None:
            return None
        if self.used_percent >= 100:
            return "exceeded"
        return "warning" if self.used_percent >= WARNING_PERCENT else "ok"


@dataclass(frozen=True)
class QuotaSnapshot:
    meters: tuple[Meter, ...]
    updated_at: datetime
    level: str | None = None  # the plan's name as the provider says it (lite, pro, max)

    @property
    def exhausted(self) -> Meter | None:
        """The meter that blocks use now (the first at 100 %), if any."""
        return next((m for m in self.meters if m.status == "exceeded"), None)


def quota_url(provider: str) -> str:
    return PROVIDERS[provider] + QUOTA_PATH


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _count(value: Any) -> int | None:
    number = _number(value)
    return int(number) if number is not None and number >= 0 and number == int(number) else None


def _reset_time(value: Any) -> datetime | None:
    """``nextResetTime`` is epoch milliseconds; a few answers carry an ISO string instead."""
    number = _number(value)
    if number is not None and number > 0:
        try:
            return datetime.fromtimestamp(number / 1000.0, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value.strip():
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def _window(kind: Any, unit: Any, number: Any) -> tuple[str, str | None]:
    given = _count(number)
    count = given or 1
    if kind == "TOKENS_LIMIT" and unit == 3:
        count = given or 5  # some answers leave ``number`` out: unit 3 is the plan's 5-hour window
        return ("five_hour" if count == 5 else f"hours_{count}"), f"PT{count}H"
    if kind == "TOKENS_LIMIT" and unit == 6:
        return ("weekly" if count == 1 else f"weeks_{count}"), f"P{7 * count}D"
    if kind == "TOKENS_LIMIT" and unit == 7:
        return ("monthly" if count == 1 else f"months_{count}"), f"P{count}M"
    if kind == "TIME_LIMIT":
        return "mcp_monthly", "P1M" if unit in (5, None) else None
    if kind == "TOKENS_LIMIT" and unit is None:  # an older plan: one token window, length unsaid
        return "tokens", None
    return f"{str(kind).lower()}_{unit}_{number}", None


def parse_quota(answer: Any, now: datetime) -> QuotaSnapshot:
    """The provider's decoded JSON answer as a snapshot; raises ``QuotaUnavailable`` when it has none."""
    if not isinstance(answer, dict):
        raise QuotaUnavailable("quota.error.shape")
    code = answer.get("code")
    if answer.get("success") is False or (isinstance(code, int) and code not in (0, 200)):
        said = answer.get("msg")
        message = said.lower() if isinstance(said, str) else ""
        if code == 401 or ("token" in message and "expired" in message):
            raise QuotaUnavailable("quota.error.key_refused")
        if "coding plan" in message or "套餐" in message:
            raise QuotaUnavailable("quota.error.no_plan")
        raise QuotaUnavailable("quota.error.provider", str(code))
    data = answer.get("data")
    limits = data.get("limits") if isinstance(data, dict) else None
    if not isinstance(limits, list):
        raise QuotaUnavailable("quota.error.shape")
    meters: list[Meter] = []
    seen: set[str] = set()
    for entry in limits:
        if not isinstance(entry, dict):
            continue  # the RFD: skip an invalid entry, keep the rest
        meter_id, window = _window(entry.get("type"), entry.get("unit"), entry.get("number"))
        if meter_id in seen:
            continue
        percent = _number(entry.get("percentage"))
        used, limit = _count(entry.get("currentValue")), _count(entry.get("usage"))
        if percent is None and used is None:
            continue  # a meter carries at least one value (the RFD)
        seen.add(meter_id)
        meters.append(Meter(meter_id, window, percent, _reset_time(entry.get("nextResetTime")),
                            used, limit, _count(entry.get("remaining"))))
    level = data.get("level") if isinstance(data, dict) and isinstance(data.get("level"), str) else None
    return QuotaSnapshot(tuple(meters), now, level)


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def meter_label(meter: Meter, lang: str) -> str:
    key = f"quota.window.{meter.id}"
    return t(lang, key) if key in CATALOG[EN] else meter.id.replace("_", " ")


def snapshot_json(snapshot: QuotaSnapshot, lang: str) -> dict[str, Any]:
    """The RFD's ``QuotaSnapshot``: ``{updatedAt, pools: [{id, label, state, meters}]}``."""
    meters = []
    for meter in snapshot.meters:
        item: dict[str, Any] = {"id": meter.id, "label": meter_label(meter, lang)}
        if meter.used_percent is not None:
            item["usedPercent"] = meter.used_percent
        for name, value in (("used", meter.used), ("limit", meter.limit), ("remaining", meter.remaining)):
            if value is not None:
                item[name] = {"value": str(value)}  # the provider names no unit: none is guessed
        if meter.window:
            item["window"] = meter.window
        if meter.resets_at:
            item["resetsAt"] = rfc3339(meter.resets_at)
        if meter.status:
            item["status"] = meter.status
        meters.append(item)
    pool: dict[str, Any] = {"id": POOL_ID, "label": t(lang, "quota.pool"), "meters": meters}
    if any(m.used_percent is not None for m in snapshot.meters):
        pool["state"] = "exhausted" if snapshot.exhausted else "available"
    return {"updatedAt": rfc3339(snapshot.updated_at), "pools": [pool]}


def reset_words(moment: datetime | None, now: datetime, lang: str) -> str:
    """"resets at 18:00 (in 2 h 5 min)" in the reader's language and local time."""
    if moment is None:
        return t(lang, "quota.reset.unknown")
    left = max(0, int((moment - now).total_seconds()))
    days, rest = divmod(left, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = max(1, rest // 60) if left else 0
    if days:
        span = t(lang, "quota.span.days", days=days, hours=hours)
    elif hours:
        span = t(lang, "quota.span.hours", hours=hours, minutes=minutes)
    else:
        span = t(lang, "quota.span.minutes", minutes=minutes)
    local = moment.astimezone()
    when = local.strftime("%H:%M") if days == 0 else local.strftime("%Y-%m-%d %H:%M")
    return t(lang, "quota.reset.at", when=when, span=span)


def meter_line(meter: Meter, now: datetime, lang: str) -> str:
    """One line per window: "5-hour window: 42% used, resets at 18:00 (in 2 h 5 min)"."""
    used = t(lang, "quota.used", percent=f"{meter.used_percent:g}") if meter.used_percent is not None \
        else t(lang, "quota.used_count", used=meter.used)
    return t(lang, "quota.line", label=meter_label(meter, lang), used=used,
             reset=reset_words(meter.resets_at, now, lang))


def crossed(before: QuotaSnapshot | None, after: QuotaSnapshot) -> list[tuple[Meter, float]]:
    """The meters of ``after`` that reached an alert level (80, 95, 100 %) above ``before``'s.

    A first snapshot counts as crossing from 0, so a session that starts at 96 % is told once; a
    window that reset (a lower share) is quiet, and re-arms its levels.
    """
    earlier = {m.id: m.used_percent or 0.0 for m in before.meters} if before else {}
    found = []
    for meter in after.meters:
        if meter.used_percent is None:
            continue
        reached = [level for level in ALERT_PERCENTS if meter.used_percent >= level > earlier.get(meter.id, 0.0)]
        if reached:
            found.append((meter, reached[-1]))
    return found


def exhausted_text(snapshot: QuotaSnapshot, now: datetime, lang: str) -> str | None:
    """What a turn stopped by the limit says: which window, and when it resets."""
    meter = snapshot.exhausted
    if meter is None:
        return None
    return t(lang, "quota.exhausted", label=meter_label(meter, lang),
             reset=reset_words(meter.resets_at, now, lang))


def quota_alert(meter: Meter, level: float, snapshot: QuotaSnapshot, now: datetime, lang: str) -> str:
    """The notice for a meter that reached ``level`` (80, 95 or 100 %): used up, or how far along."""
    if level >= 100:
        return t(lang, "quota.exhausted", label=meter_label(meter, lang), reset=reset_words(meter.resets_at, now, lang))
    return t(lang, "quota.alert", line=meter_line(meter, now, lang))


def wants_quota_updates(capabilities: Any) -> bool:
    """A v1 client that declared ``session.quota`` (the RFD's client capability): it reads ``quota_update``."""
    session = capabilities.get("session") if isinstance(capabilities, dict) else None
    return isinstance(session, dict) and isinstance(session.get("quota"), dict)


def quota_update(document: dict[str, Any]) -> dict[str, Any]:
    """The RFD's ``session/update`` variant: the whole snapshot, replacing the last one."""
    return {"sessionUpdate": "quota_update", **document}

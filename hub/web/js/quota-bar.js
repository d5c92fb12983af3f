// The plan's quota on the session page (docs/quota.md): one bar per window of the ACP "Quotas and
// Limits" snapshot (`quota/read`'s answer and `quota_update`), with its reset time. Labels come from
// the bridge (its language); the rest from i18n.js. A snapshot older than the one shown is ignored
// (the RFD's rule: `updatedAt`, not arrival order, says which is newer).

import { h, clear } from "./dom.js";
import { t } from "./i18n.js";

const WARNING = 80;
const DANGER = 95;

export class QuotaBar {
  constructor() {
    this.updatedAt = "";
    this.summary = h("summary");
    this.list = h("ul", { class: "quota-meters" });
    this.el = h("details", { class: "quota", hidden: true }, this.summary, this.list);
  }

  /** @param {{updatedAt?: string, pools?: Array<any>}} snapshot */
  show(snapshot) {
    if (!snapshot || typeof snapshot !== "object" || !Array.isArray(snapshot.pools)) return;
    const updatedAt = String(snapshot.updatedAt || "");
    if (this.updatedAt && updatedAt && updatedAt < this.updatedAt) return;
    this.updatedAt = updatedAt;
    clear(this.list);
    let top = null;
    let label = "";
    for (const pool of snapshot.pools) {
      if (!pool || !Array.isArray(pool.meters)) continue;
      label = label || String(pool.label || pool.id || "");
      for (const meter of pool.meters) {
        if (!meter || typeof meter.usedPercent !== "number") continue; // a meter without a share: no bar
        if (!top || meter.usedPercent > top.usedPercent) top = meter;
        this.list.append(meterRow(meter));
      }
    }
    this.el.hidden = !top;
    if (!top) return;
    this.summary.textContent = t("quota.summary", { label, percent: shown(top.usedPercent), window: String(top.label || top.id) });
    this.el.className = `quota ${level(top.usedPercent)}`;
  }
}

function meterRow(meter) {
  const percent = Math.max(0, meter.usedPercent);
  const bar = h("meter", { min: "0", max: "100", low: String(WARNING), high: String(DANGER), optimum: "0",
    value: String(Math.min(100, percent)), "aria-label": String(meter.label || meter.id) });
  const reset = meter.resetsAt ? t("quota.resets", { time: resetTime(meter.resetsAt) }) : "";
  return h("li", { class: `quota-meter ${level(percent)}`, dataset: { meterId: String(meter.id) } },
    h("span", { class: "quota-label" }, String(meter.label || meter.id)),
    h("span", { class: "quota-figure" }, t("quota.used", { percent: shown(percent) })),
    bar,
    reset ? h("span", { class: "quota-reset" }, reset) : null);
}

function shown(percent) {
  return String(Math.round(percent * 10) / 10);
}

function level(percent) {
  return percent >= 100 ? "exceeded" : percent >= WARNING ? "warning" : "ok";
}

function resetTime(value) {
  const when = new Date(value);
  if (Number.isNaN(when.getTime())) return "";
  const sameDay = when.toDateString() === new Date().toDateString();
  return sameDay
    ? when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
    : when.toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

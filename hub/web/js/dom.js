// Building DOM nodes without HTML strings (docs/web-client.md, "Security").
// Text always goes in through textContent / text nodes, attributes through
// setAttribute: nothing here parses markup, so model output can never become
// an element or a script.

import { t } from "./i18n.js";

/**
 * Create an element.
 * @param {string} tag
 * @param {Record<string, any> | null} [attrs] class, dataset, on* handlers, properties or attributes
 * @param {...(Node | string | number | null | undefined | false | Array<any>)} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") el.className = String(value);
      else if (key === "text") el.textContent = String(value);
      else if (key === "dataset") Object.assign(el.dataset, value);
      else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
      else if (key === "value" || key === "checked" || key === "disabled" || key === "selected" || key === "open" || key === "hidden") el[key] = value;
      else el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

/** Append children: strings become text nodes, arrays are flattened, falsy values skipped. */
export function append(parent, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else if (child instanceof Node) parent.appendChild(child);
    else parent.appendChild(document.createTextNode(String(child)));
  }
  return parent;
}

/** Remove every child of a node. */
export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

/** Short relative time ("3 min ago") for an ISO date or epoch milliseconds. */
export function relativeTime(value) {
  const when = typeof value === "number" ? value : Date.parse(value);
  if (!Number.isFinite(when)) return "";
  const seconds = Math.round((Date.now() - when) / 1000);
  if (seconds < 45) return t("time.just_now");
  if (seconds < 3600) return t("time.minutes_ago", { minutes: Math.round(seconds / 60) });
  if (seconds < 86400) return `${Math.round(seconds / 3600)} h ago`;
  return new Date(when).toLocaleDateString();
}

/** "12.3k" style token counts. */
export function compactNumber(value) {
  if (typeof value !== "number" || !Number.isFinite(value)) return "?";
  if (value < 1000) return String(value);
  if (value < 1_000_000) return `${(value / 1000).toFixed(value < 10_000 ? 1 : 0)}k`;
  return `${(value / 1_000_000).toFixed(1)}M`;
}

// One tool call as a card: title, kind, status, and what the bridge put in it
// (text output, diffs, a streamed terminal). The fields and _meta keys are the
// ones docs/protocol-mapping.md lists ("Events → session/update"). Content
// replaces what the card shows; terminal output accumulates per terminal id.

import { h, clear, compactNumber } from "./dom.js";
import { t } from "./i18n.js";
import { lineDiff, foldContext } from "./diff.js";

// Plain symbols that common text fonts have (emoji fonts are not everywhere).
const KIND_ICONS = {
  read: "☰", edit: "✎", delete: "✕", move: "⇄", search: "⌕", execute: "▶",
  think: "…", fetch: "⇣", switch_mode: "⇆", other: "⚙",
};
const STATUSES = new Set(["pending", "in_progress", "completed", "failed"]); // each has its tool.status.* words
const TERMINAL_LIMIT = 256 * 1024; // characters kept per terminal; older output is dropped

// Escape sequences carry colours and cursor moves; shown raw they are noise.
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

export function cleanTerminalText(data) {
  return String(data).replace(ANSI, "").replace(/\r\n/g, "\n").replace(/\r/g, "\n");
}

export class ToolCard {
  constructor(toolCallId) {
    this.id = toolCallId;
    this.status = "pending";
    this.kind = "other";
    this.title = t("tool.title");
    this.rawInput = null;
    this.content = [];
    this.meta = {};
    this.terminals = new Map(); // terminal id → {pre, text, exit}
    this.iconEl = h("span", { class: "tool-icon", "aria-hidden": "true" });
    this.titleEl = h("span", { class: "tool-title" });
    this.statusEl = h("span", { class: "tool-status" });
    this.badgesEl = h("span", { class: "tool-badges" });
    this.bodyEl = h("div", { class: "tool-body" });
    this.el = h("details", { class: "tool-card", open: true, dataset: { toolCallId } },
      h("summary", null, this.iconEl, this.titleEl, this.badgesEl, this.statusEl),
      this.bodyEl);
  }

  /** Apply a `tool_call` or `tool_call_update` (only the fields present change). */
  apply(update) {
    if (typeof update.title === "string" && update.title) this.title = update.title;
    if (typeof update.kind === "string") this.kind = update.kind;
    if (typeof update.status === "string") this.status = update.status;
    if (update.rawInput !== undefined && update.rawInput !== null) this.rawInput = update.rawInput;
    if (Array.isArray(update.locations)) this.locations = update.locations;
    if (Array.isArray(update.content)) this.content = update.content;
    const meta = update._meta && typeof update._meta === "object" ? update._meta : {};
    for (const key of ["subagent", "background", "backgroundTask", "claudeCode"]) {
      if (meta[key] !== undefined) this.meta[key] = meta[key];
    }
    if (meta.terminal_info && meta.terminal_info.terminal_id) this.terminal(meta.terminal_info.terminal_id);
    if (meta.terminal_output && typeof meta.terminal_output.data === "string") {
      this.appendTerminal(meta.terminal_output.terminal_id || this.id, meta.terminal_output.data);
    }
    if (meta.terminal_exit) {
      const exit = meta.terminal_exit;
      this.terminal(exit.terminal_id || this.id).exit = exit.signal ? `signal ${exit.signal}` : `exit ${exit.exit_code}`;
    }
    this.render();
  }

  terminal(terminalId) {
    let terminal = this.terminals.get(terminalId);
    if (!terminal) {
      terminal = { pre: h("pre", { class: "terminal", dataset: { terminalId } }), text: "", exit: null };
      this.terminals.set(terminalId, terminal);
    }
    return terminal;
  }

  appendTerminal(terminalId, data) {
    const terminal = this.terminal(terminalId);
    terminal.text += cleanTerminalText(data);
    if (terminal.text.length > TERMINAL_LIMIT) terminal.text = `…${terminal.text.slice(-TERMINAL_LIMIT)}`;
    terminal.pre.textContent = terminal.text;
    terminal.pre.scrollTop = terminal.pre.scrollHeight;
  }

  render() {
    this.el.className = `tool-card status-${this.status} kind-${this.kind}`;
    this.iconEl.textContent = KIND_ICONS[this.kind] || KIND_ICONS.other;
    this.titleEl.textContent = this.title;
    this.statusEl.textContent = STATUSES.has(this.status) ? t(`tool.status.${this.status}`) : this.status;
    clear(this.badgesEl);
    if (this.meta.background) this.badgesEl.append(h("span", { class: "badge" }, t("tool.badge.background")));
    const sub = this.meta.subagent;
    if (sub && typeof sub === "object") {
      const parts = ["agent"];
      if (typeof sub.toolUses === "number") parts.push(`${sub.toolUses} tools`);
      if (typeof sub.tokens === "number") parts.push(`${compactNumber(sub.tokens)} tok`);
      this.badgesEl.append(h("span", { class: "badge" }, parts.join(" · ")));
    }
    clear(this.bodyEl);
    const command = this.rawInput && typeof this.rawInput.command === "string" ? this.rawInput.command : null;
    if (command && this.kind === "execute") this.bodyEl.append(h("div", { class: "tool-command" }, `$ ${command}`));
    if (this.locations && this.locations.length && this.kind !== "edit") {
      this.bodyEl.append(h("div", { class: "tool-locations" },
        this.locations.map((loc) => h("code", null, loc.line !== undefined && loc.line !== null ? `${loc.path}:${loc.line}` : loc.path))));
    }
    const shownTerminals = new Set();
    for (const item of this.content) {
      if (!item || typeof item !== "object") continue;
      if (item.type === "terminal") {
        const terminal = this.terminal(item.terminalId || this.id);
        shownTerminals.add(terminal);
        this.bodyEl.append(terminalBlock(terminal));
      } else if (item.type === "diff") {
        this.bodyEl.append(diffBlock(item));
      } else if (item.type === "content") {
        this.bodyEl.append(contentBlock(item.content));
      }
    }
    // Output that arrived for a terminal the content does not (yet) name is still shown.
    for (const terminal of this.terminals.values()) {
      if (!shownTerminals.has(terminal) && (terminal.text || terminal.exit)) this.bodyEl.append(terminalBlock(terminal));
    }
    if (!this.bodyEl.childNodes.length && this.rawInput && Object.keys(this.rawInput).length) {
      this.bodyEl.append(h("pre", { class: "tool-input" }, JSON.stringify(this.rawInput, null, 2)));
    }
  }
}

function terminalBlock(terminal) {
  return h("div", { class: "terminal-block" }, terminal.pre,
    terminal.exit ? h("div", { class: `terminal-exit ${terminal.exit === "exit 0" ? "ok" : "bad"}` }, terminal.exit) : null);
}

function contentBlock(block) {
  if (!block || typeof block !== "object") return null;
  if (block.type === "text") return h("pre", { class: "tool-text" }, block.text || "");
  if (block.type === "resource_link") return h("div", { class: "tool-text" }, `📎 ${block.name || block.uri}`);
  if (block.type === "resource" && block.resource) return h("pre", { class: "tool-text" }, block.resource.text || block.resource.uri || "");
  return h("div", { class: "tool-text" }, `[${block.type}]`);
}

function diffBlock(item) {
  const lines = foldContext(lineDiff(item.oldText, item.newText || ""));
  const added = lines.filter((line) => line.op === "+").length;
  const removed = lines.filter((line) => line.op === "-").length;
  return h("div", { class: "diff" },
    h("div", { class: "diff-path" }, h("code", null, item.path || "file"),
      h("span", { class: "diff-stat" }, item.oldText === null || item.oldText === undefined ? t("tool.new_file") : `+${added} −${removed}`)),
    h("pre", { class: "diff-lines" }, lines.map((line) =>
      h("span", { class: `diff-line ${line.op === "+" ? "add" : line.op === "-" ? "del" : line.op === "…" ? "fold" : "ctx"}` },
        line.op === "…" ? `⋯ ${line.text}` : `${line.op} ${line.text}`))));
}

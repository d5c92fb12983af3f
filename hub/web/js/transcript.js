// The conversation of one session: `session/update` payloads (replayed by
// `session/load` or live) become DOM nodes. Messages are grouped by messageId;
// agent text is rendered as Markdown through markdown.js (never as HTML).
// Session-level updates (plan, usage, title, modes, options, commands) are
// passed on as events for the session view's header.

import { h, clear } from "./dom.js";
import { t } from "./i18n.js";
import { renderMarkdown } from "./markdown.js";
import { ToolCard } from "./tool-card.js";

const NEAR_BOTTOM_PX = 96;

export class Transcript extends EventTarget {
  /** @param {HTMLElement} scroller the scrolling element that contains the transcript */
  constructor(scroller) {
    super();
    this.scroller = scroller;
    this.el = h("div", { class: "transcript", role: "log", "aria-live": "polite" });
    this.reset();
  }

  reset() {
    clear(this.el);
    this.messages = new Map(); // messageId → {kind, el, body, text}
    this.cards = new Map();
    this.last = null; // the last message entry, for chunks without a messageId
    this.dirty = new Set();
    this.frame = 0;
  }

  emit(name, detail) {
    this.dispatchEvent(new CustomEvent(name, { detail }));
  }

  /** Keep the view pinned to the newest content, unless the reader scrolled up. */
  mutate(change) {
    const s = this.scroller;
    const pinned = s.scrollHeight - s.scrollTop - s.clientHeight < NEAR_BOTTOM_PX;
    change();
    if (pinned) s.scrollTop = s.scrollHeight;
  }

  apply(update) {
    if (!update || typeof update !== "object") return;
    switch (update.sessionUpdate) {
      case "user_message_chunk": this.chunk("user", update); break;
      case "agent_message_chunk": this.chunk("agent", update); break;
      case "agent_thought_chunk": this.chunk("thought", update); break;
      case "tool_call":
      case "tool_call_update": this.toolCall(update); break;
      case "plan": this.emit("plan", Array.isArray(update.entries) ? update.entries : []); break;
      case "usage_update": this.emit("usage", update); break;
      case "quota_update": this.emit("quota", update); break;
      case "session_info_update": if (update.title !== undefined) this.emit("title", update.title); break;
      case "current_mode_update": this.emit("mode", update.currentModeId); break;
      case "config_option_update": this.emit("config", update.configOptions || []); break;
      case "available_commands_update": this.emit("commands", update.availableCommands || []); break;
      default: break; // unknown updates are ignored, as ACP asks of clients
    }
  }

  chunk(kind, update) {
    const block = update.content || {};
    const text = block.type === "text" ? String(block.text ?? "") : block.type ? `[${block.type}]` : "";
    const key = update.messageId ? `${kind}:${update.messageId}` : null;
    let entry = key ? this.messages.get(key) : null;
    if (!entry && !key && this.last && this.last.kind === kind && this.el.lastChild === this.last.el) entry = this.last;
    if (!entry) {
      entry = this.newEntry(kind);
      if (key) this.messages.set(key, entry);
    }
    entry.text += text;
    this.last = entry;
    this.dirty.add(entry);
    if (!this.frame) this.frame = requestAnimationFrame(() => this.flush());
  }

  newEntry(kind) {
    let el;
    let body;
    if (kind === "thought") {
      body = h("div", { class: "thought-text" });
      el = h("details", { class: "thought" }, h("summary", null, t("transcript.thinking")), body);
    } else {
      body = h("div", { class: "message-body" });
      el = h("div", { class: `message ${kind}` }, body);
    }
    const entry = { kind, el, body, text: "" };
    this.mutate(() => this.el.appendChild(el));
    return entry;
  }

  /** Render the messages that changed since the last frame (streaming re-renders once per frame). */
  flush() {
    this.frame = 0;
    const entries = [...this.dirty];
    this.dirty.clear();
    this.mutate(() => {
      for (const entry of entries) {
        clear(entry.body);
        // The user's messages are Markdown too (a pasted snippet, a list): rendered the same safe way.
        if (entry.kind === "agent" || entry.kind === "user") entry.body.appendChild(renderMarkdown(entry.text));
        else entry.body.textContent = entry.text;
      }
    });
  }

  toolCall(update) {
    if (typeof update.toolCallId !== "string") return;
    let card = this.cards.get(update.toolCallId);
    this.mutate(() => {
      if (!card) {
        card = new ToolCard(update.toolCallId);
        this.cards.set(update.toolCallId, card);
        this.el.appendChild(card.el);
        this.last = null; // text after a card starts a new message
      }
      card.apply(update);
    });
  }

  /** This page's own prompt (the bridge echoes it to the other clients only). */
  addOwnPrompt(text) {
    const entry = this.newEntry("user");
    entry.text = text;
    this.mutate(() => entry.body.appendChild(renderMarkdown(text)));
    this.last = null;
  }

  /** A line that is not model output: cancelled, connection lost, an error. */
  addNotice(text, tone = "info") {
    this.mutate(() => this.el.appendChild(h("div", { class: `notice ${tone}` }, text)));
    this.last = null;
  }

  scrollToEnd() {
    this.scroller.scrollTop = this.scroller.scrollHeight;
  }
}

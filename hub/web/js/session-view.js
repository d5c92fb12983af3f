// One open session: its own ACP connection through the hub, the transcript,
// the selectors, the plan, dialogs and the prompt box. After every
// (re)connection the session is loaded again (`session/load` replays the
// history into a fresh transcript), so a network drop loses nothing.

import { h, clear, compactNumber } from "./dom.js";
import { t } from "./i18n.js";
import { AcpClient } from "./acp-client.js";
import { ConnectionLost, RpcError } from "./rpc.js";
import { Transcript } from "./transcript.js";
import { ConfigBar } from "./config-bar.js";
import { QuotaBar } from "./quota-bar.js";
import { FileBrowser } from "./file-view.js";
import { permissionDialog, elicitationDialog } from "./dialogs.js";
import { acpUrl, Unauthorized } from "./hub-api.js";

const STOP_REASONS = {
  cancelled: t("stop.cancelled"),
  max_tokens: t("stop.max_tokens"),
  max_turn_requests: t("stop.max_turn_requests"),
  refusal: t("stop.refusal"),
};
const REMOTE_ACTIVITY_MS = 15_000; // another client's turn looks running this long after its last update

export class SessionView {
  /**
   * @param {{instance: object, sessionId: string | null, token: string,
   *          findInstance: (attempt: number, sessionId: string | null, instance: object) => Promise<object>,
   *          onBack: () => void, onUnauthorized: () => void,
   *          onSessionId: (instance: object, sessionId: string) => void}} options
   */
  constructor(options) {
    this.options = options;
    this.instance = options.instance;
    this.sessionId = options.sessionId;
    const listed = (this.instance.sessions || []).find((s) => s.sessionId === this.sessionId);
    this.title = listed && listed.title ? listed.title : "";
    this.ownTurns = 0;
    this.remoteTimer = 0;
    this.dialogs = new Map();
    this.commands = [];
    this.loaded = false;
    this.connections = 0;
    this.build();
  }

  build() {
    this.titleEl = h("div", { class: "session-title" });
    this.renameButton = h("button", { type: "button", class: "rename", "aria-label": t("session.rename.label"), title: t("session.rename.title"), onclick: () => this.startRename() }, "✎");
    this.renameInput = h("input", { class: "rename-input", "aria-label": t("session.rename.input"), maxlength: "200", enterkeyhint: "done" });
    this.renameForm = h("form", { class: "rename-form", hidden: true, onsubmit: (event) => { event.preventDefault(); this.rename(); } },
      this.renameInput,
      h("button", { type: "submit", class: "rename-save" }, t("session.rename.save")),
      h("button", { type: "button", class: "rename-cancel", onclick: () => this.endRename() }, t("session.rename.cancel")));
    this.workspaceEl = h("div", { class: "session-workspace" });
    this.stateEl = h("span", { class: "conn-state", role: "status" });
    this.usageEl = h("span", { class: "usage", hidden: true });
    this.quotaBar = new QuotaBar();
    this.files = new FileBrowser({
      list: (path) => this.client.listFiles(this.sessionId, path),
      read: (path) => this.client.readFile(this.sessionId, path),
      changes: () => this.client.fileChanges(this.sessionId),
    }, () => this.files.hide());
    this.filesButton = h("button", { type: "button", class: "files-button", "aria-label": t("files.open"), title: t("files.open"),
      onclick: () => { if (this.loaded) this.files.show(); } }, "📁");
    this.menuButton = h("button", { type: "button", class: "session-menu-button", "aria-label": t("session.menu.label"),
      title: t("session.menu.label"), "aria-expanded": "false", onclick: () => this.toggleMenu() }, "⋯");
    this.deleteQuestion = h("div", { class: "delete-confirm", role: "alertdialog", hidden: true, "aria-label": t("session.delete.question") },
      h("p", null, t("session.delete.question")),
      h("div", { class: "row" },
        h("button", { type: "button", class: "delete-keep", onclick: () => this.closeMenu() }, t("session.delete.keep")),
        h("button", { type: "button", class: "delete-confirm-button danger", onclick: () => this.remove("delete") }, t("session.delete.confirm"))));
    this.menuEl = h("div", { class: "session-menu", hidden: true },
      h("button", { type: "button", class: "archive", onclick: () => this.remove("archive") }, t("session.archive")),
      h("button", { type: "button", class: "delete danger", onclick: () => this.askDelete() }, t("session.delete")),
      this.deleteQuestion);
    this.configBar = new ConfigBar((change) => this.changeConfig(change));
    this.planSummary = h("summary");
    this.planList = h("ol", { class: "plan-entries" });
    this.planEl = h("details", { class: "plan", hidden: true }, this.planSummary, this.planList);
    this.scroller = h("main", { class: "scroller" });
    this.transcript = new Transcript(this.scroller);
    this.scroller.append(this.transcript.el);
    this.dialogsEl = h("div", { class: "dialogs" });
    this.commandsEl = h("div", { class: "commands", hidden: true });
    this.input = h("textarea", { class: "prompt-input", rows: "1", placeholder: t("session.placeholder"), "aria-label": t("session.prompt"), enterkeyhint: "send" });
    this.sendButton = h("button", { type: "submit", class: "send", "aria-label": t("session.send") }, t("session.send"));
    this.cancelButton = h("button", { type: "button", class: "cancel", "aria-label": t("session.stop.label"), disabled: true, onclick: () => this.cancel() }, t("session.stop"));
    this.statusEl = h("div", { class: "composer-status" });
    const composer = h("form", { class: "composer", onsubmit: (event) => { event.preventDefault(); this.send(); } },
      this.commandsEl,
      h("div", { class: "composer-row" }, this.input, this.cancelButton, this.sendButton),
      this.statusEl);
    this.input.addEventListener("input", () => { this.autosize(); this.showCommands(); });
    this.input.addEventListener("keydown", (event) => {
      const fine = window.matchMedia("(pointer: fine)").matches;
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey || (fine && !event.shiftKey && !event.isComposing))) {
        event.preventDefault();
        this.send();
      }
    });
    this.el = h("div", { class: "view session-view" },
      h("header", { class: "topbar" },
        h("button", { type: "button", class: "back", "aria-label": t("session.back"), onclick: () => this.options.onBack() }, "‹"),
        h("div", { class: "session-heading" }, h("div", { class: "session-title-row" }, this.titleEl, this.renameButton), this.renameForm, this.workspaceEl),
        this.usageEl, this.filesButton, this.menuButton, this.stateEl),
      this.menuEl,
      h("div", { class: "session-tools" }, this.configBar.el, this.planEl, this.quotaBar.el),
      this.scroller, this.dialogsEl, composer, this.files.el);
    this.transcript.addEventListener("plan", (event) => this.showPlan(event.detail));
    this.transcript.addEventListener("usage", (event) => this.showUsage(event.detail));
    this.transcript.addEventListener("quota", (event) => this.quotaBar.show(event.detail));
    this.transcript.addEventListener("title", (event) => this.setTitle(event.detail));
    this.transcript.addEventListener("mode", (event) => this.configBar.setCurrentMode(event.detail));
    this.transcript.addEventListener("config", (event) => this.configBar.setOptions(event.detail));
    this.transcript.addEventListener("commands", (event) => { this.commands = event.detail; this.showCommands(); });
    this.setTitle(null);
    this.workspaceEl.textContent = shortPath(this.instance.workspace || "");
    this.workspaceEl.title = this.instance.workspace || "";
    this.updateButtons();
  }

  setTitle(title) {
    if (title) this.title = title;
    this.titleEl.textContent = this.title || (this.sessionId ? t("session.title") : t("session.new"));
  }

  startRename() {
    if (!this.sessionId || !this.loaded) return;
    this.renameInput.value = this.title;
    this.renameForm.hidden = false;
    this.renameInput.focus();
    this.renameInput.select();
  }

  endRename() {
    this.renameForm.hidden = true;
  }

  async rename() {
    const title = this.renameInput.value.trim();
    if (!title || title === this.title) { this.endRename(); return; }
    try {
      const result = await this.client.renameSession(this.sessionId, title);
      this.setTitle(result && result.title ? result.title : title);
      this.endRename();
    } catch (error) {
      const message = error instanceof RpcError || error instanceof ConnectionLost ? error.message : String(error);
      this.transcript.addNotice(t("session.rename.failed", { message }), "error");
    }
  }

  toggleMenu() {
    if (this.menuEl.hidden) {
      if (!this.sessionId || !this.loaded) return;
      this.menuEl.hidden = false;
      this.menuButton.setAttribute("aria-expanded", "true");
    } else {
      this.closeMenu();
    }
  }

  closeMenu() {
    this.menuEl.hidden = true;
    this.deleteQuestion.hidden = true;
    this.menuButton.setAttribute("aria-expanded", "false");
  }

  askDelete() {
    this.deleteQuestion.hidden = false; // deleting is final: asked on the page, not sent yet
  }

  /** Archive or delete this session over the page's own connection, then back to the list without it. */
  async remove(how) {
    const sessionId = this.sessionId;
    try {
      if (how === "delete") await this.client.deleteSession(sessionId);
      else await this.client.archiveSession(sessionId);
    } catch (error) {
      const message = error instanceof RpcError || error instanceof ConnectionLost ? error.message : String(error);
      this.closeMenu();
      this.transcript.addNotice(t(how === "delete" ? "session.delete.failed" : "session.archive.failed", { message }), "error");
      return;
    }
    this.closeMenu();
    if (this.options.onRemoved) this.options.onRemoved(this.instance, sessionId);
    else this.options.onBack();
  }

  start() {
    this.client = new AcpClient(async (attempt) => {
      // After a couple of failures the bridge may have restarted under a new id: ask the hub again.
      if (attempt >= 2) {
        try {
          this.instance = await this.options.findInstance(attempt, this.sessionId, this.instance);
        } catch (error) {
          if (error instanceof Unauthorized) this.options.onUnauthorized(); // token rotated: ask for the new one
          throw error;
        }
      }
      return acpUrl(this.instance.id, this.options.token);
    });
    this.client.addEventListener("state", (event) => this.showState(event.detail));
    this.client.addEventListener("ready", () => this.onReady());
    this.client.addEventListener("failure", (event) => this.transcript.addNotice(event.detail.message, "error"));
    this.client.addEventListener("update", (event) => this.onUpdate(event.detail));
    this.client.addEventListener("permission", (event) => this.openPermission(event.detail));
    this.client.addEventListener("elicitation", (event) => this.openElicitation(event.detail));
    this.client.addEventListener("withdrawn", (event) => this.closeDialog(event.detail.requestId));
    this.client.start();
  }

  destroy() {
    clearTimeout(this.remoteTimer);
    if (this.client) this.client.stop();
  }

  showState({ state, delayMs, reason }) {
    const labels = {
      connecting: t("session.state.connecting"),
      open: t(this.loaded ? "session.state.live" : "session.state.loading"),
      closed: t("session.state.closed"),
    };
    let label = labels[state] || state;
    if (state === "waiting") label = t("session.offline", { seconds: Math.max(1, Math.round(delayMs / 1000)) });
    this.stateEl.textContent = label;
    this.stateEl.className = `conn-state ${state === "open" ? "ok" : state === "waiting" ? "bad" : "busy"}`;
    this.stateEl.title = reason || "";
    this.el.dataset.connection = state;
    if (state !== "open") {
      this.loaded = false;
      this.el.dataset.loaded = "false";
    }
    this.updateButtons();
  }

  async onReady() {
    this.connections += 1;
    const reconnect = this.connections > 1;
    try {
      let result;
      if (this.sessionId) {
        this.transcript.reset();
        this.clearDialogs();
        result = await this.client.loadSession(this.sessionId, this.instance.workspace);
      } else {
        result = await this.client.newSession(this.instance.workspace);
        this.sessionId = result.sessionId;
        this.options.onSessionId(this.instance, this.sessionId);
      }
      if (result.configOptions) this.configBar.setOptions(result.configOptions);
      if (result.modes) this.configBar.setModes(result.modes);
      this.loaded = true;
      this.el.dataset.loaded = "true";
      this.showState({ state: "open" });
      if (reconnect) this.transcript.addNotice(t("session.reconnected"), "info");
      if (this.client.hasQuota) this.readQuota();
      this.transcript.scrollToEnd();
    } catch (error) {
      if (error instanceof ConnectionLost) return; // the next connection loads again
      this.transcript.addNotice(t("session.open_failed", { message: error.message }), "error");
      this.stateEl.textContent = t("session.error");
    }
  }

  onUpdate(params) {
    if (params.sessionId !== this.sessionId) return; // another session on the same bridge
    const kind = params.update && params.update.sessionUpdate;
    if (this.loaded && !this.ownTurns && (kind === "agent_message_chunk" || kind === "tool_call" || kind === "tool_call_update" || kind === "agent_thought_chunk")) {
      // A turn started by another client (the editor, another phone): it can be cancelled from here too.
      clearTimeout(this.remoteTimer);
      this.remoteActive = true;
      this.remoteTimer = setTimeout(() => { this.remoteActive = false; this.updateButtons(); }, REMOTE_ACTIVITY_MS);
      this.updateButtons();
    }
    this.transcript.apply(params.update);
  }

  updateButtons() {
    const ready = this.loaded && this.client && this.client.rpc.state === "open";
    this.sendButton.disabled = !ready;
    this.cancelButton.disabled = !ready || !(this.ownTurns > 0 || this.remoteActive);
    this.el.dataset.running = String(this.ownTurns > 0);
  }

  autosize() {
    this.input.style.height = "auto";
    this.input.style.height = `${Math.min(this.input.scrollHeight, 160)}px`;
  }

  showCommands() {
    clear(this.commandsEl);
    const text = this.input.value;
    const match = /^\/(\S*)$/.exec(text);
    const found = match ? this.commands.filter((c) => c && typeof c.name === "string" && c.name.startsWith(match[1])) : [];
    for (const command of found.slice(0, 8)) {
      this.commandsEl.append(h("button", {
        type: "button", class: "command", title: command.description || "",
        onclick: () => { this.input.value = `/${command.name} `; this.input.focus(); this.showCommands(); },
      }, `/${command.name}`));
    }
    this.commandsEl.hidden = !found.length;
  }

  async send() {
    const text = this.input.value;
    if (!text.trim() || this.sendButton.disabled) return;
    this.input.value = "";
    this.autosize();
    this.showCommands();
    this.transcript.addOwnPrompt(text);
    this.transcript.scrollToEnd();
    this.ownTurns += 1;
    this.remoteActive = false;
    this.updateButtons();
    this.statusEl.textContent = t("session.working");
    try {
      const result = await this.client.prompt(this.sessionId, text);
      const reason = result && result.stopReason;
      if (reason && reason !== "end_turn") this.transcript.addNotice(STOP_REASONS[reason] || `Stopped: ${reason}.`, reason === "cancelled" ? "info" : "warn");
      this.statusEl.textContent = turnUsage(result && result.usage);
    } catch (error) {
      if (error instanceof ConnectionLost) {
        this.transcript.addNotice(t("session.lost_during_turn"), "warn");
        this.statusEl.textContent = "";
      } else {
        const code = error instanceof RpcError ? ` (${error.code})` : "";
        this.transcript.addNotice(`Error${code}: ${error.message}`, "error");
        this.statusEl.textContent = "";
      }
    } finally {
      this.ownTurns -= 1;
      this.updateButtons();
    }
  }

  cancel() {
    try {
      this.client.cancel(this.sessionId);
      this.statusEl.textContent = t("session.cancelling");
    } catch {
      this.transcript.addNotice(t("session.cancel_not_sent"), "warn");
    }
  }

  async changeConfig(change) {
    try {
      if (change.modeId !== undefined) {
        await this.client.setMode(this.sessionId, change.modeId);
        this.configBar.setCurrentMode(change.modeId);
      } else {
        const result = await this.client.setConfigOption(this.sessionId, change.configId, change.value);
        if (result && Array.isArray(result.configOptions)) this.configBar.setOptions(result.configOptions);
      }
    } catch (error) {
      this.transcript.addNotice(t("session.change_failed", { what: change.configId || "mode", message: error.message }), "error");
    }
  }

  showPlan(entries) {
    clear(this.planList);
    const done = entries.filter((e) => e.status === "completed").length;
    // The step under way, else the next one to do: a plan between two steps still shows where it is.
    const current = entries.find((e) => e.status === "in_progress") || entries.find((e) => e.status === "pending");
    this.planSummary.textContent = `${t("session.plan", { done, total: entries.length })}${current ? ` · ${current.content}` : ""}`;
    for (const entry of entries) {
      this.planList.append(h("li", { class: `plan-entry ${entry.status}`, dataset: { priority: entry.priority || "" } },
        h("span", { class: "plan-mark", "aria-hidden": "true" }, entry.status === "completed" ? "✓" : entry.status === "in_progress" ? "◐" : "○"),
        h("span", null, entry.content)));
    }
    this.planEl.hidden = !entries.length;
  }

  async readQuota() {
    try {
      this.quotaBar.show(await this.client.readQuota(this.sessionId));
    } catch (error) {
      // Quota unknown (the RFD: only the quota block is affected): the bar stays as it was.
    }
  }

  showUsage(update) {
    if (typeof update.used !== "number" || typeof update.size !== "number" || update.size <= 0) return;
    const percent = Math.round((100 * update.used) / update.size);
    this.usageEl.textContent = `${percent}%`;
    this.usageEl.title = t("session.usage.title", { used: compactNumber(update.used), size: compactNumber(update.size) });
    this.usageEl.className = `usage ${percent >= 80 ? "high" : ""}`;
    this.usageEl.hidden = false;
  }

  openPermission({ id, params }) {
    if (params.sessionId !== this.sessionId) return;
    this.showDialog(id, permissionDialog(params, (optionId) => {
      this.client.answerPermission(id, optionId);
      this.closeDialog(id);
    }));
  }

  openElicitation({ id, params }) {
    if (params.sessionId !== undefined && params.sessionId !== this.sessionId) return;
    this.showDialog(id, elicitationDialog(params, (result) => {
      this.client.answerElicitation(id, result);
      this.closeDialog(id);
    }));
  }

  showDialog(id, el) {
    this.closeDialog(id);
    el.dataset.requestId = String(id);
    this.dialogs.set(id, el);
    this.dialogsEl.append(el);
    this.transcript.scrollToEnd();
  }

  closeDialog(id) {
    const el = this.dialogs.get(id);
    if (el) el.remove();
    this.dialogs.delete(id);
  }

  clearDialogs() {
    for (const id of [...this.dialogs.keys()]) this.closeDialog(id);
  }
}

/** The end of a path tells more than its root: "…/dev/demo-project". */
function shortPath(path) {
  const parts = path.split(/[\\/]/).filter(Boolean);
  return parts.length > 2 ? `…/${parts.slice(-2).join("/")}` : path;
}

function turnUsage(usage) {
  if (!usage || typeof usage !== "object") return "";
  return t("session.last_turn", { input: compactNumber(usage.inputTokens), output: compactNumber(usage.outputTokens) });
}

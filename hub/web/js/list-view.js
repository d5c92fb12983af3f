// The start page: token entry, then every live bridge the hub knows with its
// sessions, "new session" per project, and "open a project" (the hub starts a
// headless bridge for a folder under its configured project roots; "New session" also opens a new
// session there).

import { h, clear, relativeTime } from "./dom.js";
import { t, setLanguage, otherLanguage } from "./i18n.js";

export class ListView {
  /**
   * @param {{onToken: (token: string) => void, onForget: () => void, onRefresh: () => void,
   *          onOpen: (instance: object, sessionId: string) => void, onNew: (instance: object) => void,
   *          onStart: (cwd: string) => Promise<boolean>, onStartSession: (cwd: string) => Promise<boolean>}} actions
   */
  constructor(actions) {
    this.actions = actions;
    this.messageEl = h("div", { class: "banner", hidden: true, role: "alert" });
    this.tokenInput = h("input", { type: "password", id: "token", name: "token", autocomplete: "current-password", placeholder: "ZCODE_ACP_REMOTE_TOKEN", required: true });
    this.tokenForm = h("form", {
      class: "card token-form", hidden: true,
      onsubmit: (event) => { event.preventDefault(); if (this.tokenInput.value.trim()) actions.onToken(this.tokenInput.value.trim()); },
    },
    h("label", { for: "token", class: "field-label" }, t("list.token.label")),
    h("p", { class: "hint" }, t("list.token.hint")),
    this.tokenInput,
    h("button", { type: "submit", class: "primary" }, t("list.token.connect")));
    // Built once: the periodic refresh re-renders the instances only, never what the user is typing.
    this.instancesEl = h("div", { class: "instances" });
    const path = h("input", { type: "text", id: "project-path", placeholder: "/path/to/project", autocapitalize: "off", spellcheck: "false" });
    this.startForm = h("form", {
      class: "card start-form",
      onsubmit: async (event) => {
        event.preventDefault();
        if (path.value.trim() && (await actions.onStart(path.value.trim()))) path.value = "";
      },
    }, h("label", { for: "project-path", class: "field-label" }, t("list.open.label")),
    h("div", { class: "row" }, path, h("button", { type: "submit" }, t("list.open.start")),
      // The bridge for the folder (started, or the one already there), and a new session in it at once.
      h("button", { type: "button", class: "start-session", onclick: async () => { if (path.value.trim() && (await actions.onStartSession(path.value.trim()))) path.value = ""; } },
        t("list.open.session"))));
    this.signedIn = h("div", { hidden: true }, this.instancesEl, this.startForm,
      h("button", { type: "button", class: "link forget", onclick: () => actions.onForget() }, t("list.forget")));
    this.el = h("div", { class: "view list-view" },
      h("header", { class: "topbar" },
        h("div", { class: "brand" }, "ZCode"),
        h("button", { type: "button", class: "link lang-switch", lang: otherLanguage(), "aria-label": t("lang.switch.label"),
          onclick: () => setLanguage(otherLanguage()) }, t("lang.switch")),
        h("button", { type: "button", class: "icon refresh", "aria-label": t("list.refresh"), onclick: () => actions.onRefresh() }, "↻")),
      h("main", { class: "scroller list-scroller" }, this.messageEl, this.tokenForm, this.signedIn));
  }

  showMessage(text, tone = "error") {
    this.messageEl.textContent = text || "";
    this.messageEl.className = `banner ${tone}`;
    this.messageEl.hidden = !text;
  }

  showTokenForm(problem) {
    this.showMessage(problem || "");
    this.signedIn.hidden = true;
    this.tokenForm.hidden = false;
    this.tokenInput.focus();
  }

  showInstances(instances) {
    this.showMessage("");
    this.tokenForm.hidden = true;
    this.signedIn.hidden = false;
    clear(this.instancesEl);
    if (!instances.length) {
      this.instancesEl.append(h("p", { class: "empty" }, t("list.no_bridge")));
    }
    const sorted = [...instances].sort((a, b) => String(a.workspace).localeCompare(String(b.workspace)));
    for (const instance of sorted) this.instancesEl.append(this.instanceCard(instance));
  }

  instanceCard(instance) {
    const gone = this.gone || new Set();
    const sessions = (Array.isArray(instance.sessions) ? instance.sessions : []).filter((s) => !gone.has(s.sessionId));
    sessions.sort((a, b) => String(b.updatedAt || "").localeCompare(String(a.updatedAt || "")));
    const name = String(instance.workspace || "").split(/[\\/]/).filter(Boolean).pop() || instance.workspace || instance.id;
    return h("section", { class: "card instance", dataset: { instanceId: instance.id } },
      h("div", { class: "instance-head" },
        h("div", null,
          h("h2", null, name),
          h("div", { class: "path" }, instance.workspace || "")),
        h("span", { class: `badge origin-${instance.origin}` }, instance.origin === "editor" ? t("list.origin.editor") : t("list.origin.service"))),
      h("ul", { class: "sessions" }, sessions.map((session) => h("li", null,
        h("button", { type: "button", class: "session-row", dataset: { sessionId: session.sessionId }, onclick: () => this.actions.onOpen(instance, session.sessionId) },
          h("span", { class: `dot ${session.status === "running" ? "running" : ""}`, title: session.status || "" }),
          h("span", { class: "session-name" }, session.title || t("list.untitled")),
          h("span", { class: "when" }, relativeTime(session.updatedAt))))),
      sessions.length ? null : h("li", { class: "empty" }, t("list.no_sessions"))),
      h("button", { type: "button", class: "new-session", onclick: () => this.actions.onNew(instance) }, t("list.new_session")));
  }
}

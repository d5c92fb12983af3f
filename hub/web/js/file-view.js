// The project's files, read-only, over the bridge's `_zcode/files/*` (docs/web-client.md, "Files"):
// a folder's entries, a text file with syntax highlighting, and the working tree's changes as a
// diff. Highlighting is Prism's tokenizer (hub/web/vendor/prism/, loaded with data-manual): its
// tokens become spans through textContent, so a file's content can never become markup.

import { h, clear } from "./dom.js";
import { t } from "./i18n.js";

const LANGUAGES = {
  py: "python", js: "javascript", mjs: "javascript", cjs: "javascript", ts: "typescript", tsx: "typescript",
  jsx: "javascript", json: "json", md: "markdown", html: "markup", htm: "markup", xml: "markup", svg: "markup",
  css: "css", sh: "bash", bash: "bash", zsh: "bash", yml: "yaml", yaml: "yaml", c: "c", h: "c", cc: "cpp",
  cpp: "cpp", hpp: "cpp", go: "go", rs: "rust", java: "java", toml: "toml", diff: "diff", patch: "diff",
  sql: "sql", ini: "ini", cfg: "ini",
};
const NAMED = { Dockerfile: "docker", Makefile: "bash" };

export class FileBrowser {
  /** @param {{list: Function, read: Function, changes: Function}} api  @param {() => void} onClose */
  constructor(api, onClose) {
    this.api = api;
    this.pathEl = h("div", { class: "files-path" });
    this.body = h("div", { class: "files-body" });
    this.filesTab = h("button", { type: "button", class: "files-tab", "aria-pressed": "true", onclick: () => this.list(this.folder) }, t("files.tab.files"));
    this.changesTab = h("button", { type: "button", class: "files-tab", "aria-pressed": "false", onclick: () => this.changes() }, t("files.tab.changes"));
    this.el = h("section", { class: "files-panel", hidden: true, "aria-label": t("files.title") },
      h("header", { class: "files-header" },
        h("button", { type: "button", class: "files-close", "aria-label": t("files.close"), onclick: () => onClose() }, "✕"),
        this.filesTab, this.changesTab),
      this.pathEl, this.body);
    this.folder = null;
    this.root = null;
  }

  show() { this.el.hidden = false; if (!this.root) this.list(null); }
  hide() { this.el.hidden = true; }

  tab(which) {
    this.filesTab.setAttribute("aria-pressed", String(which === "files"));
    this.changesTab.setAttribute("aria-pressed", String(which === "changes"));
  }

  async run(job) {
    clear(this.body);
    this.body.append(h("p", { class: "files-note" }, t("files.loading")));
    try {
      const result = await job();
      clear(this.body);
      return result;
    } catch (error) {
      clear(this.body);
      this.body.append(h("p", { class: "files-note error" }, String(error.message || error)));
      return null;
    }
  }

  async list(path) {
    this.tab("files");
    const result = await this.run(() => this.api.list(path));
    if (!result) return;
    this.root = this.root || result.path;
    this.folder = result.path;
    this.pathEl.textContent = shortPath(result.path, this.root);
    const entries = h("ul", { class: "files-entries" });
    if (result.path !== this.root) {
      entries.append(entry("..", "dir", null, () => this.list(parent(result.path))));
    }
    for (const item of result.entries || []) {
      const target = join(result.path, item.name);
      const open = item.kind === "dir" ? () => this.list(target)
        : item.kind === "file" || item.kind === "link" ? () => this.read(target, item.kind) : null;
      entries.append(entry(item.name, item.kind, item.size, open));
    }
    this.body.append(entries);
    if (result.truncated) this.body.append(h("p", { class: "files-note" }, t("files.truncated")));
  }

  async read(path, kind) {
    this.tab("files");
    let result = await this.run(() => this.api.read(path));
    if (!result && kind === "link") {
      result = await this.run(() => this.api.list(path)); // a link to a folder
      if (result) { this.list(path); return; }
    }
    if (!result) return;
    this.pathEl.textContent = shortPath(result.path, this.root);
    this.body.append(
      h("button", { type: "button", class: "files-back", onclick: () => this.list(this.folder) }, t("files.back")),
      code(result.text, languageOf(result.path)));
  }

  async changes() {
    this.tab("changes");
    const result = await this.run(() => this.api.changes());
    if (!result) return;
    this.pathEl.textContent = t("files.changes.title");
    if (!result.git) {
      this.body.append(h("p", { class: "files-note" }, t("files.changes.no_git")));
      return;
    }
    if (!result.diff && !(result.untracked || []).length) {
      this.body.append(h("p", { class: "files-note" }, t("files.changes.none")));
      return;
    }
    if (result.diff) this.body.append(unifiedDiff(result.diff));
    if ((result.untracked || []).length) {
      this.body.append(h("h3", { class: "files-untracked-title" }, t("files.changes.untracked")),
        h("ul", { class: "files-untracked" }, ...result.untracked.map((name) => h("li", null, name))));
    }
    if (result.truncated) this.body.append(h("p", { class: "files-note" }, t("files.truncated")));
  }
}

function entry(name, kind, size, open) {
  const mark = kind === "dir" ? "📁" : kind === "file" ? "📄" : kind === "link" ? "↪" : "⛔";
  const label = h("span", { class: "files-name" }, name);
  const detail = typeof size === "number" ? h("span", { class: "files-size" }, bytes(size)) : null;
  const content = [h("span", { class: "files-mark", "aria-hidden": "true" }, mark), label, detail];
  return h("li", { class: `files-entry ${kind}`, dataset: { name } },
    open ? h("button", { type: "button", onclick: open }, ...content) : h("span", { class: "files-unopenable", title: t("files.unopenable") }, ...content));
}

/** Text as highlighted lines: Prism's tokens (when it knows the language) as spans, built as text. */
export function code(text, language) {
  const pre = h("pre", { class: "files-code", dataset: { language: language || "" } });
  const prism = window.Prism;
  const grammar = language && prism && prism.languages ? prism.languages[language] : null;
  if (!grammar) {
    pre.textContent = text;
    return pre;
  }
  appendTokens(pre, prism.tokenize(text, grammar));
  return pre;
}

function appendTokens(parent, tokens) {
  for (const token of Array.isArray(tokens) ? tokens : [tokens]) {
    if (typeof token === "string") {
      parent.append(document.createTextNode(token));
      continue;
    }
    const aliases = Array.isArray(token.alias) ? token.alias : token.alias ? [token.alias] : [];
    const span = h("span", { class: ["token", token.type, ...aliases].join(" ") });
    appendTokens(span, token.content);
    parent.append(span);
  }
}

function unifiedDiff(text) {
  const box = h("div", { class: "diff-lines files-diff" });
  for (const line of text.replace(/\n$/, "").split("\n")) {
    const kind = line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ") || line.startsWith("index ") ? "file"
      : line.startsWith("@@") ? "fold" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "same";
    box.append(h("span", { class: `diff-line ${kind}` }, line));
  }
  return box;
}

export function languageOf(path) {
  const name = String(path).split("/").pop() || "";
  if (NAMED[name]) return NAMED[name];
  const dot = name.lastIndexOf(".");
  return dot > 0 ? LANGUAGES[name.slice(dot + 1).toLowerCase()] || null : null;
}

function join(folder, name) { return folder.endsWith("/") ? folder + name : `${folder}/${name}`; }
function parent(path) { const cut = path.replace(/\/+$/, "").lastIndexOf("/"); return cut > 0 ? path.slice(0, cut) : "/"; }
function shortPath(path, root) {
  if (!root) return path;
  if (path === root) return root.split("/").pop() || root;
  return path.startsWith(`${root}/`) ? `${root.split("/").pop()}/${path.slice(root.length + 1)}` : path;
}
function bytes(size) {
  return size < 1024 ? `${size} B` : size < 1048576 ? `${(size / 1024).toFixed(1)} KiB` : `${(size / 1048576).toFixed(1)} MiB`;
}

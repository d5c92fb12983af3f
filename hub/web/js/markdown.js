// A small Markdown renderer that builds DOM nodes directly (docs/web-client.md,
// "Security"). Model output is untrusted: no string ever reaches innerHTML, raw
// HTML in the text stays text, and links are kept only for http(s) and mailto.
// Supported: headings, paragraphs, fenced and indented code, block quotes,
// nested lists (task boxes shown as text), tables, rules; inline code, bold,
// italic, strike-through, links, bare URLs, hard breaks.

import { h } from "./dom.js";

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;
const LIST_ITEM = /^( {0,12})([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_SEPARATOR = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;
const SAFE_SCHEMES = new Set(["http:", "https:", "mailto:"]);

/** Render Markdown text into a DocumentFragment. */
export function renderMarkdown(text) {
  const fragment = document.createDocumentFragment();
  for (const node of blocks(String(text ?? "").replace(/\r\n?/g, "\n").split("\n"), 0)) fragment.appendChild(node);
  return fragment;
}

function blocks(lines, depth) {
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) { i += 1; continue; }
    let match;
    if ((match = FENCE.exec(line))) {
      const fence = match[1];
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence)) body.push(lines[i++]);
      i += 1; // the closing fence (absent while a message is still streaming)
      out.push(codeBlock(body.join("\n"), match[2]));
      continue;
    }
    if (/^( {4}|\t)/.test(line) && depth === 0) {
      const body = [];
      while (i < lines.length && (/^( {4}|\t)/.test(lines[i]) || !lines[i].trim())) body.push(lines[i++].replace(/^( {4}|\t)/, ""));
      while (body.length && !body[body.length - 1].trim()) body.pop();
      out.push(codeBlock(body.join("\n"), ""));
      continue;
    }
    if ((match = HEADING.exec(line))) {
      out.push(h(`h${Math.min(6, match[1].length + 2)}`, { class: "md-h" }, inline(match[2])));
      i += 1;
      continue;
    }
    if (RULE.test(line)) { out.push(h("hr")); i += 1; continue; }
    if (QUOTE.test(line)) {
      const body = [];
      while (i < lines.length && lines[i].trim() && (match = QUOTE.exec(lines[i]) || { 1: lines[i] })) { body.push(match[1]); i += 1; }
      out.push(h("blockquote", null, blocks(body, depth + 1)));
      continue;
    }
    if (LIST_ITEM.test(line)) {
      const consumed = list(lines, i, depth);
      out.push(consumed.node);
      i = consumed.next;
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_SEPARATOR.test(lines[i + 1]) && lines[i + 1].includes("-")) {
      const consumed = table(lines, i);
      out.push(consumed.node);
      i = consumed.next;
      continue;
    }
    const body = [];
    while (i < lines.length && lines[i].trim() && !startsBlock(lines, i)) body.push(lines[i++]);
    if (!body.length) body.push(lines[i++]);
    out.push(h("p", null, inline(body.join("\n"))));
  }
  return out;
}

function startsBlock(lines, i) {
  const line = lines[i];
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || LIST_ITEM.test(line);
}

function codeBlock(code, language) {
  const el = h("code", null, code);
  if (language) el.dataset.language = language;
  return h("pre", { class: "md-code" }, el);
}

function indentOf(line) {
  return line.length - line.trimStart().length;
}

function list(lines, start, depth) {
  const first = LIST_ITEM.exec(lines[start]);
  const ordered = /\d/.test(first[2]);
  const baseIndent = first[1].length;
  const node = h(ordered ? "ol" : "ul");
  if (ordered && parseInt(first[2], 10) !== 1) node.setAttribute("start", String(parseInt(first[2], 10)));
  let i = start;
  while (i < lines.length) {
    const match = LIST_ITEM.exec(lines[i]);
    if (!match || match[1].length !== baseIndent || /\d/.test(match[2]) !== ordered) break;
    const body = [match[3]];
    const contentIndent = baseIndent + match[2].length + 1;
    i += 1;
    while (i < lines.length) {
      const line = lines[i];
      if (!line.trim()) {
        // A blank line continues the item only when indented content follows.
        if (i + 1 < lines.length && lines[i + 1].trim() && indentOf(lines[i + 1]) > baseIndent) { body.push(""); i += 1; continue; }
        break;
      }
      const nested = LIST_ITEM.exec(line);
      if (nested && nested[1].length <= baseIndent) break;
      if (!nested && indentOf(line) <= baseIndent && startsBlock(lines, i)) break;
      body.push(line.slice(Math.min(indentOf(line), contentIndent)));
      i += 1;
    }
    const item = h("li");
    const rendered = blocks(body, depth + 1);
    // Tight items: a lone paragraph is shown without its margins.
    for (const child of rendered) {
      if (child.tagName === "P" && rendered.length <= 2 && !body.includes("")) item.append(...child.childNodes);
      else item.appendChild(child);
    }
    node.appendChild(item);
  }
  return { node, next: i };
}

function splitRow(line) {
  let row = line.trim();
  if (row.startsWith("|")) row = row.slice(1);
  if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
}

function table(lines, start) {
  const header = splitRow(lines[start]);
  const aligns = splitRow(lines[start + 1]).map((cell) =>
    cell.startsWith(":") && cell.endsWith(":") ? "center" : cell.endsWith(":") ? "right" : "");
  const head = h("tr", null, header.map((cell, index) => h("th", { class: aligns[index] ? `align-${aligns[index]}` : null }, inline(cell))));
  const rows = [];
  let i = start + 2;
  while (i < lines.length && lines[i].trim() && lines[i].includes("|")) {
    const cells = splitRow(lines[i]);
    rows.push(h("tr", null, header.map((_, index) => h("td", { class: aligns[index] ? `align-${aligns[index]}` : null }, inline(cells[index] ?? "")))));
    i += 1;
  }
  return { node: h("div", { class: "md-table" }, h("table", null, h("thead", null, head), h("tbody", null, rows))), next: i };
}

/** A URL a link may point at, or null (javascript:, data:, relative paths… are refused). */
export function safeUrl(raw) {
  try {
    const url = new URL(String(raw).trim());
    return SAFE_SCHEMES.has(url.protocol) ? url.href : null;
  } catch {
    return null;
  }
}

function link(label, href) {
  const url = safeUrl(href);
  if (!url) return h("span", { class: "md-link-refused" }, label);
  return h("a", { href: url, target: "_blank", rel: "noopener noreferrer nofollow" }, label);
}

const PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/;

/** Inline Markdown → an array of nodes. */
export function inline(text) {
  const out = [];
  let buffer = "";
  const flush = () => { if (buffer) { out.push(document.createTextNode(buffer)); buffer = ""; } };
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    const rest = text.slice(i);
    if (ch === "\\" && i + 1 < text.length && PUNCTUATION.test(text[i + 1])) { buffer += text[i + 1]; i += 2; continue; }
    if (ch === "\\" && text[i + 1] === "\n") { flush(); out.push(h("br")); i += 2; continue; }
    if (ch === "\n") {
      flush();
      buffer = buffer.replace(/ +$/, "");
      out.push(h("br"));
      i += 1;
      continue;
    }
    if (ch === "`") {
      const run = /^`+/.exec(rest)[0];
      const end = closingRun(text, i + run.length, run.length);
      if (end > 0) {
        flush();
        out.push(h("code", null, codeSpanText(text.slice(i + run.length, end))));
        i = end + run.length;
        continue;
      }
      buffer += run; // no run of the same length closes it: the backticks are literal (CommonMark)
      i += run.length;
      continue;
    }
    const emphasis = /^(\*\*|__|~~|\*|_)/.exec(rest);
    if (emphasis) {
      const marker = emphasis[1];
      const wordInside = marker[0] === "_" && /\w/.test(text[i - 1] || "");
      const end = findClosing(text, marker, i + marker.length);
      if (!wordInside && end > i + marker.length && !/\s/.test(text[i + marker.length])) {
        flush();
        const tag = marker === "~~" ? "del" : marker.length === 2 ? "strong" : "em";
        out.push(h(tag, null, inline(text.slice(i + marker.length, end))));
        i = end + marker.length;
        continue;
      }
      buffer += marker;
      i += marker.length;
      continue;
    }
    if (ch === "[" || (ch === "!" && text[i + 1] === "[")) {
      const image = ch === "!";
      const parsed = /^!?\[((?:[^\[\]\\]|\\.)*)\]\(\s*<?([^\s<>()]+(?:\([^\s()]*\))?[^\s<>()]*)>?(?:\s+"[^"]*")?\s*\)/.exec(rest);
      if (parsed && !codeSpanCrosses(text, i, i + (image ? 2 : 1) + parsed[1].length)) {
        flush();
        // Images are not loaded (no remote requests from model text): a link stands in.
        out.push(link(image ? [`🖼 ${parsed[1] || "image"}`] : inline(parsed[1]), parsed[2]));
        i += parsed[0].length;
        continue;
      }
    }
    if (ch === "<") {
      const auto = /^<((?:https?|mailto):[^\s<>]+)>/.exec(rest);
      if (auto) { flush(); out.push(link(auto[1], auto[1])); i += auto[0].length; continue; }
    }
    if ((ch === "h" || ch === "H") && !/\w/.test(text[i - 1] || "")) {
      const bare = /^https?:\/\/[^\s<>"'`]+/i.exec(rest);
      if (bare) {
        const url = bare[0].replace(/[.,;:!?)\]'"]+$/, "");
        flush();
        out.push(link(url, url));
        i += url.length;
        continue;
      }
    }
    buffer += ch;
    i += 1;
  }
  flush();
  return out;
}

/**
 * Where the backtick run that closes a code span starts: the next run of exactly `length`
 * backticks (a longer or shorter run is part of the span's text); -1 when none does.
 */
function closingRun(text, from, length) {
  const runs = /`+/g;
  runs.lastIndex = from;
  for (let match = runs.exec(text); match; match = runs.exec(text)) {
    if (match[0].length === length) return match.index;
  }
  return -1;
}

/** A code span opened in text[from, to) and closed after it: it binds tighter than the link
 * whose label it would cut (CommonMark 6.1, example 342). */
function codeSpanCrosses(text, from, to) {
  const runs = /`+/g;
  runs.lastIndex = from;
  for (let match = runs.exec(text); match && match.index < to; match = runs.exec(text)) {
    const end = closingRun(text, match.index + match[0].length, match[0].length);
    if (end >= to) return true;
    if (end > 0) runs.lastIndex = end + match[0].length;
  }
  return false;
}

/** A code span's content: line endings become spaces; one space is stripped from each side
 * when both sides have one and the content is not all spaces (CommonMark 6.1). */
function codeSpanText(raw) {
  const text = raw.replace(/\r\n|\r|\n/g, " ");
  return /^ .*[^ ].* $/s.test(text) ? text.slice(1, -1) : text;
}

function findClosing(text, marker, from) {
  let i = from;
  while (i < text.length) {
    if (text[i] === "\\") { i += 2; continue; }
    if (text[i] === "`") {
      const run = /^`+/.exec(text.slice(i))[0];
      const end = closingRun(text, i + run.length, run.length);
      i = end > 0 ? end + run.length : i + run.length;
      continue;
    }
    if (text.startsWith(marker, i) && !/\s/.test(text[i - 1])) {
      // "**" must not close a "*" and vice versa.
      if (marker.length === 1 && text[i + 1] === marker) { i += 2; continue; }
      if (marker[0] === "_" && /\w/.test(text[i + marker.length] || "")) { i += 1; continue; }
      return i;
    }
    i += 1;
  }
  return -1;
}

// Line diff for tool cards' `diff` content ({path, oldText, newText}).
// A longest-common-subsequence table is exact and small enough for the edits an
// agent makes; past a size bound the old text is shown removed and the new one
// added, which is still correct, only coarser.

import { t } from "./i18n.js";

const MAX_CELLS = 400_000;
const CONTEXT = 3;

/**
 * @param {string | null | undefined} oldText
 * @param {string} newText
 * @returns {Array<{op: " " | "-" | "+", text: string}>}
 */
export function lineDiff(oldText, newText) {
  const a = lines(oldText);
  const b = lines(newText);
  if (!a.length) return b.map((text) => ({ op: "+", text }));
  if ((a.length + 1) * (b.length + 1) > MAX_CELLS) {
    return [...a.map((text) => ({ op: "-", text })), ...b.map((text) => ({ op: "+", text }))];
  }
  const width = b.length + 1;
  const table = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      table[i * width + j] = a[i] === b[j]
        ? table[(i + 1) * width + j + 1] + 1
        : Math.max(table[(i + 1) * width + j], table[i * width + j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) { out.push({ op: " ", text: a[i] }); i += 1; j += 1; }
    else if (table[(i + 1) * width + j] >= table[i * width + j + 1]) out.push({ op: "-", text: a[i++] });
    else out.push({ op: "+", text: b[j++] });
  }
  while (i < a.length) out.push({ op: "-", text: a[i++] });
  while (j < b.length) out.push({ op: "+", text: b[j++] });
  return out;
}

function lines(text) {
  if (!text) return [];
  const split = text.split("\n");
  if (split[split.length - 1] === "") split.pop(); // a final newline ends the last line, it adds none
  return split;
}

/** Long unchanged runs folded to a few lines of context around each change. */
export function foldContext(lines) {
  const out = [];
  let run = [];
  const flushRun = (atStart, atEnd) => {
    // Keep CONTEXT lines next to a change; a run touching neither side is all context.
    const keepHead = atStart ? 0 : CONTEXT;
    const keepTail = atEnd ? 0 : CONTEXT;
    if (run.length <= keepHead + keepTail + 1 || (atStart && atEnd)) out.push(...run);
    else {
      const hidden = run.length - keepHead - keepTail;
      out.push(...run.slice(0, keepHead));
      out.push({ op: "…", text: t(hidden === 1 ? "diff.unchanged.one" : "diff.unchanged.many", { count: hidden }) });
      out.push(...run.slice(run.length - keepTail));
    }
    run = [];
  };
  let seenChange = false;
  for (const line of lines) {
    if (line.op === " ") { run.push(line); continue; }
    if (run.length) flushRun(!seenChange, false);
    seenChange = true;
    out.push(line);
  }
  if (run.length) flushRun(!seenChange, true);
  return out;
}

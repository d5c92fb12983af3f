// Dialogs the agent opens: `session/request_permission` (one button per option)
// and `elicitation/create` forms built from the JSON-schema subset ACP allows
// (string, with oneOf/enum choices or free text; number; integer; boolean;
// multi-select arrays). What the bridge sends is in docs/interactions.md.
// Every label and message is text or safe Markdown, never HTML.

import { h } from "./dom.js";
import { t } from "./i18n.js";
import { renderMarkdown } from "./markdown.js";

const RADIO_LIMIT = 8; // more choices than this become a drop-down
let fieldCounter = 0;

/**
 * @param {object} params the request's params (toolCall, options)
 * @param {(optionId: string | null) => void} answer
 */
export function permissionDialog(params, answer) {
  const toolCall = params.toolCall || {};
  const rawInput = toolCall.rawInput && typeof toolCall.rawInput === "object" ? toolCall.rawInput : {};
  const options = Array.isArray(params.options) ? params.options : [];
  const details = [];
  if (typeof rawInput.command === "string") details.push(h("pre", { class: "dialog-command" }, `$ ${rawInput.command}`));
  for (const item of Array.isArray(toolCall.content) ? toolCall.content : []) {
    if (item && item.type === "content" && item.content && item.content.type === "text") {
      details.push(h("div", { class: "dialog-message markdown" }, renderMarkdown(item.content.text)));
    }
  }
  return h("section", { class: "dialog permission", role: "alertdialog", "aria-label": t("dialog.permission.label") },
    h("div", { class: "dialog-kicker" }, t("dialog.permission.kicker")),
    h("div", { class: "dialog-title" }, toolCall.title || t("dialog.permission.title")),
    details,
    h("div", { class: "dialog-actions" }, options.map((option) =>
      h("button", {
        type: "button",
        class: `option ${String(option.kind || "").startsWith("allow") ? "allow" : "reject"}`,
        dataset: { optionId: option.optionId },
        onclick: () => answer(option.optionId),
      }, option.name || option.optionId))));
}

/**
 * @param {object} params `elicitation/create` params in form mode
 * @param {(result: {action: string, content?: object}) => void} answer
 */
export function elicitationDialog(params, answer) {
  const schema = params.requestedSchema && typeof params.requestedSchema === "object" ? params.requestedSchema : {};
  const properties = schema.properties && typeof schema.properties === "object" ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const fields = Object.entries(properties).map(([key, property]) => field(key, property || {}, required.has(key)));
  const error = h("div", { class: "dialog-error", hidden: true });
  const form = h("form", { class: "dialog elicitation", "aria-label": t("dialog.form.label"), novalidate: true },
    h("div", { class: "dialog-kicker" }, schema.title || t("dialog.form.kicker")),
    params.message ? h("div", { class: "dialog-message markdown" }, renderMarkdown(params.message)) : null,
    fields.map((f) => f.el),
    error,
    h("div", { class: "dialog-actions" },
      h("button", { type: "submit", class: "option allow" }, t("dialog.submit")),
      h("button", { type: "button", class: "option reject", onclick: () => answer({ action: "decline" }) }, t("dialog.decline"))));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const content = {};
    for (const f of fields) {
      const problem = f.problem();
      if (problem) {
        error.textContent = problem;
        error.hidden = false;
        return;
      }
      const value = f.value();
      if (value !== undefined) content[f.key] = value;
    }
    answer({ action: "accept", content });
  });
  return form;
}

function choicesOf(property) {
  if (Array.isArray(property.oneOf)) return property.oneOf.filter((c) => c && typeof c.const === "string").map((c) => ({ value: c.const, label: c.title || c.const }));
  if (Array.isArray(property.enum)) return property.enum.filter((v) => typeof v === "string").map((v) => ({ value: v, label: v }));
  return null;
}

function field(key, property, isRequired) {
  const id = `field-${++fieldCounter}`;
  const title = property.title || key;
  const hint = property.description && property.description !== title ? h("div", { class: "field-hint" }, property.description) : null;
  const label = (forId) => h(forId ? "label" : "div", { class: "field-label", for: forId || null }, title, isRequired ? h("span", { class: "required" }, " *") : null);
  const missing = () => t("dialog.needs_answer", { title });

  if (property.type === "string" && choicesOf(property)) {
    const choices = choicesOf(property);
    if (choices.length > RADIO_LIMIT) {
      const select = h("select", { id }, h("option", { value: "" }, "—"),
        choices.map((c) => h("option", { value: c.value, selected: c.value === property.default }, c.label)));
      return { key, el: h("div", { class: "field" }, label(id), hint, select),
        value: () => select.value || undefined, problem: () => (isRequired && !select.value ? missing() : null) };
    }
    const radios = choices.map((c) => h("input", { type: "radio", name: id, value: c.value, checked: c.value === property.default }));
    const group = h("fieldset", { class: "field choices" }, h("legend", null, label(null)), hint,
      choices.map((c, index) => h("label", { class: "choice" }, radios[index], h("span", null, c.label))));
    const picked = () => { const r = radios.find((radio) => radio.checked); return r ? r.value : undefined; };
    return { key, el: group, value: picked, problem: () => (isRequired && picked() === undefined ? missing() : null) };
  }

  if (property.type === "array") {
    const items = property.items || {};
    const choices = Array.isArray(items.anyOf)
      ? items.anyOf.filter((c) => c && typeof c.const === "string").map((c) => ({ value: c.const, label: c.title || c.const }))
      : Array.isArray(items.enum) ? items.enum.map((v) => ({ value: String(v), label: String(v) })) : [];
    const defaults = new Set(Array.isArray(property.default) ? property.default : []);
    const boxes = choices.map((c) => h("input", { type: "checkbox", value: c.value, checked: defaults.has(c.value) }));
    const group = h("fieldset", { class: "field choices" }, h("legend", null, label(null)), hint,
      choices.map((c, index) => h("label", { class: "choice" }, boxes[index], h("span", null, c.label))));
    const picked = () => boxes.filter((box) => box.checked).map((box) => box.value);
    return {
      key, el: group,
      value: () => (picked().length || isRequired ? picked() : undefined),
      problem: () => {
        const count = picked().length;
        if (isRequired && !count) return missing();
        if (typeof property.minItems === "number" && count < property.minItems) return t("dialog.pick_at_least", { count: property.minItems, title });
        if (typeof property.maxItems === "number" && count > property.maxItems) return t("dialog.pick_at_most", { count: property.maxItems, title });
        return null;
      },
    };
  }

  if (property.type === "boolean") {
    const box = h("input", { type: "checkbox", id, checked: property.default === true });
    return { key, el: h("div", { class: "field boolean" }, h("label", { for: id, class: "choice" }, box, h("span", null, title)), hint),
      value: () => box.checked, problem: () => null };
  }

  if (property.type === "number" || property.type === "integer") {
    const input = h("input", { type: "number", id, inputmode: property.type === "integer" ? "numeric" : "decimal",
      step: property.type === "integer" ? "1" : "any", min: property.minimum ?? null, max: property.maximum ?? null,
      value: typeof property.default === "number" ? String(property.default) : "" });
    const parsed = () => (input.value.trim() === "" ? undefined : Number(input.value));
    return {
      key, el: h("div", { class: "field" }, label(id), hint, input), value: parsed,
      problem: () => {
        const v = parsed();
        if (v === undefined) return isRequired ? missing() : null;
        if (!Number.isFinite(v) || (property.type === "integer" && !Number.isInteger(v))) return t(property.type === "integer" ? "dialog.whole_number" : "dialog.number", { title });
        if (typeof property.minimum === "number" && v < property.minimum) return t("dialog.at_least", { title, value: property.minimum });
        if (typeof property.maximum === "number" && v > property.maximum) return t("dialog.at_most", { title, value: property.maximum });
        return null;
      },
    };
  }

  if (property.type === "string") {
    const long = property.maxLength === undefined || property.maxLength > 120;
    const inputType = { email: "email", uri: "url", date: "date" }[property.format] || "text";
    const input = long && inputType === "text"
      ? h("textarea", { id, rows: "2", maxlength: property.maxLength ?? null })
      : h("input", { type: inputType, id, maxlength: property.maxLength ?? null });
    input.value = typeof property.default === "string" ? property.default : "";
    return {
      key, el: h("div", { class: "field" }, label(id), hint, input),
      value: () => (input.value.trim() ? input.value : undefined),
      problem: () => {
        const v = input.value;
        if (!v.trim()) return isRequired ? missing() : null;
        if (typeof property.minLength === "number" && v.length < property.minLength) return t("dialog.min_length", { title, count: property.minLength });
        if (property.pattern) {
          try { if (!new RegExp(property.pattern, "u").test(v)) return t("dialog.pattern", { title }); } catch { /* a pattern the browser cannot read is not enforced */ }
        }
        return null;
      },
    };
  }

  return { key, el: h("div", { class: "field unsupported" }, t("dialog.unsupported", { title })),
    value: () => undefined, problem: () => (isRequired ? t("dialog.cannot_answer", { title }) : null) };
}

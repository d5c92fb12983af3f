// Mode / model / thought selectors from the session's `configOptions` (or its
// `modes` when an agent sends no options). Changing one calls back; the view
// sends `session/set_config_option` (or `session/set_mode`) and re-renders
// with what the agent answers.

import { h, clear } from "./dom.js";
import { t } from "./i18n.js";

export class ConfigBar {
  /** @param {(change: {configId?: string, modeId?: string, value: any}) => Promise<void>} onChange */
  constructor(onChange) {
    this.onChange = onChange;
    this.options = [];
    this.modes = null;
    this.el = h("div", { class: "config-bar" });
  }

  setOptions(options) {
    this.options = Array.isArray(options) ? options : [];
    this.render();
  }

  setModes(modes) {
    this.modes = modes && Array.isArray(modes.availableModes) ? modes : null;
    this.render();
  }

  /** `current_mode_update`: the mode selector follows, whichever kind it is. */
  setCurrentMode(modeId) {
    if (this.modes) this.modes = { ...this.modes, currentModeId: modeId };
    const option = this.options.find((o) => o.category === "mode" || o.id === "mode");
    if (option) option.currentValue = modeId;
    this.render();
  }

  render() {
    clear(this.el);
    for (const option of this.options) {
      if (!option || typeof option.id !== "string") continue;
      if (option.type === "boolean") {
        const box = h("input", { type: "checkbox", checked: option.currentValue === true, dataset: { configId: option.id } });
        box.addEventListener("change", () => this.change({ configId: option.id, value: box.checked }, box));
        this.el.append(h("label", { class: "config boolean" }, box, h("span", null, option.name || option.id)));
        continue;
      }
      const select = h("select", { dataset: { configId: option.id }, "aria-label": option.name || option.id },
        (option.options || []).map((entry) => (Array.isArray(entry.options)
          ? h("optgroup", { label: entry.name || entry.group }, entry.options.map((o) => choice(o, option.currentValue)))
          : choice(entry, option.currentValue))));
      select.addEventListener("change", () => this.change({ configId: option.id, value: select.value }, select));
      this.el.append(h("label", { class: "config" }, h("span", null, option.name || option.id), select));
    }
    if (!this.options.length && this.modes) {
      const select = h("select", { dataset: { configId: "mode" }, "aria-label": t("config.mode") },
        this.modes.availableModes.map((mode) => h("option", { value: mode.id, selected: mode.id === this.modes.currentModeId }, mode.name || mode.id)));
      select.addEventListener("change", () => this.change({ modeId: select.value, value: select.value }, select));
      this.el.append(h("label", { class: "config" }, h("span", null, t("config.mode")), select));
    }
    this.el.hidden = !this.el.childNodes.length;
  }

  async change(change, control) {
    control.disabled = true;
    try {
      await this.onChange(change);
    } finally {
      control.disabled = false;
      this.render(); // shows what the agent accepted (a refused change snaps back)
    }
  }
}

function choice(entry, current) {
  return h("option", { value: entry.value, selected: entry.value === current }, entry.name || entry.value);
}

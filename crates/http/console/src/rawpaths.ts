// Raw Cisco configuration paths in the template form: rows of a path (the words of an
// xConfiguration path, sent as the key `cisco:<path>`) and a value. The service checks them
// against Cisco's published schemas; only Cisco rooms write them, other rooms report them
// unsupported. A refusal naming a raw path is shown at its row.

import { h, replace } from "./dom";
import { Value } from "./jobs";

export const RAW_PREFIX = "cisco:";

interface Row {
  box: HTMLElement;
  path: HTMLInputElement;
  value: HTMLInputElement;
  error: HTMLElement;
}

/** A path as compared: its words, single-spaced, in lower case (the service ignores case). */
function normal(path: string): string {
  return path.trim().replace(/\s+/g, " ").toLowerCase();
}

/** The raw path a service message is about: `settings.cisco:<path>: ...` or `settings: 'cisco:<path>': ...`. */
export function refusedPath(message: string): string | null {
  const m = /^settings\.cisco:([^:']+):\s/i.exec(message) ?? /^settings:\s+'cisco:([^']+)'/i.exec(message);
  return m ? m[1] : null;
}

/** A value as typed: a JSON number when it is a whole number, else the text. */
function parsed(text: string): Value {
  const t = text.trim();
  if (/^-?\d+$/.test(t) && Number.isSafeInteger(Number(t))) return Number(t);
  return text;
}

export interface RawPaths {
  fieldset: HTMLElement;
  /** Adds the filled rows to `settings`; a half-filled row or a repeated path is said at its row (false then). */
  collect(settings: Record<string, Value>): boolean;
  /** Shows `text` at the row of the raw path `message` names; false when none does. */
  showError(message: string, text: string): boolean;
  clearErrors(): void;
  /** Removes every row (after the template is created). */
  reset(): void;
}

export function rawPathsFieldset(): RawPaths {
  const rows: Row[] = [];
  let made = 0;
  const list = h("div", { id: "template-raw-rows" });
  const add = h("button", { type: "button", class: "secondary", id: "template-raw-add" }, "Add raw path");

  const renumber = () => {
    rows.forEach((r, i) => {
      r.box.querySelector("button")?.setAttribute("aria-label", `Remove raw path ${i + 1}`);
    });
  };

  const addRow = (): Row => {
    const n = ++made;
    const id = `template-raw-${n}`;
    const error = h("span", { class: "field-error", id: `${id}-error` });
    const path = h("input", {
      id, autocomplete: "off", spellcheck: "false", placeholder: "Audio Ultrasound MaxVolume",
      "aria-describedby": `${id}-error template-raw-help`, "data-raw": "path",
    });
    const value = h("input", {
      id: `${id}-value`, autocomplete: "off", spellcheck: "false", placeholder: "40",
      "aria-describedby": `${id}-error`, "data-raw": "value",
    });
    const remove = h("button", { type: "button", class: "secondary" }, "Remove");
    const box = h("div", { class: "raw-path", "data-raw-row": String(n) },
      h("div", { class: "field-grid" },
        h("div", { class: "field" },
          h("label", { for: id }, "Path after ", h("code", null, RAW_PREFIX)), path),
        h("div", { class: "field" }, h("label", { for: `${id}-value` }, "Value"), value),
        h("div", { class: "field" }, h("label", { "aria-hidden": "true" }, "\u00a0"), remove)),
      error);
    const row = { box, path, value, error };
    remove.addEventListener("click", () => {
      rows.splice(rows.indexOf(row), 1);
      box.remove();
      renumber();
      add.focus();
    });
    rows.push(row);
    list.appendChild(box);
    renumber();
    return row;
  };
  add.addEventListener("click", () => addRow().path.focus());

  const mark = (r: Row, text: string, el: HTMLInputElement) => {
    r.error.textContent = text;
    el.setAttribute("aria-invalid", "true");
    el.focus();
  };

  const fieldset = h("fieldset", { class: "event-types", id: "template-raw" },
    h("legend", null, "Raw Cisco paths (optional)"),
    h("p", { class: "small field-help", id: "template-raw-help" },
      "A Cisco xConfiguration path and its value, for what the settings above do not cover: ",
      h("code", null, "cisco:Audio Ultrasound MaxVolume"), " = ", h("code", null, "40"),
      ". Written on Cisco rooms only, and checked against Cisco's published schemas; other rooms report them unsupported. "
      + "A whole number is sent as a number, anything else as text; empty rows are left out."),
    list,
    h("div", { class: "buttons" }, add));

  return {
    fieldset,
    collect(settings) {
      const seen = new Map<string, Row>();
      for (const r of rows) {
        // The prefix is a label; one typed anyway is not doubled.
        const path = r.path.value.trim().replace(/\s+/g, " ").replace(/^cisco:\s*/i, "");
        const text = r.value.value;
        if (path === "" && text.trim() === "") continue;
        if (path === "") {
          mark(r, "Fill in the path (or remove the row).", r.path);
          return false;
        }
        if (text.trim() === "") {
          mark(r, "Fill in the value (or remove the row).", r.value);
          return false;
        }
        if (seen.has(normal(path))) {
          mark(r, `${RAW_PREFIX}${path} is in another row already.`, r.path);
          return false;
        }
        seen.set(normal(path), r);
        settings[`${RAW_PREFIX}${path}`] = parsed(text);
      }
      return true;
    },
    showError(message, text) {
      const path = refusedPath(message);
      const r = path === null ? undefined : rows.find((row) => normal(row.path.value.replace(/^\s*cisco:/i, "")) === normal(path));
      if (!r) return false;
      // `settings.cisco:<path>: <value> is not ...` refuses the value; `settings: 'cisco:<path>': ...`, the path.
      mark(r, text, /^settings\.cisco:/i.test(message) ? r.value : r.path);
      return true;
    },
    clearErrors() {
      for (const r of rows) {
        r.error.textContent = "";
        r.path.removeAttribute("aria-invalid");
        r.value.removeAttribute("aria-invalid");
      }
    },
    reset() {
      rows.length = 0;
      replace(list);
    },
  };
}

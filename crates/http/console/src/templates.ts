// Configuration templates (/api/templates, issue #36): the enterprise's templates with their
// settings, a form built from the settings catalog (GET /api/templates/settings) to create one
// (ROLE_READWRITE), delete (ROLE_READWRITE), and a template's plan on the rooms
// (POST /api/templates/{id}/plan, any role) as a table: a row per room, a column per key.
// A plan reads the rooms and writes nothing; *Apply* starts a job writing it
// (POST /api/templates/{id}/apply), shown with its progress and undo by ./jobs. A chosen
// template also shows the rooms it is assigned to and their drift (./drift). The form also takes
// raw Cisco configuration paths (`cisco:<path>` keys, ./rawpaths).

import { ApiError, canWrite, get, send } from "./api";
import { ago, h, notify, replace, when } from "./dom";
import { driftSection } from "./drift";
import { Job, Value, errorText, jobsSection, plural, shown } from "./jobs";
import { rawPathsFieldset } from "./rawpaths";
import { Rooms, roomChoice, roomSources } from "./roomchoice";

interface Template {
  id: string;
  name: string;
  description: string | null;
  settings: Record<string, Value>;
  createdAt: number;
  updatedAt: number;
}

/** A key of the settings catalog with its value space. */
interface Setting {
  key: string;
  type: "integer" | "literal" | "text" | "timeZone";
  min?: number;
  max?: number;
  values?: Value[];
  minChars?: number;
  maxChars?: number;
  description: string;
}

type KeyPlan =
  | { plan: "unchanged"; value: Value }
  | { plan: "change"; from: Value | null; to: Value }
  | { plan: "unsupported" | "unreadable"; reason: string };

type RoomPlan =
  | { endpointId: string; name: string; settings: Record<string, KeyPlan> }
  | { endpointId: string; name: string; unreachable: { code: string; message: string } };

interface Plan {
  template: { id: string; name: string };
  summary: {
    rooms: number; roomsChanging: number; unreachable: number;
    changes: number; unchanged: number; unsupported: number; unreadable: number;
  };
  rooms: RoomPlan[];
}

/** An id-safe form of a key (`standby.delay_minutes` → `standby-delay_minutes`). */
function slug(key: string): string {
  return key.replace(/[^A-Za-z0-9_-]/g, "-");
}

/** The settings in the catalog's order (keys the catalog does not know last). */
function ordered(settings: Record<string, Value>, catalog: Setting[]): string[] {
  return orderedKeys(Object.keys(settings), catalog);
}

function orderedKeys(keys: string[], catalog: Setting[]): string[] {
  const known = catalog.map((s) => s.key).filter((k) => keys.includes(k));
  return [...known, ...keys.filter((k) => !known.includes(k))];
}

/** One key of one room in the plan table. */
function planCell(p: KeyPlan | undefined): HTMLElement {
  if (!p) return h("td", { class: "plan-key plan-missing muted-text" }, "—");
  switch (p.plan) {
    case "change":
      return h("td", { class: "plan-key plan-change", "data-plan": "change" },
        h("span", { class: "visually-hidden" }, "changes: "),
        h("span", { class: "plan-from" }, shown(p.from)), " → ", h("strong", null, shown(p.to)));
    case "unchanged":
      return h("td", { class: "plan-key plan-unchanged", "data-plan": "unchanged", title: "already set" },
        h("span", { "aria-hidden": "true" }, "= "), h("span", { class: "visually-hidden" }, "unchanged: "), shown(p.value));
    default:
      return h("td", { class: "plan-key plan-unsupported", "data-plan": p.plan, title: p.reason },
        h("span", { class: "plan-why" }, p.plan), h("span", { class: "visually-hidden" }, `: ${p.reason}`));
  }
}

export function templatesPage(main: HTMLElement): () => void {
  const list = h("div", { id: "templates-list" }, "Loading…");
  const planTitle = h("h2", { id: "template-plan-title" }, "Plan");
  let left = false;
  const sources = roomSources();
  const roomsChoice = roomChoice("template-plan-rooms", "Rooms", sources, () => left);
  const planOut = h("div", { id: "template-plan-out", "aria-live": "polite" });
  const planButton = h("button", { type: "submit", id: "template-plan-again" }, "Plan");
  const planCard = h("section", { class: "card", id: "template-plan", "aria-labelledby": "template-plan-title", hidden: true },
    planTitle,
    h("p", null, "What applying the template would change, read from each room through its listener now. Nothing is written."),
    h("form", { class: "inline", onsubmit: (ev: Event) => { ev.preventDefault(); void runPlan(); } },
      roomsChoice.field,
      planButton,
      roomsChoice.boxes),
    planOut);
  let templates: Template[] = [];
  let catalog: Setting[] = [];
  let planned: Template | null = null;
  let planning = 0;
  const jobs = jobsSection({ order: (keys) => orderedKeys(keys, catalog) });
  const drift = driftSection({
    sources,
    order: (keys) => orderedKeys(keys, catalog),
    showJob: (job) => {
      jobs.show(job, true);
      jobs.refresh();
    },
    jobsChanged: () => jobs.refresh(),
  });

  const runPlan = async () => {
    const t = planned;
    if (!t) return;
    const rooms = roomsChoice.value();
    const run = ++planning;
    if (typeof rooms === "string") {
      replace(planOut, h("p", { class: "error", role: "alert" }, rooms));
      return;
    }
    planButton.disabled = true;
    replace(planOut, h("p", { class: "summary" }, "Reading the rooms…"));
    try {
      const plan = await send<Plan>("POST", `/api/templates/${encodeURIComponent(t.id)}/plan`, { rooms });
      if (left || run !== planning || !plan) return;
      showPlan(t, plan, rooms);
    } catch (e) {
      if (!left && run === planning) replace(planOut, h("p", { class: "error", role: "alert" }, errorText(e)));
    } finally {
      if (run === planning) planButton.disabled = false;
    }
  };

  /** Starts the job writing `plan`, on the same rooms the plan read. */
  const apply = async (t: Template, plan: Plan, rooms: Rooms, button: HTMLButtonElement, help: HTMLElement, error: HTMLElement) => {
    const s = plan.summary;
    if (!window.confirm(`Apply “${t.name}” to ${plural(s.rooms, "room")}? The plan shows ${plural(s.changes, "change")} `
      + `on ${plural(s.roomsChanging, "room")}. Each room is read again and only what differs is written; the job can be undone.`)) return;
    button.disabled = true;
    error.textContent = "";
    let started = false;
    try {
      const job = await send<Job>("POST", `/api/templates/${encodeURIComponent(t.id)}/apply`, { rooms });
      if (left || !job) return;
      started = true;
      // The rooms are changing: this plan no longer says what applying would do.
      help.textContent = "Applied as the job below. Plan again to see the rooms as they are now.";
      notify(`Applying “${t.name}”.`);
      jobs.show(job, true);
      jobs.refresh();
    } catch (e) {
      if (left) return;
      // A conflict names the job running: the list shows it.
      error.textContent = errorText(e, "Applying a template");
      if (e instanceof ApiError && e.status === 409) jobs.refresh();
    } finally {
      button.disabled = started;
    }
  };

  const showPlan = (t: Template, plan: Plan, rooms: Rooms) => {
    const s = plan.summary;
    const keys = ordered(t.settings, catalog);
    const summary = h("p", { class: "summary", id: "template-plan-summary" },
      h("strong", null, `${plural(s.roomsChanging, "room")} of ${s.rooms} would change`),
      ` · ${plural(s.changes, "change")} · ${s.unchanged} unchanged · ${s.unsupported} unsupported · ${s.unreadable} unreadable · ${s.unreachable} unreachable`,
      h("span", { class: "muted-text" }, ". Nothing was written."));
    if (plan.rooms.length === 0) {
      replace(planOut, summary, h("p", null, "No room to plan on."));
      return;
    }
    const applyError = h("p", { class: "error", role: "alert", id: "template-apply-error" });
    const applyButton = h("button", { type: "button", id: "template-apply", disabled: s.changes === 0 }, "Apply");
    const applyHelp = h("span", { class: "small field-help", id: "template-apply-help" }, s.changes === 0
      ? "Nothing to apply: every room that could be read already has these values."
      : `Writes the ${plural(s.changes, "change")} on these rooms as a job you can follow and undo.`);
    applyButton.addEventListener("click", () => void apply(t, plan, rooms, applyButton, applyHelp, applyError));
    // Offered to every user: the service decides, and a read-only user is told why it refused.
    const applyBox = h("div", null, h("div", { class: "buttons with-help" }, applyButton, applyHelp), applyError);
    const rows = plan.rooms.map((r) => {
      const room = h("th", { scope: "row", class: "room-name", title: r.name },
        h("a", { href: `#/room/${encodeURIComponent(r.endpointId)}` }, r.name));
      if ("unreachable" in r) {
        return h("tr", { class: "plan-unreachable", "data-room": r.endpointId },
          room,
          h("td", { colspan: Math.max(keys.length, 1) },
            h("span", { class: "badge plan-skip" }, "unreachable"), " ",
            h("strong", null, r.unreachable.code), `: ${r.unreachable.message}`));
      }
      const changes = keys.some((k) => r.settings[k]?.plan === "change");
      return h("tr", { "data-room": r.endpointId, class: changes ? "plan-changing" : null },
        room, keys.map((k) => planCell(r.settings[k])));
    });
    replace(planOut, summary, applyBox,
      h("div", { class: "table-wrap" }, h("table", { id: "template-plan-table", class: "plan-grid" },
        h("thead", null, h("tr", null, h("th", { scope: "col" }, "Room"),
          keys.map((k) => h("th", { scope: "col" }, h("code", null, k), h("div", { class: "small plan-target" }, `→ ${shown(t.settings[k])}`))))),
        h("tbody", null, rows))),
      h("p", { class: "small plan-legend" },
        "from → to: would change · = value: already set · unsupported or unreadable: left alone (hover for why)."));
  };

  /** Shows `t`'s assigned rooms and its plan card; plans on all rooms when `plan`. */
  const planOn = (t: Template, focus: boolean, plan = true) => {
    const other = planned?.id !== t.id;
    planned = t;
    planCard.hidden = false;
    replace(planTitle, "Plan of ", h("q", null, t.name));
    drift.open(t);
    // Marks the row without drawing the table again (the button keeps its focus).
    for (const tr of list.querySelectorAll("tr[data-template]")) {
      tr.classList.toggle("selected", tr.getAttribute("data-template") === t.id);
    }
    if (plan) {
      roomsChoice.reset();
      void runPlan();
    } else if (other) {
      // Another template's plan is not this one's.
      planning++;
      planButton.disabled = false;
      replace(planOut, h("p", { class: "muted-text" }, "Choose the rooms and press Plan to see what applying it would change."));
    }
    if (focus) (plan ? planCard : drift.card).scrollIntoView({ block: "nearest" });
  };

  const unselect = () => {
    planned = null;
    planCard.hidden = true;
    replace(planOut);
    drift.close();
  };

  const render = () => {
    replace(list, templates.length === 0
      ? h("p", null, canWrite() ? "No templates yet: build one below." : "No templates yet.")
      : h("div", { class: "table-wrap" }, h("table", { id: "templates-table" },
        h("thead", null, h("tr", null, ["Name", "Settings", "Updated", "Actions"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", null, templates.map((t) => {
          const keys = ordered(t.settings, catalog);
          return h("tr", { "data-template": t.id, class: planned?.id === t.id ? "selected" : null },
            h("th", { scope: "row" }, t.name, t.description ? h("div", { class: "small" }, t.description) : null),
            h("td", null, keys.length === 0 ? h("span", { class: "muted-text" }, "no settings")
              : h("ul", { class: "setting-chips" }, keys.map((k) =>
                h("li", null, h("code", null, `${k} = ${shown(t.settings[k])}`))))),
            h("td", { title: when(t.updatedAt) }, ago(t.updatedAt)),
            h("td", null, h("div", { class: "row-actions" },
              h("button", { type: "button", class: "secondary", onclick: () => planOn(t, true, false) }, "Assigned rooms"),
              h("button", { type: "button", class: "secondary", onclick: () => planOn(t, true) }, "Plan on all rooms"),
              canWrite() ? h("button", {
                type: "button", class: "danger",
                onclick: async (ev: Event) => {
                  if (!window.confirm(`Delete the template “${t.name}”? Rooms keep their settings; only the template goes.`)) return;
                  const button = ev.currentTarget as HTMLButtonElement;
                  button.disabled = true;
                  try {
                    await send("DELETE", `/api/templates/${encodeURIComponent(t.id)}`);
                    if (planned?.id === t.id) unselect();
                    notify("Template deleted.");
                  } catch (e) {
                    notify(errorText(e), "error");
                  } finally {
                    button.disabled = false;
                  }
                  await load();
                },
              }, "Delete") : null)));
        })))));
  };

  const load = async () => {
    try {
      templates = await get<Template[]>("/api/templates");
      if (left) return;
      if (planned && !templates.some((t) => t.id === planned?.id)) unselect();
      render();
    } catch (e) {
      if (!left) replace(list, h("p", { class: "error", role: "alert" }, errorText(e)));
    }
  };

  // The creation form, built from the catalog once it is read.
  const formSlot = h("div");
  const buildForm = () => {
    const name = h("input", { id: "template-name", required: true, maxlength: 100, autocomplete: "off", "aria-describedby": "template-name-error" });
    const nameError = h("span", { class: "field-error", id: "template-name-error" });
    const description = h("input", { id: "template-description", autocomplete: "off" });
    const formError = h("p", { class: "error", role: "alert", id: "template-form-error" });
    const inputs = new Map<string, { el: HTMLInputElement | HTMLSelectElement; error: HTMLElement; setting: Setting }>();
    const fields = catalog.map((s) => {
      const id = `template-setting-${slug(s.key)}`;
      const error = h("span", { class: "field-error", id: `${id}-error` });
      const help = h("span", { class: "small field-help", id: `${id}-help` }, s.description);
      const described = `${id}-help ${id}-error`;
      let el: HTMLInputElement | HTMLSelectElement;
      if (s.values) {
        el = h("select", { id, "aria-describedby": described },
          h("option", { value: "" }, "(not set)"),
          s.values.map((v) => h("option", { value: String(v) }, String(v))));
      } else if (s.type === "integer") {
        el = h("input", { id, type: "number", min: s.min, max: s.max, step: 1, inputmode: "numeric", autocomplete: "off", "aria-describedby": described });
      } else {
        el = h("input", { id, autocomplete: "off", maxlength: s.maxChars, "aria-describedby": described });
      }
      inputs.set(s.key, { el, error, setting: s });
      return h("div", { class: "field" }, h("label", { for: id }, h("code", null, s.key)), el, help, error);
    });
    // Raw Cisco paths (`cisco:Audio Ultrasound MaxVolume`) for what the catalog does not cover.
    const raw = rawPathsFieldset();
    const submit = h("button", { type: "submit" }, "Create template");
    const clearErrors = () => {
      raw.clearErrors();
      for (const el of [formError, nameError]) el.textContent = "";
      name.removeAttribute("aria-invalid");
      for (const { el, error } of inputs.values()) {
        error.textContent = "";
        el.removeAttribute("aria-invalid");
      }
    };
    const form = h("form", {
      id: "template-form", novalidate: true, onsubmit: async (ev: Event) => {
        ev.preventDefault();
        clearErrors();
        // Only the keys filled in are sent: a template sets those and leaves the rest alone.
        const settings: Record<string, Value> = {};
        for (const [key, { el, setting }] of inputs) {
          const text = el.value;
          if (text === "") continue;
          settings[key] = setting.type === "integer" && /^-?\d+$/.test(text.trim()) ? Number(text.trim()) : text;
        }
        if (!raw.collect(settings)) return;
        const body: Record<string, unknown> = { name: name.value.trim(), settings };
        if (description.value.trim()) body.description = description.value.trim();
        submit.disabled = true;
        try {
          const created = await send<Template>("POST", "/api/templates", body);
          (form as HTMLFormElement).reset();
          raw.reset();
          notify(`Template “${created?.name ?? body.name}” created.`);
          await load();
        } catch (e) {
          // The service names the key (`settings.time_zone: 'X' is not ...`), a raw path
          // (`settings.cisco:<path>: ...`, `settings: 'cisco:<path>': ...`) or the field.
          const message = e instanceof ApiError ? e.message : "";
          const key = /^settings\.([A-Za-z0-9_.]+):\s/.exec(message)?.[1];
          const target = key ? inputs.get(key) : undefined;
          if (raw.showError(message, errorText(e))) {
            // Shown at the raw path's row.
          } else if (target) {
            target.error.textContent = errorText(e);
            target.el.setAttribute("aria-invalid", "true");
            target.el.focus();
          } else if (e instanceof ApiError && (e.field() === "name" || e.status === 409)) {
            nameError.textContent = errorText(e);
            name.setAttribute("aria-invalid", "true");
            name.focus();
          } else {
            formError.textContent = errorText(e);
          }
        } finally {
          submit.disabled = false;
        }
      },
    },
      h("div", { class: "field-grid" },
        h("div", { class: "field" }, h("label", { for: "template-name" }, "Name"), name, nameError),
        h("div", { class: "field" }, h("label", { for: "template-description" }, "Description (optional)"), description)),
      h("fieldset", { class: "event-types" },
        h("legend", null, "Settings: fill in only those the template sets"),
        h("div", { class: "field-grid" }, fields)),
      raw.fieldset,
      formError,
      submit);
    replace(formSlot, h("section", { class: "card", id: "template-create", "aria-labelledby": "template-create-title" },
      h("h2", { id: "template-create-title" }, "New template"), form));
  };

  replace(main, h("h1", null, "Templates"),
    h("p", null, "A template is a named set of room settings in vendor-neutral keys (and, for Cisco rooms, raw Cisco configuration paths). Plan it on the rooms to see, room by room, what it would change; planning reads the rooms and writes nothing. Applying the plan starts a job that writes the changes room by room, which you can follow here and undo. Rooms assigned a template are checked for drift from it, and can have it re-applied."),
    list, drift.card, planCard, jobs.view, jobs.list,
    canWrite() ? formSlot : h("p", { class: "muted-text", id: "templates-read-only" }, "Creating and deleting templates needs ROLE_READWRITE, as do applying and undoing them."));

  void (async () => {
    try {
      catalog = await get<Setting[]>("/api/templates/settings");
    } catch (e) {
      if (!left && canWrite()) replace(formSlot, h("p", { class: "error", role: "alert" }, `Settings catalog: ${errorText(e)}`));
    }
    if (left) return;
    if (canWrite() && catalog.length) buildForm();
    await load();
  })();
  return () => {
    left = true;
    jobs.leave();
    drift.leave();
  };
}

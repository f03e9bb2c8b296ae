// A template's assigned rooms and their drift (issue #36): GET /api/templates/{id}/rooms as a
// card on the Templates page, with the counts and a row per room (its state, the settings it
// holds other values of, when it was last checked, why the last check failed). Read-write
// users assign rooms (the same room choice as the plan), unassign them, check them now and
// re-apply the template to the drifted ones: a job shown by ./jobs as Apply's is. The card is
// read again on each `drift` event of the stream (a check's result was saved).

import { ApiError, canWrite, get, send } from "./api";
import { ago, h, notify, replace, when } from "./dom";
import { Job, Value, errorText, plural, shown } from "./jobs";
import { RoomChoice, RoomSources, roomChoice } from "./roomchoice";
import { follow } from "./stream";

type DriftState = "unchecked" | "in_line" | "drifted" | "unreachable";

interface DriftedKey {
  key: string;
  held: Value | null;
  template: Value | null;
}

interface AssignedRoom {
  endpointId: string;
  name: string;
  assignedAt: number;
  state: DriftState;
  checkedAt: number | null;
  readAt: number | null;
  driftedSince: number | null;
  drifted: DriftedKey[];
  error?: { errorName: string; message: string } | null;
}

export interface TemplateRooms {
  templateId: string;
  counts: { assigned: number; unchecked: number; inLine: number; drifted: number; unreachable: number };
  rooms: AssignedRoom[];
}

/** The template the card is about (the page's own type has more). */
export interface DriftTemplate {
  id: string;
  name: string;
}

const STATE_TEXT: Record<DriftState, string> = {
  unchecked: "unchecked",
  in_line: "in line",
  drifted: "drifted",
  unreachable: "unreachable",
};

function stateBadge(state: DriftState): HTMLElement {
  return h("span", { class: `badge drift-${state.replace("_", "-")}`, "data-state": state }, STATE_TEXT[state] ?? state);
}

export interface DriftOptions {
  sources: RoomSources;
  /** The keys in the order the page shows settings (the catalog's). */
  order: (keys: string[]) => string[];
  /** Shows a job started here in the page's job view. */
  showJob: (job: Job) => void;
  /** A job may be running (a 409): the page reads its jobs again. */
  jobsChanged: () => void;
}

/** The Assigned rooms card, empty until `open` names a template. */
export function driftSection(options: DriftOptions): {
  card: HTMLElement;
  open: (t: DriftTemplate) => void;
  close: () => void;
  leave: () => void;
} {
  let left = false;
  let template: DriftTemplate | null = null;
  let answer: TemplateRooms | null = null;
  // Each read is numbered: an answer older than the newest one asked for is dropped.
  let read = 0;
  let busy = false;

  const title = h("h2", { id: "template-rooms-title", tabindex: -1 }, "Assigned rooms");
  const summary = h("p", { class: "summary", id: "template-rooms-summary", "aria-live": "polite" });
  const error = h("p", { class: "error", role: "alert", id: "template-rooms-error" });
  const out = h("div", { id: "template-rooms-out" }, "Loading…");

  const checkButton = h("button", { type: "button", id: "template-check" }, "Check now");
  const reapplyButton = h("button", { type: "button", class: "secondary", id: "template-reapply", disabled: true }, "Re-apply to drifted rooms");
  const assignToggle = h("button", { type: "button", class: "secondary", id: "template-assign-open", "aria-expanded": "false", "aria-controls": "template-assign" }, "Assign rooms");

  const choice: RoomChoice = roomChoice("template-assign-rooms", "Rooms to assign", options.sources, () => left);
  const assignError = h("p", { class: "error", role: "alert", id: "template-assign-error" });
  const assignButton = h("button", { type: "submit", id: "template-assign-submit" }, "Assign");
  const assignForm = h("form", {
    class: "inline", id: "template-assign", hidden: true, "aria-label": "Assign rooms",
    onsubmit: (ev: Event) => { ev.preventDefault(); void assign(); },
  },
    choice.field, assignButton,
    h("button", { type: "button", class: "secondary", onclick: () => showAssign(false) }, "Cancel"),
    choice.boxes,
    h("p", { class: "small field-help assign-help" },
      "A room has one template at most: a room assigned another template moves to this one. Nothing is written on the rooms."),
    assignError);

  const card = h("section", { class: "card", id: "template-rooms", "aria-labelledby": "template-rooms-title", hidden: true },
    title,
    h("p", null, "The rooms this template is assigned to are read now and then (and on ", h("em", null, "Check now"),
      ") to see whether they still hold its settings. A setting a room cannot set or would not say is not drift."),
    summary,
    canWrite()
      ? [h("div", { class: "buttons" }, checkButton, reapplyButton, assignToggle), assignForm]
      : h("p", { class: "muted-text", id: "template-rooms-read-only" }, "Assigning, unassigning, checking and re-applying need ROLE_READWRITE."),
    error,
    out);

  const showAssign = (open: boolean) => {
    assignForm.hidden = !open;
    assignToggle.setAttribute("aria-expanded", String(open));
    assignError.textContent = "";
    if (open) {
      choice.reset();
      (assignForm.querySelector("select") as HTMLSelectElement).focus();
    } else {
      assignToggle.focus();
    }
  };
  assignToggle.addEventListener("click", () => showAssign(assignForm.hidden));

  const url = (t: DriftTemplate, what: string) => `/api/templates/${encodeURIComponent(t.id)}/${what}`;

  const render = (doc: TemplateRooms) => {
    answer = doc;
    const c = doc.counts;
    if (c.assigned === 0) replace(summary);
    else {
      replace(summary,
        h("strong", null, `${plural(c.drifted, "room")} drifted`), ` of ${c.assigned} assigned`,
        ` · ${c.inLine} in line · ${c.unreachable} unreachable · ${c.unchecked} unchecked`);
    }
    reapplyButton.disabled = busy || c.drifted === 0;
    reapplyButton.title = c.drifted === 0 ? "No assigned room has drifted at its last check." : "";
    checkButton.disabled = busy || c.assigned === 0;
    if (doc.rooms.length === 0) {
      replace(out, h("p", { id: "template-rooms-none" }, canWrite()
        ? "No room is assigned this template: assign rooms to have them checked."
        : "No room is assigned this template."));
      return;
    }
    const write = canWrite();
    replace(out, h("div", { class: "table-wrap" }, h("table", { id: "template-rooms-table", class: "drift-table" },
      h("thead", null, h("tr", null, ["Room", "State", "Settings that differ (held → template)", "Last checked", write ? "" : null]
        .filter((c) => c !== null).map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", null, doc.rooms.map((r) => {
        const keys = options.order(r.drifted.map((d) => d.key));
        const byKey = new Map(r.drifted.map((d) => [d.key, d]));
        const drift = keys.length === 0
          ? h("span", { class: "muted-text" }, r.state === "in_line" ? "none" : "—")
          : h("ul", { class: "drift-keys" }, keys.map((k) => {
            const d = byKey.get(k) as DriftedKey;
            return h("li", { "data-key": k }, h("code", null, k), ": ",
              h("span", { class: "plan-from" }, shown(d.held)), " → ", h("strong", null, shown(d.template)));
          }));
        return h("tr", { "data-room": r.endpointId, "data-state": r.state, class: `drift-${r.state.replace("_", "-")}` },
          h("th", { scope: "row", class: "room-name", title: r.name },
            h("a", { href: `#/room/${encodeURIComponent(r.endpointId)}` }, r.name)),
          h("td", null, stateBadge(r.state),
            r.state === "drifted" && r.driftedSince ? h("div", { class: "small drift-since", title: when(r.driftedSince) }, `since ${ago(r.driftedSince)}`) : null,
            r.error ? h("div", { class: "drift-error" }, h("strong", null, r.error.errorName), `: ${r.error.message}`) : null),
          h("td", null, drift,
            r.state === "unreachable" && keys.length ? h("div", { class: "small drift-since" }, `as read ${ago(r.readAt)}`) : null),
          h("td", { title: when(r.checkedAt) }, r.checkedAt ? ago(r.checkedAt) : "not yet",
            r.readAt && r.readAt !== r.checkedAt ? h("div", { class: "small drift-since", title: when(r.readAt) }, `last read ${ago(r.readAt)}`) : null),
          write ? h("td", null, h("button", {
            type: "button", class: "secondary", "aria-label": `Unassign ${r.name}`,
            onclick: (ev: Event) => void unassign(r, ev.currentTarget as HTMLButtonElement),
          }, "Unassign")) : null);
      })))));
  };

  const load = async () => {
    const t = template;
    if (!t) return;
    const run = ++read;
    try {
      const doc = await get<TemplateRooms>(url(t, "rooms"));
      if (left || run !== read || template?.id !== t.id) return;
      render(doc);
    } catch (e) {
      if (left || run !== read || template?.id !== t.id) return;
      replace(out, h("p", { class: "error", role: "alert" }, errorText(e)));
    }
  };

  /** Runs a write (assign, unassign, check) answering the rooms document, and draws it. */
  const change = async (what: string, body: unknown, action: string): Promise<TemplateRooms | null> => {
    const t = template;
    if (!t) return null;
    busy = true;
    checkButton.disabled = true;
    reapplyButton.disabled = true;
    error.textContent = "";
    // Answers to reads asked before this write are older than its own answer.
    const run = ++read;
    try {
      const doc = await send<TemplateRooms>("POST", url(t, what), body);
      busy = false;
      if (left || template?.id !== t.id || !doc) return null;
      if (run === read) render(doc);
      else void load();
      return doc;
    } catch (e) {
      busy = false;
      if (!left && template?.id === t.id) error.textContent = errorText(e, action);
      if (!left && answer) render(answer);
      else if (!left) replace(summary);
      return null;
    }
  };

  const assign = async () => {
    const rooms = choice.value();
    assignError.textContent = "";
    if (typeof rooms === "string") {
      assignError.textContent = rooms;
      return;
    }
    assignButton.disabled = true;
    const before = new Set(answer?.rooms.map((r) => r.endpointId) ?? []);
    try {
      const t = template;
      if (!t) return;
      const doc = await send<TemplateRooms>("POST", url(t, "assign"), { rooms });
      if (left || template?.id !== t.id || !doc) return;
      ++read;
      render(doc);
      const added = doc.rooms.filter((r) => !before.has(r.endpointId)).length;
      notify(added ? `${plural(added, "room")} assigned “${t.name}”.` : "Those rooms were already assigned.");
      showAssign(false);
    } catch (e) {
      if (!left) assignError.textContent = errorText(e, "Assigning a template");
    } finally {
      assignButton.disabled = false;
    }
  };

  const unassign = async (r: AssignedRoom, button: HTMLButtonElement) => {
    button.disabled = true;
    const doc = await change("unassign", { rooms: { endpoints: [r.endpointId] } }, "Unassigning a template");
    if (doc) {
      notify(`${r.name} unassigned.`);
      // Its row (and button) are gone: the card's title keeps the focus on the card.
      title.focus({ preventScroll: true });
    } else {
      button.disabled = false;
    }
  };

  checkButton.addEventListener("click", async () => {
    const was = checkButton.textContent;
    checkButton.textContent = "Checking…";
    replace(summary, "Reading every assigned room…");
    const doc = await change("check", undefined, "Checking the rooms");
    checkButton.textContent = was;
    if (doc) notify(`Checked: ${plural(doc.counts.drifted, "room")} drifted, ${doc.counts.inLine} in line, ${doc.counts.unreachable} unreachable.`);
  });

  reapplyButton.addEventListener("click", async () => {
    const t = template;
    const c = answer?.counts;
    if (!t || !c) return;
    if (!window.confirm(`Re-apply “${t.name}” to the ${plural(c.drifted, "drifted room")}? Each is read again and only `
      + "what differs is written; the job can be undone.")) return;
    reapplyButton.disabled = true;
    error.textContent = "";
    try {
      const job = await send<Job>("POST", url(t, "reapply"));
      if (left || !job) return;
      notify(`Re-applying “${t.name}”.`);
      options.showJob(job);
    } catch (e) {
      if (left) return;
      error.textContent = errorText(e, "Re-applying a template");
      // A conflict names the job running: the list shows it.
      if (e instanceof ApiError && e.status === 409) options.jobsChanged();
    } finally {
      if (!left) reapplyButton.disabled = !answer || answer.counts.drifted === 0;
    }
  });

  const unfollow = follow(["drift"], () => void load());

  return {
    card,
    open: (t) => {
      const other = template?.id !== t.id;
      template = t;
      card.hidden = false;
      replace(title, "Assigned rooms of ", h("q", null, t.name));
      if (other) {
        answer = null;
        error.textContent = "";
        replace(summary);
        replace(out, "Loading…");
        if (!assignForm.hidden) {
          assignForm.hidden = true;
          assignToggle.setAttribute("aria-expanded", "false");
        }
      }
      void load();
    },
    close: () => {
      template = null;
      answer = null;
      read++;
      card.hidden = true;
      replace(out);
    },
    leave: () => {
      left = true;
      unfollow();
    },
  };
}

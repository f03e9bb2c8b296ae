// Choosing rooms for a template (a plan, an assignment, an unassignment): all rooms, the rooms
// behind one listener, or rooms ticked one by one. The body the service takes for each is the
// same (`{"rooms": {...}}`, `RoomSelection` in the domain).

import { Endpoint, Listener, get } from "./api";
import { h, replace } from "./dom";

/** The `rooms` of a plan, apply, assign or unassign body. */
export type Rooms = { all: true } | { listenerId: string } | { endpoints: string[] };

/** The listeners and rooms a page offers, read once per page and shared by its choices. */
export interface RoomSources {
  listeners: Promise<Listener[]>;
  endpoints: Promise<Endpoint[]>;
}

export function roomSources(): RoomSources {
  const listeners = get<Listener[]>("/api/listenerservices");
  const endpoints = get<Endpoint[]>("/api/endpoints");
  // Read by whoever needs them; a failure is shown where they are needed, not as an unhandled rejection.
  listeners.catch(() => undefined);
  endpoints.catch(() => undefined);
  return { listeners, endpoints };
}

export interface RoomChoice {
  /** The list: all rooms, each listener, chosen rooms. */
  field: HTMLElement;
  /** For chosen rooms, a box per room (hidden otherwise): placed after the form's button. */
  boxes: HTMLElement;
  /** What is chosen, or a sentence saying what is missing (no room ticked). */
  value: () => Rooms | string;
  /** Back to all rooms, nothing ticked. */
  reset: () => void;
}

const CHOSEN = "chosen";

/** A room choice whose list is labelled `label`; ids start with `id`. */
export function roomChoice(id: string, label: string, sources: RoomSources, left: () => boolean): RoomChoice {
  const select = h("select", { id },
    h("option", { value: "all" }, "All rooms"),
    h("option", { value: CHOSEN }, "Chosen rooms…"));
  const boxesOut = h("div", { class: "checks room-checks" }, "Loading the rooms…");
  const boxes = h("fieldset", { class: "event-types room-choice-rooms", id: `${id}-chosen`, hidden: true },
    h("legend", null, "Tick the rooms"), boxesOut);
  const field = h("div", { class: "field" }, h("label", { for: id }, label), select);
  let ticks: HTMLInputElement[] = [];

  const sync = () => {
    boxes.hidden = select.value !== CHOSEN;
  };
  select.addEventListener("change", sync);

  void sources.listeners.then((listeners) => {
    if (left()) return;
    const was = select.value;
    replace(select, h("option", { value: "all" }, "All rooms"),
      listeners.map((l) => h("option", { value: l.id }, `Behind listener ${l.name}`)),
      h("option", { value: CHOSEN }, "Chosen rooms…"));
    select.value = [...select.options].some((o) => o.value === was) ? was : "all";
    sync();
  }).catch(() => undefined);
  void sources.endpoints.then((endpoints) => {
    if (left()) return;
    const sorted = [...endpoints].sort((a, b) => a.name.localeCompare(b.name));
    ticks = sorted.map((e) => h("input", { type: "checkbox", id: `${id}-room-${e.id}`, value: e.id }));
    replace(boxesOut, sorted.length === 0 ? h("p", null, "No rooms yet.") : sorted.map((e, i) =>
      h("label", { class: "check", for: `${id}-room-${e.id}` }, ticks[i], h("span", null, e.name),
        e.location ? h("span", { class: "small" }, e.location) : null)));
  }).catch((e) => {
    if (!left()) replace(boxesOut, h("p", { class: "error", role: "alert" }, `The rooms could not be read: ${e instanceof Error ? e.message : String(e)}`));
  });

  return {
    field,
    boxes,
    value: () => {
      const v = select.value;
      if (v === "all") return { all: true };
      if (v !== CHOSEN) return { listenerId: v };
      const endpoints = ticks.filter((t) => t.checked).map((t) => t.value);
      return endpoints.length ? { endpoints } : "Tick at least one room.";
    },
    reset: () => {
      select.value = "all";
      for (const t of ticks) t.checked = false;
      sync();
    },
  };
}

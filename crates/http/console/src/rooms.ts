// Rooms: the searchable, sortable table and the wall of tiles, both live.

import { Child, ago, h, replace } from "./dom";
import { Picture, Room, State, stateOf, subscribe } from "./live";

type Column = "name" | "location" | "state" | "muted" | "listener" | "updated";

const COLUMNS: [Column, string][] = [
  ["name", "Room"],
  ["location", "Location"],
  ["state", "Status"],
  ["muted", "Microphone"],
  ["listener", "Listener"],
  ["updated", "Last update"],
];

function sortKey(room: Room, column: Column): string | number {
  switch (column) {
    case "name":
      return room.endpoint.name.toLowerCase();
    case "location":
      return (room.endpoint.location ?? "").toLowerCase();
    case "state":
      return stateOf(room);
    case "muted":
      return room.status?.microphoneMuted ? 1 : 0;
    case "listener":
      return (room.listener?.name ?? "").toLowerCase();
    case "updated":
      return room.status?.timestamp ?? 0;
  }
}

function matches(room: Room, query: string): boolean {
  if (!query) return true;
  const q = query.toLowerCase();
  const e = room.endpoint;
  return [e.name, e.location, e.ipAddress, e.id, room.listener?.name, stateOf(room)]
    .some((v) => typeof v === "string" && v.toLowerCase().includes(q));
}

export function stateBadge(state: State): HTMLElement {
  return h("span", { class: `badge state-${state.replace(/ /g, "-")}` }, state);
}

export function mutedBadge(room: Room): Child {
  if (!room.status || room.status.timestamp === 0) return "—";
  return room.status.microphoneMuted ? h("span", { class: "badge muted" }, "muted") : "on";
}

export function roomsPage(main: HTMLElement): () => void {
  let query = "";
  let column: Column = "name";
  let ascending = true;
  let last: Picture | null = null;

  const search = h("input", {
    id: "room-search",
    type: "search",
    placeholder: "Name, location, address, status…",
    autocomplete: "off",
  });
  const summary = h("p", { class: "summary", "aria-live": "polite" });
  const tableBody = h("tbody");
  const headRow = h("tr");
  const table = h("table", { class: "rooms", id: "rooms-table" },
    h("caption", { class: "visually-hidden" }, "Rooms and their live status"),
    h("thead", null, headRow), tableBody);

  const renderHead = () => {
    replace(headRow, COLUMNS.map(([key, label]) => {
      const sorted = key === column;
      return h("th", { scope: "col", "aria-sort": sorted ? (ascending ? "ascending" : "descending") : "none" },
        h("button", {
          type: "button", class: "sort",
          onclick: () => {
            if (column === key) ascending = !ascending;
            else { column = key; ascending = true; }
            renderHead();
            if (last) render(last);
          },
        }, label, sorted ? (ascending ? " ▲" : " ▼") : ""));
    }));
  };

  const render = (p: Picture) => {
    last = p;
    const rows = p.rooms.filter((r) => matches(r, query));
    rows.sort((a, b) => {
      const x = sortKey(a, column), y = sortKey(b, column);
      const c = x < y ? -1 : x > y ? 1 : 0;
      return ascending ? c : -c;
    });
    const inCall = p.rooms.filter((r) => stateOf(r) === "in call").length;
    summary.textContent = `${rows.length} of ${p.rooms.length} rooms shown · ${inCall} in a call` +
      (p.error ? ` · last refresh failed: ${p.error}` : "");
    replace(tableBody, rows.length === 0
      ? h("tr", null, h("td", { colspan: COLUMNS.length }, p.rooms.length ? "No room matches the search." : "No rooms yet."))
      : rows.map((room) => h("tr", { "data-room": room.endpoint.id },
        h("th", { scope: "row" }, h("a", { href: `#/room/${encodeURIComponent(room.endpoint.id)}` }, room.endpoint.name)),
        h("td", null, room.endpoint.location ?? ""),
        h("td", null, stateBadge(stateOf(room))),
        h("td", null, mutedBadge(room)),
        h("td", null, room.listener?.name ?? (room.endpoint.listenerServiceId ? "?" : "—")),
        h("td", null, room.status?.timestamp ? ago(room.status.timestamp) : "never"),
      )));
  };

  search.addEventListener("input", () => {
    query = search.value.trim();
    if (last) render(last);
  });

  replace(main,
    h("div", { class: "page-head" },
      h("h1", null, "Rooms"),
      h("a", { href: "#/wall", class: "button secondary" }, "Wall view")),
    h("label", { for: "room-search" }, "Search rooms"),
    search, summary, h("div", { class: "table-wrap" }, table));
  renderHead();
  return subscribe(render);
}

export function wallPage(main: HTMLElement): () => void {
  const grid = h("div", { class: "wall", id: "wall" });
  const clock = h("p", { class: "summary", "aria-live": "off" });
  replace(main,
    h("div", { class: "page-head" },
      h("h1", null, "Wall"),
      h("a", { href: "#/rooms", class: "button secondary" }, "Table view")),
    clock, grid);
  return subscribe((p) => {
    clock.textContent = `Updated ${new Date(p.fetchedAt).toLocaleTimeString()}` + (p.error ? ` · ${p.error}` : "");
    const rooms = [...p.rooms].sort((a, b) => a.endpoint.name.localeCompare(b.endpoint.name));
    replace(grid, rooms.map((room) => {
      const state = stateOf(room);
      return h("a", {
        class: `tile state-${state.replace(/ /g, "-")}`,
        href: `#/room/${encodeURIComponent(room.endpoint.id)}`,
        "data-room": room.endpoint.id,
        "aria-label": `${room.endpoint.name}: ${state}${room.status?.microphoneMuted ? ", muted" : ""}`,
      },
        h("span", { class: "tile-name" }, room.endpoint.name),
        h("span", { class: "tile-state" }, state),
        room.status?.microphoneMuted ? h("span", { class: "tile-muted" }, "microphone muted") : null,
        h("span", { class: "tile-location" }, room.endpoint.location ?? ""));
    }));
  });
}

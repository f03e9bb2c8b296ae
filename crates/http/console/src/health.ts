// Fleet health: how many rooms are ok, degraded or offline, per listener, and the broken rooms
// first with why (GET /api/health/rooms).

import { ApiError, get } from "./api";
import { ago, h, replace } from "./dom";
import { follow } from "./stream";

export type State = "ok" | "degraded" | "offline";
interface Counts { ok: number; degraded: number; offline: number }
interface RoomHealth { endpointId: string; name: string; listenerServiceId: string | null; state: State; since: number | null; reasons: { code: string; message: string }[] }
interface Report { at: number; counts: Counts; listeners: { listenerServiceId: string; name: string; health: string; counts: Counts }[]; rooms: RoomHealth[] }

const STATES: State[] = ["offline", "degraded", "ok"];

function errorText(e: unknown): string {
  if (e instanceof ApiError) return `${e.errorName}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}

export function badge(state: State): Node {
  return h("span", { class: `badge health-${state}` }, state);
}

export function healthPage(main: HTMLElement): () => void {
  const counts = h("div", { id: "health-counts", class: "tiles" }, "Loading…");
  const listeners = h("div");
  const rooms = h("div");
  const load = async () => {
    try {
      const report = await get<Report>("/api/health/rooms");
      // A state with no room stays neutral: red and amber are for rooms that need attention.
      replace(counts, STATES.map((s) => h("div", { class: report.counts[s] > 0 || s === "ok" ? `tile health-${s}` : "tile", "data-state": s },
        h("strong", null, String(report.counts[s])), ` ${s}`)));
      replace(listeners, report.listeners.length === 0 ? h("p", null, "No listener services.") :
        h("div", { class: "table-wrap" }, h("table", { id: "health-listeners" },
          h("thead", null, h("tr", null, ["Listener", "Listener state", "Ok", "Degraded", "Offline"].map((c) => h("th", { scope: "col" }, c)))),
          h("tbody", null, report.listeners.map((l) => h("tr", null,
            h("td", null, l.name), h("td", null, l.health),
            h("td", null, String(l.counts.ok)), h("td", null, String(l.counts.degraded)), h("td", null, String(l.counts.offline))))))));
      const broken = report.rooms.filter((r) => r.state !== "ok");
      replace(rooms, broken.length === 0 ? h("p", null, "Every room works.") :
        h("ul", { id: "health-rooms", class: "events" }, broken.map((r) => h("li", { "data-room": r.endpointId, "data-state": r.state },
          badge(r.state), " ", h("a", { href: `#/room/${encodeURIComponent(r.endpointId)}` }, r.name),
          r.since ? h("span", { class: "small" }, ` since ${ago(r.since)}`) : "",
          h("ul", null, r.reasons.map((reason) => h("li", { "data-reason": reason.code }, reason.message)))))));
    } catch (e) {
      replace(counts, h("span", { class: "error" }, errorText(e)));
    }
  };
  replace(main, h("h1", null, "Fleet health"),
    h("p", null, "Offline: nothing reaches the room (no listener, its listener offline, or no status for three poll rounds). Degraded: it answers, but a peripheral is not connected or its inventory cannot be read."),
    counts,
    h("section", { class: "card", "aria-labelledby": "health-broken" }, h("h2", { id: "health-broken" }, "Rooms that need attention"), rooms),
    h("section", { class: "card", "aria-labelledby": "health-per-listener" }, h("h2", { id: "health-per-listener" }, "Per listener"), listeners));
  void load();
  // The service's health watch tells each change of a room's or a listener's state.
  return follow(["health", "listeners", "inventory"], () => void load());
}

// Room usage: minutes in call per room as bars, and the busy hours as a weekday-by-hour heatmap,
// both drawn here as SVG (no chart library). The per-room figures come from
// GET /api/analytics/usage; the heatmap from the sessions (GET /api/analytics/sessions), spread
// over the hours they cover in the browser's time zone.

import { ApiError, Endpoint, get, request } from "./api";
import { h, replace } from "./dom";

interface UsageGroup { key: string; calls: number; minutesInCall: number; daysUsed: number }
interface Usage { from: number; to: number; at: number; calls: number; minutesInCall: number; groups: UsageGroup[] }

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const NS = "http://www.w3.org/2000/svg";

function svg(tag: string, attrs: Record<string, string | number>, ...children: (Node | string)[]): SVGElement {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
  return el;
}

function errorText(e: unknown): string {
  if (e instanceof ApiError) return `${e.errorName}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}

function calls(n: number): string {
  return n === 1 ? "1 call" : `${n} calls`;
}

function minutes(n: number): string {
  if (n > 0 && n < 1) return `${Math.max(1, Math.round(n * 60))} s`;
  return n >= 120 ? `${(n / 60).toFixed(1)} h` : `${Math.round(n)} min`;
}

/** Minutes in call per weekday (0 = Monday) and local hour, from the sessions CSV. */
export function heat(csv: string, now: number): number[][] {
  const grid = WEEKDAYS.map(() => new Array<number>(24).fill(0));
  for (const line of csv.trim().split("\n").slice(1)) {
    const [, started, ended] = line.split(",");
    let t = Date.parse(started);
    const end = ended ? Date.parse(ended) : now;
    if (!(t < end)) continue;
    // Hour by hour, at most a week of them: a room left in a call does not stall the page.
    for (let steps = 0; t < end && steps < 24 * 7; steps++) {
      const at = new Date(t);
      const next = Math.min(end, new Date(at.getFullYear(), at.getMonth(), at.getDate(), at.getHours() + 1).getTime());
      grid[(at.getDay() + 6) % 7][at.getHours()] += (next - t) / 60_000;
      t = next;
    }
  }
  return grid;
}

function heatmap(grid: number[][]): Node {
  // Relative to the busiest cell, so a quiet period still shows its shape.
  const max = Math.max(...grid.flat()) || 1;
  const cell = 22, left = 90, top = 22;
  const chart = svg("svg", {
    id: "usage-heatmap", role: "img", viewBox: `0 0 ${left + 24 * cell + 4} ${top + 7 * cell + 4}`,
    "aria-label": "Minutes in call by weekday and hour of the day",
  });
  for (let hour = 0; hour < 24; hour += 3) {
    chart.appendChild(svg("text", { x: left + hour * cell + 2, y: 14, class: "axis" }, `${String(hour).padStart(2, "0")}:00`));
  }
  grid.forEach((row, day) => {
    chart.appendChild(svg("text", { x: 0, y: top + day * cell + 15, class: "axis" }, WEEKDAYS[day]));
    row.forEach((value, hour) => {
      const rect = svg("rect", {
        x: left + hour * cell, y: top + day * cell, width: cell - 2, height: cell - 2, rx: 3,
        class: "heat", "fill-opacity": value > 0 ? (0.15 + 0.85 * value / max).toFixed(2) : 0.04,
        "data-minutes": Math.round(value),
      }, svg("title", {}, `${WEEKDAYS[day]} ${String(hour).padStart(2, "0")}:00: ${minutes(value)}`));
      chart.appendChild(rect);
    });
  });
  let best = { day: 0, hour: 0, value: 0 };
  grid.forEach((row, day) => row.forEach((value, hour) => { if (value > best.value) best = { day, hour, value }; }));
  const summary = best.value > 0
    ? `Busiest hour: ${WEEKDAYS[best.day]} ${String(best.hour).padStart(2, "0")}:00 (${minutes(best.value)} in call).`
    : "No call in this period.";
  return h("figure", { class: "chart" }, chart, h("figcaption", { id: "usage-busiest" }, summary));
}

function bars(usage: Usage, names: Map<string, string>): Node {
  const groups = [...usage.groups].sort((a, b) => b.minutesInCall - a.minutesInCall);
  if (groups.length === 0) return h("p", null, "No room was in a call in this period.");
  const max = Math.max(...groups.map((g) => g.minutesInCall)) || 1;
  const row = 26, label = 180, width = 420;
  const chart = svg("svg", {
    id: "usage-bars", role: "img", viewBox: `0 0 ${label + width + 130} ${groups.length * row + 4}`,
    "aria-label": "Minutes in call per room",
  });
  groups.forEach((g, i) => {
    const name = names.get(g.key) ?? g.key;
    const w = Math.max(2, (width * g.minutesInCall) / max);
    chart.appendChild(svg("text", { x: 0, y: i * row + 17, class: "axis" }, name.length > 24 ? `${name.slice(0, 23)}…` : name));
    chart.appendChild(svg("rect", { x: label, y: i * row + 4, width: w, height: row - 8, rx: 3, class: "bar", "data-room": g.key },
      svg("title", {}, `${name}: ${minutes(g.minutesInCall)}, ${calls(g.calls)} on ${g.daysUsed === 1 ? "1 day" : `${g.daysUsed} days`}`)));
    chart.appendChild(svg("text", { x: label + w + 6, y: i * row + 17, class: "axis" }, `${minutes(g.minutesInCall)} · ${calls(g.calls)}`));
  });
  return h("figure", { class: "chart" }, chart);
}

export function usagePage(main: HTMLElement): () => void {
  const period = h("select", { id: "usage-period" },
    h("option", { value: "7" }, "Last 7 days"),
    h("option", { value: "30", selected: true }, "Last 30 days"),
    h("option", { value: "90" }, "Last 90 days"));
  const totals = h("p", { id: "usage-totals" }, "Loading…");
  const byRoom = h("div");
  const byHour = h("div");
  const load = async () => {
    const now = Date.now();
    const query = { from: now - Number(period.value) * DAY_MS, to: now };
    try {
      const [usage, csv, endpoints] = await Promise.all([
        get<Usage>("/api/analytics/usage", query),
        request("/api/analytics/sessions", { query }).then((r) => r.text()),
        get<Endpoint[]>("/api/endpoints"),
      ]);
      const names = new Map(endpoints.map((e) => [e.id, e.name]));
      replace(totals, `${calls(usage.calls)}, ${minutes(usage.minutesInCall)} in call, in ${usage.groups.length} of ${endpoints.length} rooms.`);
      replace(byRoom, bars(usage, names));
      replace(byHour, heatmap(heat(csv, usage.at)));
    } catch (e) {
      replace(totals, h("span", { class: "error" }, errorText(e)));
    }
  };
  period.addEventListener("change", () => void load());
  replace(main, h("h1", null, "Usage"),
    h("p", null, "How the rooms are used: calls roomlink saw them in, whoever started them. A call counts from the first time roomlink saw it to the last (exact for its own commands, within a status poll for calls started on the room)."),
    h("div", { class: "field" }, h("label", { for: "usage-period" }, "Period"), period),
    totals,
    h("section", { class: "card", "aria-labelledby": "usage-rooms" }, h("h2", { id: "usage-rooms" }, "Minutes in call per room"), byRoom),
    h("section", { class: "card", "aria-labelledby": "usage-hours" }, h("h2", { id: "usage-hours" }, "Busy hours"), h("p", { class: "small" }, "Minutes in call by weekday and hour, in this browser's time zone."), byHour));
  void load();
  const timer = window.setInterval(() => void load(), 30_000);
  return () => window.clearInterval(timer);
}

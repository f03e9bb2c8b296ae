// The fleet's inventory: what every room says about itself (GET /api/inventory, every page),
// filtered here by model, software version and peripheral kind, rooms missing a peripheral
// first.

import { ApiError, Endpoint, download, get, request } from "./api";
import { ago, h, notify, replace } from "./dom";
import { follow } from "./stream";

interface Peripheral { kind: string; id?: string; name?: string; model?: string; serialNumber?: string; softwareVersion?: string; connected: boolean }
interface Inventory { vendor?: string; product?: string; model?: string; serialNumber?: string; softwareVersion?: string; uptimeSeconds?: number; peripherals: Peripheral[]; notReported: string[] }
export interface InventoryRecord { endpointId: string; listenerServiceId: string | null; readAt: number | null; attemptedAt: number | null; inventory: Inventory | null; lastFailure: { errorName: string; errorMessage: string } | null }

function errorText(e: unknown): string {
  if (e instanceof ApiError) return `${e.errorName}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}

/** Every page of the fleet listing. */
async function everyRecord(): Promise<InventoryRecord[]> {
  const all: InventoryRecord[] = [];
  let after: string | null = null;
  for (;;) {
    const query: Record<string, string> = { limit: "1000" };
    if (after) query.after = after;
    const response = await request("/api/inventory", { query });
    all.push(...(await response.json() as InventoryRecord[]));
    after = response.headers.get("X-Next-Cursor");
    if (!after) return all;
  }
}

export function modelOf(i: Inventory | null): string {
  return i?.model ?? i?.product ?? "";
}

export function missing(i: Inventory | null): Peripheral[] {
  return (i?.peripherals ?? []).filter((p) => !p.connected);
}

function options(select: HTMLSelectElement, label: string, values: string[]): void {
  const chosen = select.value;
  replace(select, h("option", { value: "" }, label),
    [...new Set(values.filter(Boolean))].sort().map((v) => h("option", { value: v, selected: v === chosen }, v)));
}

/** One room's peripherals as a list, the missing ones marked. */
export function peripheralList(i: Inventory): Node {
  if (i.peripherals.length === 0) return h("span", { class: "small" }, i.notReported.includes("peripherals") ? "not reported" : "none");
  return h("ul", { class: "peripherals" }, i.peripherals.map((p) =>
    h("li", { class: p.connected ? "" : "error", "data-connected": String(p.connected) },
      `${p.name ?? p.kind}${p.connected ? "" : " — not connected"}`)));
}

export function inventoryPage(main: HTMLElement): () => void {
  const model = h("select", { id: "inventory-model" });
  const version = h("select", { id: "inventory-version" });
  const kind = h("select", { id: "inventory-kind" });
  const summary = h("p", { id: "inventory-summary" }, "Loading…");
  const out = h("div");
  let records: InventoryRecord[] = [];
  let names = new Map<string, string>();
  const render = () => {
    options(model, "Every model", records.map((r) => modelOf(r.inventory)));
    options(version, "Every software version", records.map((r) => r.inventory?.softwareVersion ?? ""));
    options(kind, "Any peripheral", records.flatMap((r) => (r.inventory?.peripherals ?? []).map((p) => p.kind)));
    const rows = records
      .filter((r) => !model.value || modelOf(r.inventory) === model.value)
      .filter((r) => !version.value || r.inventory?.softwareVersion === version.value)
      .filter((r) => !kind.value || (r.inventory?.peripherals ?? []).some((p) => p.kind === kind.value))
      // Rooms missing a peripheral, then those never read, first.
      .sort((a, b) => Number(missing(b.inventory).length > 0) - Number(missing(a.inventory).length > 0)
        || Number(a.inventory !== null) - Number(b.inventory !== null)
        || (names.get(a.endpointId) ?? "").localeCompare(names.get(b.endpointId) ?? ""));
    const short = records.filter((r) => missing(r.inventory).length > 0).length;
    const versions = new Set(records.map((r) => r.inventory?.softwareVersion).filter(Boolean)).size;
    replace(summary, `${records.length} rooms read, ${versions} software version${versions === 1 ? "" : "s"}; `,
      h("strong", null, `${short} missing a peripheral`), ".");
    replace(out, rows.length === 0 ? h("p", null, records.length ? "No room matches." : "No room has been read yet: rooms are read during the status poll rounds.") :
      h("div", { class: "table-wrap" }, h("table", { id: "inventory-table" },
        h("thead", null, h("tr", null, ["Room", "Model", "Software", "Serial number", "Peripherals", "Read"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", null, rows.map((r) => {
          const i = r.inventory;
          return h("tr", { "data-room": r.endpointId },
            h("td", null, h("a", { href: `#/room/${encodeURIComponent(r.endpointId)}` }, names.get(r.endpointId) ?? r.endpointId)),
            h("td", null, modelOf(i)),
            h("td", null, i?.softwareVersion ?? ""),
            h("td", null, i?.serialNumber ? h("code", { class: "small" }, i.serialNumber) : ""),
            h("td", null, i ? peripheralList(i) : ""),
            h("td", null, r.readAt ? ago(r.readAt) : "never",
              r.lastFailure ? h("div", { class: "error small", title: r.lastFailure.errorMessage }, `last try: ${r.lastFailure.errorName}`) : ""));
        })))));
  };
  for (const select of [model, version, kind]) select.addEventListener("change", render);
  const exportButton = h("button", {
    type: "button", class: "secondary", id: "inventory-export", onclick: async () => {
      try {
        await download("/api/endpoints/csv", "rooms-with-inventory.csv", { include: "inventory" });
      } catch (e) {
        notify(`Export failed: ${errorText(e)}`, "error");
      }
    },
  }, "Export rooms with inventory as CSV");
  replace(main, h("h1", null, "Inventory"),
    h("p", null, "What each room system says about itself, read through its listener during the status poll rounds (each room about once an hour)."),
    h("p", null, exportButton),
    h("div", { class: "filters" },
      h("div", { class: "field" }, h("label", { for: "inventory-model" }, "Model"), model),
      h("div", { class: "field" }, h("label", { for: "inventory-version" }, "Software"), version),
      h("div", { class: "field" }, h("label", { for: "inventory-kind" }, "Peripheral"), kind)),
    summary, out);
  const load = async () => {
    try {
      const [all, endpoints] = await Promise.all([everyRecord(), get<Endpoint[]>("/api/endpoints")]);
      records = all;
      names = new Map(endpoints.map((e) => [e.id, e.name]));
      render();
    } catch (e) {
      replace(summary, h("span", { class: "error" }, errorText(e)));
    }
  };
  void load();
  return follow(["inventory"], () => void load());
}

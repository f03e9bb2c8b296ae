// Listeners, failures, the audit log and the CSV import/export.

import { ApiError, AuditEntry, Endpoint, Failure, Listener, canWrite, download, get, request, send } from "./api";
import { ago, h, notify, replace, when } from "./dom";
import { follow } from "./stream";

function errorText(e: unknown): string {
  if (e instanceof ApiError) return `${e.errorName}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}

export function listenersPage(main: HTMLElement): () => void {
  const list = h("div", null, "Loading…");
  const secretBox = h("div", { "aria-live": "polite" });
  const load = async () => {
    try {
      const [listeners, failures] = await Promise.all([
        get<Listener[]>("/api/listenerservices"),
        get<Failure[]>("/api/failures").catch(() => [] as Failure[]),
      ]);
      const lastFailure = (id: string) => failures.find((f) => f.subjectId === id);
      replace(list, listeners.length === 0 ? h("p", null, "No listener service is registered.") :
        h("div", { class: "table-wrap" }, h("table", { id: "listeners-table" },
          h("thead", null, h("tr", null, ["Name", "Health", "Version", "Connection", "Last contact", "Last failure", "Location"]
            .map((c) => h("th", { scope: "col" }, c)))),
          h("tbody", null, listeners.map((l) => {
            const why = l.checkError ? h("div", { class: "small" }, `${l.checkError.errorName}: ${l.checkError.message}`)
              : l.health === "unknown" ? h("div", { class: "small" }, "not checked yet") : null;
            const contact = l.lastContact ? ago(l.lastContact) : "never";
            return h("tr", { "data-listener": l.id },
              h("th", { scope: "row" }, l.name, h("br"), h("code", { class: "small" }, l.id)),
              h("td", null, h("span", { class: `badge health-${l.health}` }, l.health), why),
              h("td", null, l.listenerVersion ?? "—"),
              h("td", null, l.connection === "inbound" ? `inbound: ${l.baseUrl ?? ""}`
                : l.connectedSince ? `outbound, connected ${ago(l.connectedSince)}` : "outbound (dials home)"),
              h("td", null, l.connection === "inbound" && l.checkedAt
                ? [contact, h("div", { class: "small" }, `checked ${ago(l.checkedAt)}`)] : contact),
              h("td", null, (() => {
                const f = lastFailure(l.id);
                return f ? [h("strong", null, f.errorName), ` ${ago(f.errorDate)}`] : "none recent";
              })()),
              h("td", null, l.location ?? ""));
          })))));
    } catch (e) {
      replace(list, h("p", { class: "error" }, errorText(e)));
    }
  };

  const name = h("input", { id: "listener-name", required: true, autocomplete: "off" });
  const baseUrl = h("input", { id: "listener-url", type: "url", autocomplete: "off", placeholder: "http://10.0.0.5:9001" });
  const formError = h("p", { class: "error", role: "alert" });
  const register = canWrite() ? h("section", { class: "card", "aria-labelledby": "register-title" },
    h("h2", { id: "register-title" }, "Register a listener"),
    h("form", {
      class: "inline", onsubmit: async (ev: Event) => {
        ev.preventDefault();
        formError.textContent = "";
        const body: Record<string, string> = { name: name.value.trim() };
        if (baseUrl.value.trim()) body.baseUrl = baseUrl.value.trim();
        try {
          const created = await send<Listener>("POST", "/api/listenerservices", body);
          name.value = "";
          baseUrl.value = "";
          replace(secretBox, h("div", { class: "card secret", role: "alert" },
            h("h3", null, `Secret of ${created?.name ?? "the listener"}`),
            h("p", null, "Shown this once: give it to the listener now. roomlink cannot show it again."),
            h("code", { id: "listener-secret" }, created?.secret ?? "(none)"),
            h("p", null, h("button", { type: "button", onclick: () => replace(secretBox) }, "I have copied it"))));
          void load();
        } catch (e) {
          formError.textContent = errorText(e);
        }
      },
    },
      h("div", { class: "field" }, h("label", { for: "listener-name" }, "Name"), name),
      h("div", { class: "field" }, h("label", { for: "listener-url" }, "Base URL (blank: outbound, it connects to roomlink)"), baseUrl),
      h("button", { type: "submit" }, "Register")),
    formError) : null;

  replace(main, h("h1", null, "Listeners"), secretBox, list, register);
  void load();
  return follow(["listeners"], () => void load());
}

export function failuresPage(main: HTMLElement): () => void {
  const filter = h("input", { id: "failure-filter", type: "search", autocomplete: "off", placeholder: "Error name, message, subject…" });
  const out = h("div", null, "Loading…");
  let all: Failure[] = [];
  const render = () => {
    const q = filter.value.trim().toLowerCase();
    const rows = all.filter((f) => !q || [f.errorName, f.errorMessage, f.subjectClass, f.subjectId]
      .some((v) => v.toLowerCase().includes(q)));
    replace(out, rows.length === 0 ? h("p", null, all.length ? "No failure matches." : "No recent failures.") :
      h("div", { class: "table-wrap" }, h("table", { id: "failures-table" },
        h("thead", null, h("tr", null, ["When", "Error", "Message", "Subject"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", null, rows.map((f) => h("tr", null,
          h("td", null, when(f.errorDate)),
          h("td", null, h("strong", null, f.errorName), ` (${f.errorCode})`),
          h("td", null, f.errorMessage),
          h("td", null, `${f.subjectClass} `, h("code", { class: "small" }, f.subjectId))))))));
  };
  filter.addEventListener("input", render);
  replace(main, h("h1", null, "Failures"),
    h("p", null, "The most recent control failures: listeners or rooms that failed a command or a poll, and failed auto-joins."),
    h("label", { for: "failure-filter" }, "Filter"), filter, out);
  const load = async () => {
    try {
      all = await get<Failure[]>("/api/failures");
      render();
    } catch (e) {
      replace(out, h("p", { class: "error" }, errorText(e)));
    }
  };
  void load();
  const timer = window.setInterval(() => void load(), 10000);
  return () => window.clearInterval(timer);
}

export function auditPage(main: HTMLElement): () => void {
  if (!canWrite()) {
    replace(main, h("h1", null, "Audit log"), h("p", null, "The audit log is for ROLE_READWRITE users."));
    return () => undefined;
  }
  const actor = h("input", { id: "audit-actor", autocomplete: "off" });
  const target = h("input", { id: "audit-target", autocomplete: "off" });
  const from = h("input", { id: "audit-from", type: "datetime-local" });
  const to = h("input", { id: "audit-to", type: "datetime-local" });
  const out = h("div");
  const more = h("p");
  let cursor: string | null = null;

  const load = async (append: boolean) => {
    const query: Record<string, string | number | undefined> = {
      limit: 50,
      actor: actor.value.trim() || undefined,
      targetId: target.value.trim() || undefined,
      from: from.value ? new Date(from.value).getTime() : undefined,
      to: to.value ? new Date(to.value).getTime() : undefined,
      cursor: append && cursor ? cursor : undefined,
    };
    try {
      const response = await request("/api/auditlog", { query });
      cursor = response.headers.get("X-Next-Cursor");
      const entries = (await response.json()) as AuditEntry[];
      const rows = entries.map((a) => h("tr", null,
        h("td", null, when(a.at)),
        h("td", null, a.actor.username ?? a.actor.id, h("span", { class: "muted-text" }, ` (${a.actor.kind})`)),
        h("td", null, h("code", null, a.operation)),
        h("td", null, a.targetId ? h("code", { class: "small" }, a.targetId) : "—"),
        h("td", null, a.outcome === "ok" ? "ok" : h("strong", null, a.outcome)),
        h("td", null, a.detail ?? "")));
      if (!append) {
        replace(out, entries.length === 0 ? h("p", null, "No entry matches.") :
          h("div", { class: "table-wrap" }, h("table", { id: "audit-table" },
            h("thead", null, h("tr", null, ["When", "Who", "Operation", "Target", "Outcome", "Detail"].map((c) => h("th", { scope: "col" }, c)))),
            h("tbody", null, rows))));
      } else {
        out.querySelector("tbody")?.append(...rows);
      }
      replace(more, cursor ? h("button", { type: "button", onclick: () => void load(true) }, "Older entries") : "");
    } catch (e) {
      replace(out, h("p", { class: "error", role: "alert" }, errorText(e)));
    }
  };
  replace(main, h("h1", null, "Audit log"),
    h("form", { class: "inline", onsubmit: (ev: Event) => { ev.preventDefault(); void load(false); } },
      h("div", { class: "field" }, h("label", { for: "audit-actor" }, "Who (username or token id)"), actor),
      h("div", { class: "field" }, h("label", { for: "audit-target" }, "Target id"), target),
      h("div", { class: "field" }, h("label", { for: "audit-from" }, "From"), from),
      h("div", { class: "field" }, h("label", { for: "audit-to" }, "To"), to),
      h("button", { type: "submit" }, "Filter")),
    out, more);
  void load(false);
  return () => undefined;
}

function shown(value: unknown): string {
  if (value === null || value === undefined || value === "") return "(none)";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

interface PlanRow {
  line: number;
  action: "create" | "update" | "skip";
  id: string | null;
  name: string | null;
  reason: string | null;
}

interface Plan {
  created: number;
  updated: number;
  skipped: number;
  rows: PlanRow[];
}

export function importPage(main: HTMLElement): () => void {
  const exportButton = h("button", {
    type: "button", class: "secondary", onclick: async () => {
      try {
        await download("/api/endpoints/csv", "endpoints.csv");
      } catch (e) {
        notify(`Export failed: ${errorText(e)}`, "error");
      }
    },
  }, "Export all rooms as CSV");
  if (!canWrite()) {
    replace(main, h("h1", null, "Import and export"),
      h("p", null, "Importing needs ROLE_READWRITE."), exportButton);
    return () => undefined;
  }
  const file = h("input", { id: "csv-file", type: "file", accept: ".csv,text/csv" });
  const drop = h("div", { class: "dropzone", id: "csv-drop" },
    h("p", null, "Drop a CSV file here, or "),
    h("label", { for: "csv-file", class: "button secondary" }, "choose a file"), file);
  const planOut = h("div", { id: "csv-plan", "aria-live": "polite" });
  let text: string | null = null;

  const showPlan = (plan: Plan) => {
    const heading = "Plan (nothing written yet)";
    replace(planOut,
      h("h2", null, heading),
      h("p", { class: "summary" },
        `${plan.created} to create · ${plan.updated} to update · ${plan.skipped} skipped`),
      h("div", { class: "table-wrap" }, h("table", { id: "plan-table" },
        h("thead", null, h("tr", null, ["Line", "Action", "Room", "Reason"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", null, plan.rows.map((r) => h("tr", { class: `plan-${r.action}` },
          h("td", null, String(r.line)),
          h("td", null, h("span", { class: `badge plan-${r.action}` }, r.action)),
          h("td", null, r.name ?? "", r.id ? h("code", { class: "small" }, ` ${r.id}`) : ""),
          h("td", null, r.reason ?? "")))))),
      h("p", null,
        h("button", { type: "button", id: "csv-apply", onclick: () => void apply() }, "Apply this plan"), " ",
        h("button", { type: "button", class: "secondary", onclick: () => { text = null; replace(planOut); } }, "Cancel")));
  };

  const planFor = async (csv: string) => {
    text = csv;
    replace(planOut, "Planning…");
    try {
      const response = await request("/api/endpoints/csv/plan", { method: "POST", body: csv, contentType: "text/csv" });
      showPlan((await response.json()) as Plan);
    } catch (e) {
      replace(planOut, h("p", { class: "error", role: "alert" }, errorText(e)));
    }
  };

  const apply = async () => {
    if (text === null) return;
    try {
      const before = await get<Endpoint[]>("/api/endpoints");
      const response = await request("/api/endpoints/csv", { method: "PUT", body: text, contentType: "text/csv" });
      const after = (await response.json()) as Endpoint[];
      showDifference(before, after);
      notify("Import applied.");
      text = null;
    } catch (e) {
      replace(planOut, h("p", { class: "error", role: "alert" }, errorText(e)));
    }
  };

  /** What the upload changed: the rooms it created, and each changed field of the others. */
  const showDifference = (before: Endpoint[], after: Endpoint[]) => {
    const old = new Map(before.map((e) => [e.id, e]));
    const rows: HTMLElement[] = [];
    for (const e of after) {
      const was = old.get(e.id);
      if (!was) {
        rows.push(h("tr", null, h("td", null, h("span", { class: "badge plan-create" }, "created")),
          h("td", null, h("a", { href: `#/room/${encodeURIComponent(e.id)}` }, e.name)), h("td", null, "new room")));
        continue;
      }
      const changed = Object.keys(e).filter((k) => JSON.stringify(e[k]) !== JSON.stringify(was[k]));
      if (changed.length) {
        rows.push(h("tr", null, h("td", null, h("span", { class: "badge plan-update" }, "updated")),
          h("td", null, h("a", { href: `#/room/${encodeURIComponent(e.id)}` }, e.name)),
          h("td", null, h("ul", { class: "changes" }, changed.map((k) =>
            h("li", null, h("code", null, k), `: ${shown(was[k])} → ${shown(e[k])}`))))));
      }
    }
    replace(planOut,
      h("h2", null, "Applied"),
      h("p", { class: "summary" }, `${rows.length} room${rows.length === 1 ? "" : "s"} changed; rows the plan skipped were not written.`),
      rows.length ? h("div", { class: "table-wrap" }, h("table", { id: "applied-table" },
        h("thead", null, h("tr", null, ["Change", "Room", "Fields"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", null, rows))) : null);
  };

  const read = (f: File | undefined | null) => {
    if (!f) return;
    void f.text().then(planFor);
  };
  file.addEventListener("change", () => read(file.files?.[0]));
  drop.addEventListener("dragover", (ev) => { ev.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (ev) => {
    ev.preventDefault();
    drop.classList.remove("over");
    read(ev.dataTransfer?.files?.[0]);
  });
  replace(main, h("h1", null, "Import and export"),
    h("p", null, "A header row of endpoint field names (as in the export), then one row per room. A blank id creates a room (a password is required); a filled id updates that room. You see the plan before anything is written."),
    drop, planOut, h("h2", null, "Export"), exportButton);
  return () => undefined;
}

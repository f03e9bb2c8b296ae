// Webhook subscriptions (/api/webhooks, read-write users only, reading included): each
// subscription with its state, Test / Pause / Resume / Delete, the deliveries of the one
// selected (newest first, a page at a time following X-Next-Cursor), and a form to subscribe a
// URL. The signing secret of a new subscription is in the creation answer only: it is shown in
// the page until dismissed or the page is left, and never put in a URL, browser storage or the
// console's log.

import { ApiError, get, request, send } from "./api";
import { ago, h, notify, replace, when } from "./dom";

interface Webhook {
  id: string;
  url: string;
  eventTypes: string[];
  description: string | null;
  createdAt: number;
  updatedAt: number;
  paused: { at: number; reason: string } | null;
}

interface Delivery {
  id: number;
  eventId: string;
  eventType: string;
  createdAt: number;
  state: "pending" | "delivered" | "failed";
  attempts: number;
  nextAttemptAt: number | null;
  lastAttemptAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: number | null;
}

/** The types a subscription may name (docs/operations.md "Webhooks"), with what they report. */
const EVENT_TYPES: [string, string][] = [
  ["room.offline", "a room went offline"],
  ["room.degraded", "a room works, but a peripheral is missing"],
  ["room.online", "a room is back to ok"],
  ["listener.offline", "a listener became unreachable"],
  ["listener.online", "a listener is reachable again"],
  ["call.started", "a call session opened"],
  ["call.ended", "a call session closed"],
  ["command.failed", "a join, hang-up, tones or mute failed"],
  ["inventory.changed", "a room's software version or model changed"],
  ["calendar.unreadable", "an auto-join room's calendar could not be read"],
  ["calendar.readable", "an auto-join room's calendar can be read again"],
  ["template.drifted", "a room no longer holds its template's settings"],
];

/** Deliveries per page. */
const PAGE = 20;

function errorText(e: unknown): string {
  if (e instanceof ApiError) return `${e.errorName}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}

/** "in 5 s", or how long ago for a past time. */
function due(ms: number | null): string {
  if (!ms) return "—";
  const s = Math.round((ms - Date.now()) / 1000);
  if (s <= 0) return "due now";
  if (s < 60) return `in ${s} s`;
  if (s < 3600) return `in ${Math.round(s / 60)} min`;
  return `in ${Math.round(s / 3600)} h`;
}

function stateBadge(w: Webhook): Node {
  return w.paused ? h("span", { class: "badge webhook-paused" }, "paused") : h("span", { class: "badge webhook-active" }, "active");
}

export function webhooksPage(main: HTMLElement): () => void {
  const list = h("div", { id: "webhooks-list" }, "Loading…");
  const secretBox = h("div", { "aria-live": "polite" });
  const deliveriesTitle = h("h2", { id: "deliveries-title" }, "Deliveries");
  const deliveriesOut = h("div");
  const more = h("p");
  const deliveries = h("section", { class: "card", id: "webhook-deliveries", "aria-labelledby": "deliveries-title", hidden: true },
    deliveriesTitle, deliveriesOut, more);
  let subscriptions: Webhook[] = [];
  let shownList = "";
  let selected: string | null = null;
  let cursor: string | null = null;
  let pages = 0;
  let built = false;
  let left = false;

  const loadDeliveries = async (append: boolean) => {
    const id = selected;
    if (!id) return;
    try {
      const response = await request(`/api/webhooks/${encodeURIComponent(id)}/deliveries`, {
        query: { limit: PAGE, cursor: append && cursor ? cursor : undefined },
      });
      const page = (await response.json()) as Delivery[];
      if (left || id !== selected) return;
      const next = response.headers.get("X-Next-Cursor");
      const rows = page.map((d) => h("tr", { "data-delivery": d.id, "data-state": d.state },
        h("td", { title: when(d.createdAt) }, ago(d.createdAt)),
        h("td", null, h("code", null, d.eventType), h("div", { class: "small" }, d.eventId)),
        h("td", null, h("span", { class: `badge delivery-${d.state}` }, d.state)),
        h("td", null, String(d.attempts)),
        h("td", null,
          d.lastStatus !== null ? h("strong", null, `HTTP ${d.lastStatus}`) : d.attempts === 0 ? "not tried yet" : "no answer",
          d.lastError && d.lastError !== `HTTP ${d.lastStatus}` ? h("div", { class: "small" }, d.lastError) : null),
        h("td", null, d.state === "delivered" ? `delivered ${ago(d.deliveredAt)}`
          : d.state === "failed" ? "none: failed for good" : due(d.nextAttemptAt),
          d.lastAttemptAt ? h("div", { class: "small" }, `last tried ${ago(d.lastAttemptAt)}`) : null)));
      if (append) {
        deliveriesOut.querySelector("tbody")?.append(...rows);
        pages += 1;
      } else {
        // Drawn again on every refresh (the times move on); nothing in it takes the focus.
        replace(deliveriesOut, page.length === 0 ? h("p", null, "No deliveries yet: send a test, or wait for an event.") :
          h("div", { class: "table-wrap" }, h("table", { id: "deliveries-table" },
            h("thead", null, h("tr", null, ["Queued", "Event", "State", "Attempts", "Last answer", "Next attempt"]
              .map((c) => h("th", { scope: "col" }, c)))),
            h("tbody", null, rows))));
        pages = 1;
      }
      // The button stays (with its focus) while there is a next page.
      if (!next) replace(more);
      else if (!more.firstChild) {
        replace(more, h("button", { type: "button", class: "secondary", id: "deliveries-more", onclick: () => void loadDeliveries(true) }, "More deliveries"));
      }
      cursor = next;
    } catch (e) {
      if (!left) replace(deliveriesOut, h("p", { class: "error", role: "alert" }, errorText(e)));
    }
  };

  const select = (id: string | null) => {
    selected = id;
    cursor = null;
    pages = 0;
    render();
    const w = subscriptions.find((s) => s.id === id);
    if (!w) {
      deliveries.hidden = true;
      return;
    }
    deliveries.hidden = false;
    replace(deliveriesTitle, "Deliveries to ", h("code", null, w.url));
    replace(deliveriesOut, "Loading…");
    replace(more);
    void loadDeliveries(false);
  };

  /** An action on one subscription; the list and its deliveries are read again afterwards. */
  const act = async (button: HTMLButtonElement, work: () => Promise<string>) => {
    // The table is drawn again afterwards: the focus goes back to the same place in the row.
    const row = button.closest("tr")?.getAttribute("data-webhook");
    const index = Array.from(button.parentElement?.children ?? []).indexOf(button);
    button.disabled = true;
    try {
      notify(await work());
    } catch (e) {
      notify(errorText(e), "error");
    } finally {
      button.disabled = false;
    }
    await load();
    if (selected) await loadDeliveries(false);
    const again = row ? list.querySelector(`tr[data-webhook="${CSS.escape(row)}"] .row-actions`)?.children[index] : null;
    if (again instanceof HTMLElement && !button.isConnected && document.activeElement === document.body) again.focus();
  };

  const render = () => {
    // Drawn again when something changed, or a minute went by (the times): a focused button
    // keeps its focus otherwise.
    const text = JSON.stringify([subscriptions, selected, Math.floor(Date.now() / 60_000)]);
    if (text === shownList) return;
    shownList = text;
    replace(list, subscriptions.length === 0 ? h("p", null, "No subscriptions yet: subscribe a URL below.") :
      h("div", { class: "table-wrap" }, h("table", { id: "webhooks-table" },
        h("thead", null, h("tr", null, ["URL", "Event types", "Description", "State", "Created", "Actions"]
          .map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", null, subscriptions.map((w) => {
          const path = `/api/webhooks/${encodeURIComponent(w.id)}`;
          const isSelected = w.id === selected;
          return h("tr", { "data-webhook": w.id, class: isSelected ? "selected" : null },
            h("th", { scope: "row" }, h("code", { class: "url" }, w.url), h("div", { class: "small" }, w.id)),
            h("td", null, h("ul", { class: "event-types" }, w.eventTypes.map((t) => h("li", null, h("code", null, t))))),
            h("td", null, w.description ?? ""),
            h("td", null, stateBadge(w),
              w.paused ? h("div", { class: "small" }, `${w.paused.reason}, ${ago(w.paused.at)}`) : null),
            h("td", { title: when(w.createdAt) }, ago(w.createdAt)),
            h("td", null, h("div", { class: "row-actions" },
              h("button", {
                type: "button", class: "secondary", "aria-pressed": String(isSelected),
                onclick: () => select(isSelected ? null : w.id),
              }, "Deliveries"),
              h("button", {
                type: "button", class: "secondary",
                onclick: (ev: Event) => void act(ev.currentTarget as HTMLButtonElement, async () => {
                  const queued = await send<{ eventId: string }>("POST", `${path}/test`);
                  return `Test event queued (${queued?.eventId ?? "no id"}).`;
                }).then(() => {
                  // Its deliveries, where the test shows.
                  if (selected !== w.id) select(w.id);
                }),
              }, "Test"),
              w.paused
                ? h("button", {
                  type: "button", class: "secondary",
                  onclick: (ev: Event) => void act(ev.currentTarget as HTMLButtonElement, async () => {
                    await send("POST", `${path}/resume`);
                    return "Resumed: what waited goes out now, oldest first.";
                  }),
                }, "Resume")
                : h("button", {
                  type: "button", class: "secondary",
                  onclick: (ev: Event) => void act(ev.currentTarget as HTMLButtonElement, async () => {
                    await send("POST", `${path}/pause`);
                    return "Paused: events keep queueing until you resume.";
                  }),
                }, "Pause"),
              h("button", {
                type: "button", class: "danger",
                onclick: (ev: Event) => {
                  if (!window.confirm(`Delete the subscription to ${w.url}? Its deliveries, pending ones included, are deleted with it.`)) return;
                  void act(ev.currentTarget as HTMLButtonElement, async () => {
                    await send("DELETE", path);
                    if (selected === w.id) select(null);
                    return "Subscription deleted.";
                  });
                },
              }, "Delete"))));
        })))));
  };

  // The creation form.
  const url = h("input", { id: "webhook-url", type: "url", required: true, autocomplete: "off", placeholder: "https://hooks.example.com/roomlink", "aria-describedby": "webhook-url-error" });
  const urlError = h("span", { class: "field-error", id: "webhook-url-error" });
  const boxes = EVENT_TYPES.map(([name]) => h("input", { type: "checkbox", id: `webhook-type-${name}`, value: name }));
  const typesError = h("span", { class: "field-error", id: "webhook-types-error" });
  const description = h("input", { id: "webhook-description", autocomplete: "off", maxlength: 200 });
  const formError = h("p", { class: "error", role: "alert", id: "webhook-form-error" });
  const submit = h("button", { type: "submit" }, "Subscribe");
  const showSecret = (created: Webhook & { secret?: string }) => {
    const secret = created.secret ?? "";
    const code = h("code", { id: "webhook-secret" }, secret || "(none)");
    replace(secretBox, h("div", { class: "card secret", role: "alert" },
      h("h3", null, `Signing secret of ${created.url}`),
      h("p", null, h("strong", null, "Copy it now: it is not shown again."),
        " Your receiver checks each delivery's webhook-signature with it. roomlink cannot show it again; if it is lost, delete the subscription and create a new one."),
      code,
      h("p", { class: "buttons" },
        h("button", {
          type: "button", class: "secondary", onclick: async () => {
            try {
              await navigator.clipboard.writeText(secret);
              notify("Secret copied.");
            } catch {
              window.getSelection()?.selectAllChildren(code);
              notify("Select the secret and copy it.", "error");
            }
          },
        }, "Copy"),
        h("button", { type: "button", onclick: () => replace(secretBox) }, "I have copied it"))));
  };
  const form = h("form", {
    novalidate: true, onsubmit: async (ev: Event) => {
      ev.preventDefault();
      for (const el of [formError, urlError, typesError]) el.textContent = "";
      url.removeAttribute("aria-invalid");
      const eventTypes = boxes.filter((b) => b.checked).map((b) => b.value);
      const body: Record<string, unknown> = { url: url.value.trim(), eventTypes };
      if (description.value.trim()) body.description = description.value.trim();
      submit.disabled = true;
      try {
        const created = await send<Webhook & { secret?: string }>("POST", "/api/webhooks", body);
        url.value = "";
        description.value = "";
        for (const b of boxes) b.checked = false;
        if (created) showSecret(created);
        notify("Subscribed.");
        await load();
      } catch (e) {
        const field = e instanceof ApiError ? e.field() ?? (/^eventTypes\b/.test(e.message) ? "eventTypes" : null) : null;
        if (field === "url") {
          urlError.textContent = errorText(e);
          url.setAttribute("aria-invalid", "true");
          url.focus();
        } else if (field === "eventTypes") {
          typesError.textContent = errorText(e);
          boxes[0].focus();
        } else {
          formError.textContent = errorText(e);
        }
      } finally {
        submit.disabled = false;
      }
    },
  },
    h("div", { class: "field" }, h("label", { for: "webhook-url" }, "URL (https:// or http://)"), url, urlError),
    h("fieldset", { class: "event-types", "aria-describedby": "webhook-types-error" },
      h("legend", null, "Event types"),
      h("div", { class: "checks" }, EVENT_TYPES.map(([name, what], i) =>
        h("label", { class: "check", for: `webhook-type-${name}` }, boxes[i], h("code", null, name), h("span", { class: "small" }, what)))),
      typesError),
    h("div", { class: "field" }, h("label", { for: "webhook-description" }, "Description (optional)"), description),
    formError,
    submit);
  const create = h("section", { class: "card", "aria-labelledby": "webhook-create-title" },
    h("h2", { id: "webhook-create-title" }, "Subscribe a URL"), form);

  const load = async () => {
    try {
      subscriptions = await get<Webhook[]>("/api/webhooks");
      if (left) return;
      if (!built) {
        built = true;
        main.append(secretBox, list, deliveries, create);
      }
      if (selected && !subscriptions.some((s) => s.id === selected)) select(null);
      render();
    } catch (e) {
      if (left) return;
      if (e instanceof ApiError && e.status === 403) {
        // The service refuses every webhook call to a read-only caller: say so, once.
        window.clearInterval(timer);
        replace(main, h("h1", null, "Webhooks"),
          h("p", { id: "webhooks-forbidden", class: "card" },
            h("strong", null, "Webhooks need the read-write role (ROLE_READWRITE)."),
            " A subscription's URL may carry a receiver's token and its deliveries describe the whole fleet, so only read-write users may see or change them. Ask an administrator of your enterprise."));
        return;
      }
      shownList = "";
      replace(list, h("p", { class: "error", role: "alert" }, errorText(e)));
      if (!built) main.append(list);
    }
  };

  replace(main, h("h1", null, "Webhooks"),
    h("p", null, "roomlink POSTs the events a subscription names to its URL, signed as Standard Webhooks 1.0 describes (webhook-id, webhook-timestamp, webhook-signature). A failed delivery is retried for about 28 hours, then the subscription pauses; events keep queueing while it is paused. Test sends a webhook.test event to that subscription alone."));
  void load();
  const timer = window.setInterval(() => {
    void load();
    // The first page only: pages added with "More deliveries" stay as they are.
    if (selected && pages === 1) void loadDeliveries(false);
  }, 5000);
  return () => {
    left = true;
    window.clearInterval(timer);
  };
}

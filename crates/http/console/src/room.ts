// One room: live status, controls, pairing code (text and QR), paired devices, its upcoming
// meetings, its fields (PATCH, errors beside the field), its inventory, health history, recent
// failures and audit entries.

import { ApiError, AuditEntry, Endpoint, Failure, Listener, canWrite, get, request, send } from "./api";
import { Child, ago, h, notify, replace, when } from "./dom";
import { Room, poke, stateOf, subscribe } from "./live";
import { mutedBadge, stateBadge } from "./rooms";
import { qrSvg } from "./qr";
import { FieldSpec, endpointFields, label } from "./schema";
import { InventoryRecord, modelOf, peripheralList } from "./inventory";
import { follow } from "./stream";
import { State as HealthState, badge as healthBadge } from "./health";

function section(title: string, id: string, ...children: Child[]): HTMLElement {
  return h("section", { "aria-labelledby": id, class: "card" }, h("h2", { id }, title), ...children);
}

function errorText(e: unknown): string {
  if (e instanceof ApiError) return `${e.errorName}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}

export function roomPage(main: HTMLElement, id: string): () => void {
  const path = `/api/endpoints/${encodeURIComponent(id)}`;
  const title = h("h1", null, "Room");
  const live = h("div", { class: "live", id: "room-live", "aria-live": "polite" });
  const controls = h("div");
  const pairing = h("div", null, "Loading…");
  const paired = h("div", null, "Loading…");
  const fields = h("div", null, "Loading…");
  const failures = h("div", null, "Loading…");
  const inventory = h("div", { id: "room-inventory" }, "Loading…");
  const health = h("div", { id: "room-health" }, "Loading…");
  const meetings = h("div", { id: "room-meetings" }, "Loading…");
  const audit = h("div", null, canWrite() ? "Loading…" : "The audit log is for ROLE_READWRITE users.");
  let endpoint: Endpoint | null = null;

  replace(main,
    h("p", null, h("a", { href: "#/rooms" }, "← All rooms")),
    title, live,
    section("Control", "control-title", controls),
    h("div", { class: "columns" },
      section("Pairing code", "pairing-title", pairing),
      section("Paired devices", "paired-title", paired)),
    section("Upcoming meetings", "meetings-title", meetings),
    section("Fields", "fields-title", fields),
    section("Inventory", "inventory-title", inventory),
    section("Health history", "health-title", health),
    section("Recent failures", "failures-title", failures),
    section("Audit entries", "audit-title", audit));

  const command = async (label: string, op: string, query?: Record<string, string>) => {
    try {
      await request(`${path}/${op}`, { method: "POST", query });
      notify(`${label}: sent`);
    } catch (e) {
      notify(`${label} failed: ${errorText(e)}`, "error");
    }
    poke();
    void loadFailures();
    void loadAudit();
  };

  const meeting = h("input", { id: "join-meeting", name: "meetingid", inputmode: "numeric", autocomplete: "off", required: true });
  const passcode = h("input", { id: "join-passcode", name: "passcode", inputmode: "numeric", autocomplete: "off" });
  const dtmf = h("input", { id: "dtmf", name: "dtmfString", autocomplete: "off", required: true });
  replace(controls,
    h("form", {
      class: "inline", onsubmit: (ev: Event) => {
        ev.preventDefault();
        const q: Record<string, string> = { meetingid: meeting.value.trim() };
        if (passcode.value.trim()) q.passcode = passcode.value.trim();
        void command("Join", "join", q);
      },
    },
      h("div", { class: "field" }, h("label", { for: "join-meeting" }, "Meeting id"), meeting),
      h("div", { class: "field" }, h("label", { for: "join-passcode" }, "Passcode (optional)"), passcode),
      h("button", { type: "submit" }, "Join")),
    h("div", { class: "buttons" },
      h("button", { type: "button", class: "danger", onclick: () => void command("Hang up", "hangup") }, "Hang up"),
      h("button", { type: "button", onclick: () => void command("Mute", "mutemicrophone") }, "Mute"),
      h("button", { type: "button", onclick: () => void command("Unmute", "unmutemicrophone") }, "Unmute")),
    h("form", {
      class: "inline", onsubmit: (ev: Event) => {
        ev.preventDefault();
        void command("DTMF", "senddtmf", { dtmfString: dtmf.value.trim() });
      },
    },
      h("div", { class: "field" }, h("label", { for: "dtmf" }, "DTMF tones (0-9, *, #)"), dtmf),
      h("button", { type: "submit" }, "Send tones")));

  const renderLive = (room: Room | undefined) => {
    if (!room) {
      replace(live, "Waiting for the status…");
      return;
    }
    title.textContent = room.endpoint.name;
    replace(live,
      stateBadge(stateOf(room)), " ",
      h("span", null, "Microphone: "), mutedBadge(room), " ",
      h("span", { class: "muted-text" },
        `Last update ${room.status?.timestamp ? ago(room.status.timestamp) : "never"}`,
        room.listener ? ` · listener ${room.listener.name}` : ""));
  };
  const stop = subscribe((p) => renderLive(p.rooms.find((r) => r.endpoint.id === id)));

  const loadPairing = async () => {
    try {
      const code = await get<{ id: string; code: string }>(`${path}/currentpairingcode`);
      replace(pairing,
        h("p", { class: "pairing-code", id: "pairing-code" }, code.code),
        qrSvg(code.code, `QR code of pairing code ${code.code}`));
    } catch (e) {
      replace(pairing, h("p", null, errorText(e)));
    }
    try {
      const list = await get<{ username: string | null; firstName: string | null; lastName: string | null; clientDeviceType: string | null; creationDate: number; heartbeatDate: number }[]>(`${path}/paired`);
      replace(paired, list.length === 0 ? h("p", null, "No device is paired.") :
        h("ul", null, list.map((p) => h("li", null,
          [p.firstName, p.lastName].filter(Boolean).join(" ") || p.username || "unknown user",
          ` (${p.clientDeviceType ?? "device"}), paired ${when(p.creationDate)}, last seen ${ago(p.heartbeatDate)}`))));
    } catch (e) {
      replace(paired, h("p", null, errorText(e)));
    }
  };

  const loadFailures = async () => {
    try {
      const all = await get<Failure[]>("/api/failures");
      const mine = all.filter((f) => f.subjectId === id ||
        (endpoint?.listenerServiceId && f.subjectId === endpoint.listenerServiceId));
      replace(failures, mine.length === 0 ? h("p", null, "No recent failure for this room or its listener.") :
        h("ul", { class: "events" }, mine.slice(0, 20).map((f) => h("li", null,
          h("time", null, when(f.errorDate)), " ",
          h("strong", null, f.errorName), " ", f.errorMessage,
          f.subjectId === id ? "" : h("span", { class: "muted-text" }, " (its listener)")))));
    } catch (e) {
      replace(failures, h("p", null, errorText(e)));
    }
  };

  const loadInventory = async () => {
    try {
      const r = await get<InventoryRecord>(`${path}/inventory`);
      const i = r.inventory;
      replace(inventory, !i ? h("p", null, r.lastFailure ? `Not read: ${r.lastFailure.errorName}: ${r.lastFailure.errorMessage}` : "Not read yet: rooms are read during the status poll rounds.") : [
        h("dl", { class: "facts" },
          [["Product", i.product], ["Model", modelOf(i)], ["Serial number", i.serialNumber], ["Software", i.softwareVersion],
            ["Read", r.readAt ? ago(r.readAt) : ""]]
            .filter(([, v]) => v).map(([k, v]) => [h("dt", null, k), h("dd", null, v)])),
        peripheralList(i),
        r.lastFailure ? h("p", { class: "error small" }, `Last try failed: ${r.lastFailure.errorName}`) : ""]);
    } catch (e) {
      replace(inventory, h("p", null, errorText(e)));
    }
  };

  const loadHealth = async () => {
    try {
      const changes = await get<{ at: number; state: HealthState; previousState: HealthState | null; reasons: { code: string; message: string }[] }[]>(`${path}/health`);
      replace(health, changes.length === 0 ? h("p", null, "No change recorded: the room has been ok since roomlink first saw it (or is not observed yet).") :
        h("ul", { class: "events", id: "health-history" }, changes.map((c) => h("li", { "data-state": c.state },
          h("time", null, when(c.at)), " ", healthBadge(c.state),
          c.previousState ? h("span", { class: "muted-text" }, ` (was ${c.previousState})`) : "",
          c.reasons.length ? h("ul", null, c.reasons.map((r) => h("li", { "data-reason": r.code }, r.message))) : ""))));
    } catch (e) {
      replace(health, h("p", null, errorText(e)));
    }
  };

  // The next day's meetings, as the service reads them from the room's calendar now.
  const loadMeetings = async (room: Endpoint) => {
    if (!room.calendarId || !room.calendarType) {
      replace(meetings, h("p", null, "This room has no calendar: set its calendarId and calendarType below."));
      return;
    }
    try {
      const list = await get<Meeting[]>(`${path}/meetings`);
      const redacted = room.meetingPrivacyMode === "REDACTED";
      const joins = room.autoJoinMode === "ENABLED";
      replace(meetings, list.length === 0 ? h("p", null, "No meeting in the next 24 hours.") :
        h("ul", { class: "events", id: "meeting-list" }, list.map((m) => h("li", { "data-uid": m.uid },
          h("time", null, `${clock(m.start)}–${clock(m.end)}`), " ",
          m.title ? h("strong", null, m.title) : h("em", null, redacted ? "Private meeting" : "No title"),
          h("div", { class: "small" }, m.dial ? (joins ? `Joins automatically: ${m.dial.meetingId ?? "the IVR"}` : `Dialable: ${m.dial.meetingId ?? "the IVR"}`) :
            m.notDialable ? `Not dialable: ${m.notDialable}` : "No meeting link")))),
        redacted ? h("p", { class: "small muted-text" }, "meetingPrivacyMode is REDACTED: titles are not shown here, in the API or on the room's panel.") : "");
    } catch (e) {
      replace(meetings, h("p", { class: "error" }, `The calendar could not be read: ${errorText(e)}`));
    }
  };

  const loadAudit = async () => {
    if (!canWrite()) return;
    try {
      const entries = await get<AuditEntry[]>("/api/auditlog", { targetId: id, limit: 20 });
      replace(audit, entries.length === 0 ? h("p", null, "No audit entry names this room.") :
        h("ul", { class: "events" }, entries.map((a) => h("li", null,
          h("time", null, when(a.at)), " ", h("code", null, a.operation), " by ",
          a.actor.username ?? a.actor.id, " — ", a.outcome, a.detail ? ` (${a.detail})` : ""))));
    } catch (e) {
      replace(audit, h("p", null, errorText(e)));
    }
  };

  const loadFields = async () => {
    try {
      const [specs, current, listeners] = await Promise.all([
        endpointFields(), get<Endpoint>(path), get<Listener[]>("/api/listenerservices")]);
      endpoint = current;
      title.textContent = current.name;
      void loadMeetings(current);
      replace(fields, fieldForm(path, specs, current, listeners, (updated) => {
        endpoint = updated;
        title.textContent = updated.name;
        void loadMeetings(updated);
        poke();
        void loadAudit();
      }));
    } catch (e) {
      replace(fields, h("p", null, errorText(e)));
    }
    void loadFailures();
  };

  void loadFields();
  void loadInventory();
  void loadHealth();
  void loadPairing();
  void loadAudit();
  const unfollow = follow(["inventory", "health"], () => {
    void loadInventory();
    void loadHealth();
  });
  return () => {
    stop();
    unfollow();
  };
}

/** One meeting as `GET /api/endpoints/{id}/meetings` answers it. */
interface Meeting {
  uid: string;
  title: string | null;
  start: number;
  end: number;
  dial: { meetingId?: string | null } | null;
  notDialable: string | null;
}

/** The time of day in this browser's time zone (the window is the next 24 hours). */
function clock(ms: number): string {
  return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

function display(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** The fields as a form: only changed fields are sent (PATCH); an `Invalid` naming a field is
 * shown beside it. Read-only callers see the values without inputs. */
function fieldForm(
  path: string, specs: FieldSpec[], endpoint: Endpoint, listeners: Listener[], saved: (e: Endpoint) => void,
): HTMLElement {
  const writable = canWrite();
  if (!writable) {
    return h("dl", { class: "fields" }, specs.map((s) => [
      h("dt", null, label(s.name)), h("dd", null, display(endpoint[s.name]) || "—")]));
  }
  const inputs = new Map<string, HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>();
  const errors = new Map<string, HTMLElement>();
  const formError = h("p", { class: "error", role: "alert" });
  const rows = specs.map((s) => {
    const inputId = `field-${s.name}`;
    const errorId = `${inputId}-error`;
    let input: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
    const value = display(endpoint[s.name]);
    if (s.name === "listenerServiceId") {
      // The enterprise's listeners by name (the id stays the value).
      input = h("select", { id: inputId, name: s.name, "aria-describedby": errorId },
        h("option", { value: "" }, "(none)"),
        listeners.map((l) => h("option", { value: l.id, selected: l.id === value }, `${l.name} (${l.id})`)),
        value && !listeners.some((l) => l.id === value) ? h("option", { value, selected: true }, value) : null);
    } else if (s.kind === "enum") {
      input = h("select", { id: inputId, name: s.name, "aria-describedby": errorId },
        h("option", { value: "" }, "(none)"),
        s.values.map((v) => h("option", { value: v, selected: v === value }, v)));
    } else if (s.kind === "object") {
      input = h("textarea", { id: inputId, name: s.name, rows: 2, "aria-describedby": errorId });
      input.value = value;
    } else {
      input = h("input", {
        id: inputId, name: s.name, "aria-describedby": errorId, autocomplete: "off",
        type: s.kind === "text" ? "text" : "number", step: s.kind === "number" ? "any" : null,
      });
      input.value = value;
    }
    input.dataset.original = value;
    inputs.set(s.name, input);
    const error = h("span", { class: "field-error", id: errorId });
    errors.set(s.name, error);
    return h("div", { class: "field" }, h("label", { for: inputId }, label(s.name)), input, error);
  });
  const password = h("input", { id: "field-password", name: "password", type: "password", autocomplete: "new-password", "aria-describedby": "field-password-error" });
  const passwordError = h("span", { class: "field-error", id: "field-password-error" });
  errors.set("password", passwordError);

  const form = h("form", {
    class: "field-form", novalidate: true,
    onsubmit: async (ev: Event) => {
      ev.preventDefault();
      formError.textContent = "";
      for (const [, el] of errors) el.textContent = "";
      for (const [, el] of inputs) el.removeAttribute("aria-invalid");
      const patch: Record<string, unknown> = {};
      for (const s of specs) {
        const input = inputs.get(s.name)!;
        if (input.value === input.dataset.original) continue;
        const raw = input.value.trim();
        if (raw === "") patch[s.name] = null;
        else if (s.kind === "integer" || s.kind === "number") patch[s.name] = Number(raw);
        else if (s.kind === "object") {
          try {
            patch[s.name] = JSON.parse(raw);
          } catch {
            errors.get(s.name)!.textContent = "Not valid JSON.";
            input.setAttribute("aria-invalid", "true");
            input.focus();
            return;
          }
        } else patch[s.name] = input.value;
      }
      if (password.value) patch.password = password.value;
      if (Object.keys(patch).length === 0) {
        notify("Nothing changed.");
        return;
      }
      try {
        const updated = await send<Endpoint>("PATCH", path, patch);
        if (updated) {
          for (const s of specs) {
            const input = inputs.get(s.name)!;
            input.value = display(updated[s.name]);
            input.dataset.original = input.value;
          }
          password.value = "";
          saved(updated);
        }
        notify("Saved.");
      } catch (e) {
        const field = e instanceof ApiError ? e.field() : null;
        const target = field ? errors.get(field) : undefined;
        if (field && target) {
          target.textContent = (e as ApiError).message;
          const input = field === "password" ? password : inputs.get(field);
          input?.setAttribute("aria-invalid", "true");
          input?.focus();
        } else {
          formError.textContent = errorText(e);
        }
      }
    },
  },
    formError,
    h("div", { class: "field-grid" }, rows,
      h("div", { class: "field" }, h("label", { for: "field-password" }, "New password (write-only; blank keeps it)"), password, passwordError)),
    h("button", { type: "submit" }, "Save changes"));
  return form;
}

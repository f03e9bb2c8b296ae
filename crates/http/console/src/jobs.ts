// Template jobs (/api/jobs, issue #36): the recent jobs as a table, and one job's progress with
// every room's outcome, followed live through the event stream's `jobs` topic (or read every
// 2 s while the stream is down and the job runs). A running job can be cancelled (read-write
// users; POST /api/jobs/{id}/cancel): rooms not begun stay `pending`, shown as not done. The
// Templates page holds both.

import { ApiError, canWrite, get, send } from "./api";
import { ago, h, notify, replace, when } from "./dom";
import { Connection, follow, watchConnection } from "./stream";

export type Value = string | number;

type Outcome = "applied" | "unchanged" | "unsupported" | "refused" | "unreadable" | "skipped";

interface JobSetting {
  to: Value;
  outcome?: Outcome;
  from?: Value;
  reason?: string;
}

interface JobRoom {
  endpointId: string;
  name: string;
  state: "pending" | "writing" | "done";
  settings: Record<string, JobSetting>;
  unreachable?: { code: string; message: string };
}

export interface Job {
  id: string;
  templateId: string;
  templateName: string;
  kind: "apply" | "undo";
  undoes: string | null;
  /** `cancelled`: stopped on request; its rooms not begun stay `pending`. */
  state: "running" | "finished" | "cancelled";
  createdBy: string;
  createdAt: number;
  finishedAt: number | null;
  progress: {
    rooms: number; done: number; unreachable: number; applied: number; unchanged: number;
    unsupported: number; refused: number; unreadable: number; skipped: number;
  };
  rooms: JobRoom[];
}

/** While the stream is down, how often the job being watched is read. */
const POLL_MS = 2000;

/** A value as the page shows it: text in quotes only when it is empty. */
export function shown(v: Value | null | undefined): string {
  if (v === null || v === undefined) return "(none)";
  if (v === "") return '""';
  return String(v);
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** An API failure in words; `action` names what a 403 refused, so a read-only user learns why. */
export function errorText(e: unknown, action?: string): string {
  if (e instanceof ApiError) {
    if (e.status === 403 && action) {
      return `${action} needs the read-write role (ROLE_READWRITE). The service answered ${e.errorName}: ${e.message}`;
    }
    return `${e.errorName}: ${e.message}`;
  }
  return e instanceof Error ? e.message : String(e);
}

function title(job: Job): string {
  return job.kind === "undo" ? `Undo of “${job.templateName}”` : `Apply “${job.templateName}”`;
}

function progressText(job: Job): string {
  return `${job.progress.done} of ${plural(job.progress.rooms, "room")} done`;
}

/** The rooms a cancelled job left before their end (pending, or caught writing). */
function notDone(job: Job): number {
  return job.rooms.filter((r) => r.state !== "done").length;
}

/** A room's state in words: a cancelled job's unfinished rooms are said to be not done. */
function roomBadge(job: Job, room: JobRoom): HTMLElement {
  if (job.state === "cancelled" && room.state !== "done") {
    const text = room.state === "writing" ? "stopped writing" : "not done";
    return h("span", { class: `badge room-${room.state} room-not-done`, "data-state": room.state }, text);
  }
  return h("span", { class: `badge room-${room.state}`, "data-state": room.state }, room.state);
}

/** Whether `a` is an older picture of the same job than `b` (answers may cross). */
function behind(a: Job, b: Job): boolean {
  if (a.state !== b.state) return a.state === "running";
  return a.progress.done < b.progress.done;
}

function stateBadge(job: Job): HTMLElement {
  return h("span", { class: `badge job-${job.state}`, "data-state": job.state }, job.state);
}

/** One setting of one room: its outcome once the room is done, else what it is to become (or,
 * the job cancelled, what it was not written, or may have been). */
function settingCell(job: Job, room: JobRoom, s: JobSetting | undefined): HTMLElement {
  if (!s) return h("td", { class: "plan-key plan-missing muted-text", title: "not written by this job" }, "—",
    h("span", { class: "visually-hidden" }, "not written by this job"));
  const outcome = s.outcome;
  if (!outcome) {
    if (job.state === "cancelled") {
      return h("td", { class: "plan-key job-not-done muted-text", "data-outcome": "" },
        room.state === "writing" ? "may be written: " : "not written: ", shown(s.to));
    }
    return h("td", { class: "plan-key job-waiting muted-text", "data-outcome": "" },
      room.state === "writing" ? "writing… " : "to write: ", shown(s.to));
  }
  const word = h("span", { class: `job-outcome outcome-${outcome}` }, outcome);
  switch (outcome) {
    case "applied":
      return h("td", { class: "plan-key job-applied", "data-outcome": outcome },
        word, h("div", null, h("span", { class: "plan-from" }, shown(s.from)), " → ", h("strong", null, shown(s.to))));
    case "unchanged":
      return h("td", { class: "plan-key plan-unchanged", "data-outcome": outcome },
        word, h("div", null, `= ${shown(s.to)}`));
    default:
      // Refused, unreadable, unsupported, skipped: left as it was, with the room's reason.
      return h("td", { class: "plan-key job-left", "data-outcome": outcome },
        word, s.reason ? h("div", { class: "small job-reason" }, s.reason) : null);
  }
}

export interface JobsOptions {
  /** The keys in the order the page shows settings (the catalog's). */
  order: (keys: string[]) => string[];
}

/** The recent jobs card and the job card, kept up to date until `leave` is called. */
export function jobsSection(options: JobsOptions): {
  list: HTMLElement;
  view: HTMLElement;
  show: (job: Job, focus: boolean) => void;
  refresh: () => void;
  leave: () => void;
} {
  const listOut = h("div", { id: "template-jobs-out" }, "Loading…");
  const list = h("section", { class: "card", id: "template-jobs", "aria-labelledby": "template-jobs-title" },
    h("h2", { id: "template-jobs-title" }, "Recent jobs"),
    h("p", { class: "small field-help" }, "The 50 newest applies and undos of the enterprise. One job runs at a time."),
    listOut);
  const viewTitle = h("h2", { id: "template-job-title", tabindex: -1 }, "Job");
  const viewOut = h("div", { id: "template-job-out" });
  const view = h("section", { class: "card", id: "template-job", "aria-labelledby": "template-job-title", hidden: true },
    viewTitle, viewOut);
  // Short messages for screen readers (progress, finished); the table itself is not announced.
  const status = h("p", { class: "visually-hidden", role: "status", id: "template-job-status" });

  let jobs: Job[] = [];
  let watched: Job | null = null;
  let drawn = "";
  let listed = false;
  let left = false;
  let connection: Connection = "idle";
  let poll: number | null = null;
  // Each read is numbered: an answer older than the newest one asked for is dropped.
  let listRead = 0;
  let jobRead = 0;

  const renderList = () => {
    if (jobs.length === 0) {
      replace(listOut, h("p", null, "No jobs yet: apply a template from its plan."));
      return;
    }
    replace(listOut, h("div", { class: "table-wrap" }, h("table", { id: "template-jobs-table" },
      h("thead", null, h("tr", null, ["Template", "Kind", "State", "Progress", "Started by", "Started", ""].map((c) =>
        h("th", { scope: "col" }, c)))),
      h("tbody", null, jobs.map((j) => h("tr", { "data-job": j.id, class: watched?.id === j.id ? "selected" : null },
        h("th", { scope: "row" }, j.templateName),
        h("td", null, j.kind),
        h("td", null, stateBadge(j)),
        h("td", null, progressText(j),
          j.progress.applied ? h("div", { class: "small" }, `${plural(j.progress.applied, "setting")} applied`) : null,
          j.state === "cancelled" ? h("div", { class: "small" }, `${plural(notDone(j), "room")} not done`) : null),
        h("td", null, j.createdBy),
        h("td", { title: when(j.createdAt) }, ago(j.createdAt)),
        h("td", null, h("button", {
          type: "button", class: "secondary", "aria-label": `Open the job: ${title(j)}, ${when(j.createdAt)}`,
          onclick: () => show(j, true),
        }, "Open"))))))));
  };

  const loadList = async () => {
    const run = ++listRead;
    try {
      const answered = await get<Job[]>("/api/jobs");
      if (left || run !== listRead) return;
      jobs = answered;
      renderList();
      // Drawn again for its "undone by" links; the list's copy only if it is not behind.
      if (watched) {
        const fresh = jobs.find((j) => j.id === watched?.id);
        draw(fresh && !behind(fresh, watched) ? fresh : watched);
      } else if (!listed && jobs[0]?.state === "running") {
        // Back on the page while a job runs: its progress is what one came back for.
        show(jobs[0], false);
      }
      listed = true;
    } catch (e) {
      if (!left && run === listRead) replace(listOut, h("p", { class: "error", role: "alert" }, errorText(e)));
    }
  };

  const loadJob = async () => {
    const id = watched?.id;
    if (!id) return;
    const run = ++jobRead;
    try {
      const job = await get<Job>(`/api/jobs/${encodeURIComponent(id)}`);
      if (left || run !== jobRead || watched?.id !== id) return;
      draw(job);
      // Keeps the list's row in step without reading all 50 jobs again.
      const i = jobs.findIndex((j) => j.id === job.id);
      if (i >= 0) {
        jobs[i] = job;
        renderList();
      }
    } catch (e) {
      if (left || run !== jobRead) return;
      // The next answer is drawn even if it equals the last one drawn.
      drawn = "";
      replace(viewOut, h("p", { class: "error", role: "alert" }, errorText(e)));
    }
  };

  /** Reads the watched job every 2 s exactly while it runs and the stream is not live. */
  const syncPoll = () => {
    const wanted = !left && watched?.state === "running" && connection !== "live";
    if (wanted && poll === null) poll = window.setInterval(() => void loadJob(), POLL_MS);
    else if (!wanted && poll !== null) {
      window.clearInterval(poll);
      poll = null;
    }
  };

  // A refused cancel (Conflict: the job ended meanwhile), kept across the redraw it causes.
  let cancelFailure: { id: string; text: string } | null = null;

  const cancel = async (job: Job, button: HTMLButtonElement) => {
    const remaining = job.rooms.length - job.progress.done;
    if (!window.confirm(`Cancel the ${job.kind} of “${job.templateName}” while it runs? The ${plural(remaining, "room")} not done yet are left as they are; `
      + "a room being written may keep part of it. "
      + (job.kind === "apply" ? "What was applied stays, and the job can still be undone." : "What was written back stays."))) return;
    button.disabled = true;
    cancelFailure = null;
    try {
      const cancelled = await send<Job>("POST", `/api/jobs/${encodeURIComponent(job.id)}/cancel`);
      if (left || !cancelled) return;
      notify("Job cancelled.");
      show(cancelled, true);
      void loadList();
    } catch (e) {
      if (left) return;
      cancelFailure = { id: job.id, text: errorText(e, "Cancelling a job") };
      // Drawn again with the message; a Conflict means it ended meanwhile: read it again.
      drawn = "";
      if (watched) draw(watched);
      if (e instanceof ApiError && e.status === 409) {
        void loadJob();
        void loadList();
      }
    } finally {
      button.disabled = false;
    }
  };

  const undo = async (job: Job, button: HTMLButtonElement, error: HTMLElement) => {
    const p = job.progress;
    const rooms = job.rooms.filter((r) => Object.values(r.settings).some((s) => s.outcome === "applied")).length;
    const caught = job.rooms.filter((r) => r.state === "writing").length;
    if (!window.confirm(`Undo “${job.templateName}”: write back the ${plural(p.applied, "setting")} it applied on ${plural(rooms, "room")}`
      + (caught ? ` and what it may have written on the ${plural(caught, "room")} it was cancelled writing` : "")
      + "? A setting changed on a room since is left as it is.")) return;
    button.disabled = true;
    error.textContent = "";
    try {
      const started = await send<Job>("POST", `/api/jobs/${encodeURIComponent(job.id)}/undo`);
      if (left || !started) return;
      notify("Undo started.");
      show(started, true);
      void loadList();
    } catch (e) {
      if (!left) error.textContent = errorText(e, "Undoing a job");
    } finally {
      button.disabled = false;
    }
  };

  const draw = (job: Job) => {
    const was = watched;
    watched = job;
    syncPoll();
    const undone = jobs.filter((j) => j.undoes === job.id);
    const text = JSON.stringify([job, undone.map((u) => u.id)]);
    // Unchanged answers are not drawn again: the Undo button keeps its focus.
    if (text === drawn) return;
    drawn = text;
    if (was?.id === job.id && was.state === "running" && job.state !== "running") status.textContent = `${title(job)} ${job.state}.`;
    else if (was?.id !== job.id || was.progress.done !== job.progress.done) status.textContent = `${title(job)}: ${progressText(job)}.`;
    replace(viewTitle, title(job), " ", stateBadge(job));
    const p = job.progress;
    const keys = options.order([...new Set(job.rooms.flatMap((r) => Object.keys(r.settings)))]);
    const facts = h("p", { class: "summary", id: "template-job-facts" },
      `${job.kind === "undo" ? "Undo" : "Apply"} started by ${job.createdBy} ${when(job.createdAt)}`,
      job.finishedAt ? `, ${job.state === "cancelled" ? "cancelled" : "finished"} ${when(job.finishedAt)}` : "",
      job.undoes ? [" · undoes ", h("button", {
        type: "button", class: "link", onclick: () => openId(job.undoes as string),
      }, "the apply job")] : null,
      undone.length ? [" · undone by ", undone.map((u, i) => [i ? ", " : "", h("button", {
        type: "button", class: "link", onclick: () => show(u, true),
      }, `the undo of ${when(u.createdAt)}`)])] : null);
    const bar = h("div", { class: "job-progress" },
      h("label", { for: "template-job-progress" }, progressText(job)),
      h("progress", { id: "template-job-progress", max: Math.max(p.rooms, 1), value: p.done }));
    const summary = h("p", { class: "summary", id: "template-job-summary" },
      h("strong", null, `${p.applied} applied`),
      ` · ${p.unchanged} unchanged · ${p.unsupported} unsupported · ${p.refused} refused · ${p.unreadable} unreadable`,
      job.kind === "undo" ? ` · ${p.skipped} skipped` : "",
      ` · ${plural(p.unreachable, "room")} unreachable`,
      job.state === "cancelled" ? [" · ", h("strong", { id: "template-job-not-done" }, `${plural(notDone(job), "room")} not done`)] : "");
    let actions: HTMLElement | null = null;
    const failed = cancelFailure?.id === job.id
      ? h("p", { class: "error", role: "alert", id: "template-cancel-error" }, cancelFailure.text) : null;
    if (job.state === "running" && canWrite()) {
      const button = h("button", { type: "button", class: "danger", id: "template-cancel" }, "Cancel job");
      button.addEventListener("click", () => void cancel(job, button));
      actions = h("div", null, h("div", { class: "buttons with-help" }, button,
        h("span", { class: "small field-help" }, "Stops the job: rooms not begun are left as they are.")), failed);
    } else if (job.state !== "running" && job.kind === "apply") {
      // A cancelled apply is undone as a finished one: what its rooms done (or caught writing) held.
      const caught = job.rooms.some((r) => r.state === "writing");
      if (p.applied === 0 && !caught) {
        actions = h("p", { class: "muted-text", id: "template-job-nothing" }, "The job changed nothing, so there is nothing to undo.");
      } else {
        // Offered to every user, as Apply is: the service decides, and says why it refused.
        const error = h("p", { class: "error", role: "alert", id: "template-undo-error" });
        const button = h("button", { type: "button", class: "secondary", id: "template-undo" }, "Undo");
        button.addEventListener("click", () => void undo(job, button, error));
        actions = h("div", null, h("div", { class: "buttons with-help" }, button,
          h("span", { class: "small field-help" }, "Writes back what each room held, where it still holds what this job wrote.")), error);
      }
      if (failed) actions = h("div", null, failed, actions);
    } else if (failed) {
      actions = failed;
    }
    const rows = job.rooms.map((r) => {
      const room = h("th", { scope: "row", class: "room-name", title: r.name },
        h("a", { href: `#/room/${encodeURIComponent(r.endpointId)}` }, r.name));
      const state = h("td", null, roomBadge(job, r));
      if (r.unreachable) {
        return h("tr", { class: "plan-unreachable", "data-room": r.endpointId }, room, state,
          h("td", { colspan: Math.max(keys.length, 1) },
            h("span", { class: "badge plan-skip" }, "unreachable"), " ",
            h("strong", null, r.unreachable.code), `: ${r.unreachable.message}`));
      }
      return h("tr", { "data-room": r.endpointId }, room, state, keys.map((k) => settingCell(job, r, r.settings[k])));
    });
    replace(viewOut, facts, bar, summary, actions,
      job.rooms.length === 0 ? h("p", null, "The job has no rooms.")
        : h("div", { class: "table-wrap" }, h("table", { id: "template-job-table", class: "plan-grid job-grid" },
          h("thead", null, h("tr", null, h("th", { scope: "col" }, "Room"), h("th", { scope: "col" }, "State"),
            keys.map((k) => h("th", { scope: "col" }, h("code", null, k))))),
          h("tbody", null, rows))),
      h("p", { class: "small plan-legend" },
        "applied: from → to · unchanged: already so · unsupported, refused, unreadable, skipped: left as it was, with the room's reason.",
        job.state === "cancelled" ? " · not done: the job was cancelled before the room was written." : ""));
    for (const tr of listOut.querySelectorAll("tr[data-job]")) {
      tr.classList.toggle("selected", tr.getAttribute("data-job") === job.id);
    }
  };

  /** Shows `job` and reads it again at once: an event may have come before it was watched. */
  const show = (job: Job, focus: boolean) => {
    view.hidden = false;
    if (cancelFailure && cancelFailure.id !== job.id) cancelFailure = null;
    jobRead++;
    draw(job);
    void loadJob();
    if (focus) {
      view.scrollIntoView({ block: "start" });
      viewTitle.focus({ preventScroll: true });
    }
  };

  const openId = (id: string) => {
    const known = jobs.find((j) => j.id === id);
    if (known) show(known, true);
    else void get<Job>(`/api/jobs/${encodeURIComponent(id)}`).then((j) => { if (!left) show(j, true); })
      .catch((e) => notify(errorText(e), "error"));
  };

  const unfollow = follow(["jobs"], () => {
    void loadList();
    void loadJob();
  });
  const unwatch = watchConnection((c) => {
    connection = c;
    syncPoll();
  });
  void loadList();
  view.append(status);

  return {
    list,
    view,
    show,
    refresh: () => void loadList(),
    leave: () => {
      left = true;
      unfollow();
      unwatch();
      syncPoll();
    },
  };
}

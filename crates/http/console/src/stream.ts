// The service's live event stream (GET /api/live/events): one EventSource for the whole
// console, opened when a page first follows a topic and kept until sign-out. A browser's EventSource cannot send headers and
// the access token must not go in a URL, so the stream opens with a one-minute ticket
// (POST /api/live/tickets). The browser reconnects by itself within that minute; after it, the
// service refuses the old ticket and this module opens a new stream with a new ticket, resuming
// from the last event seen (lastEventId). While the stream is down, followers are read on a slow
// timer instead, so a page never goes stale.

import { current, send } from "./api";

export type Topic = "statuses" | "health" | "inventory" | "listeners" | "jobs" | "drift";
/** `idle`: no stream (signed out, or no page has followed yet); `offline`: the stream is down,
 * followers are read on a timer. */
export type Connection = "live" | "connecting" | "offline" | "idle";

const TOPICS: Topic[] = ["statuses", "health", "inventory", "listeners", "jobs", "drift"];
/** How often followers are read while the stream is down. */
const FALLBACK_MS = 15_000;
/** Waits before a new stream after one failed, doubling up to the last. */
const RETRY_MS = [1_000, 2_000, 5_000, 10_000, 30_000];

interface Follower {
  topics: Set<Topic>;
  load: () => void;
}

const followers = new Set<Follower>();
const watchers = new Set<(c: Connection) => void>();
let source: EventSource | null = null;
let connection: Connection = "idle";
let lastEventId: string | null = null;
let failures = 0;
let retry: number | null = null;
let fallback: number | null = null;

function setConnection(c: Connection): void {
  if (c !== connection) {
    connection = c;
    for (const w of watchers) w(c);
  }
  syncFallback();
}

/** Followers are read on a timer exactly while the stream is not live. */
function syncFallback(): void {
  const wanted = connection !== "live" && followers.size > 0;
  if (wanted && fallback === null) {
    fallback = window.setInterval(() => { for (const f of followers) f.load(); }, FALLBACK_MS);
  } else if (!wanted && fallback !== null) {
    window.clearInterval(fallback);
    fallback = null;
  }
}

function tell(topic: Topic | null): void {
  for (const f of followers) if (topic === null || f.topics.has(topic)) f.load();
}

function close(): void {
  source?.close();
  source = null;
  if (retry !== null) window.clearTimeout(retry);
  retry = null;
}

function reopenLater(): void {
  close();
  if (!current()) return setConnection("idle");
  setConnection("offline");
  const wait = RETRY_MS[Math.min(failures, RETRY_MS.length - 1)];
  failures += 1;
  retry = window.setTimeout(() => void open(), wait);
}

/** A ticket being asked for: a second `open` meanwhile would make a second stream. */
let opening = false;

async function open(): Promise<void> {
  if (opening) return;
  close();
  if (!current()) return;
  setConnection("connecting");
  let ticket: string;
  opening = true;
  try {
    const issued = await send<{ ticket: string }>("POST", "/api/live/tickets");
    ticket = issued?.ticket ?? "";
  } catch {
    opening = false;
    reopenLater();
    return;
  }
  opening = false;
  // Signed out while the ticket was on its way.
  if (!current()) return setConnection("idle");
  const q = new URLSearchParams({ ticket });
  if (lastEventId) q.set("lastEventId", lastEventId);
  const s = new EventSource(`/api/live/events?${q}`);
  source = s;
  const seen = (e: MessageEvent) => {
    if (e.lastEventId) lastEventId = e.lastEventId;
  };
  s.addEventListener("ready", (e) => {
    // A stream after an earlier one (not the first): what the gap missed was replayed before
    // this, but the fallback timer may have missed the gap's end: read once more.
    const resumed = lastEventId !== null && connection !== "live";
    seen(e as MessageEvent);
    failures = 0;
    setConnection("live");
    if (resumed) tell(null);
  });
  s.addEventListener("resync", (e) => {
    seen(e as MessageEvent);
    setConnection("live");
    tell(null);
  });
  for (const topic of TOPICS) {
    s.addEventListener(topic, (e) => {
      seen(e as MessageEvent);
      tell(topic);
    });
  }
  s.addEventListener("closing", () => {
    // The service stops or the token was revoked: the next read tells which (a revoked token
    // signs the console out).
    reopenLater();
    tell(null);
  });
  s.onerror = () => {
    // CONNECTING: the browser retries by itself (the ticket may still be good). CLOSED: it gave
    // up (an expired ticket is refused): a new ticket, a new stream.
    if (s.readyState === EventSource.CLOSED) reopenLater();
    else setConnection("connecting");
  };
}

/** Calls `load` whenever one of `topics` changes, until the returned function is called. The
 * stream stays open after its last follower leaves (until sign-out): moving between pages does
 * not open a new connection each time, and a browser limits how many it holds per origin. */
export function follow(topics: Topic[], load: () => void): () => void {
  const follower: Follower = { topics: new Set(topics), load };
  followers.add(follower);
  if (!source && retry === null && !opening) void open();
  syncFallback();
  return () => {
    followers.delete(follower);
    syncFallback();
  };
}

/** Tells `watch` how the stream is now and whenever that changes. */
export function watchConnection(watch: (c: Connection) => void): () => void {
  watchers.add(watch);
  watch(connection);
  return () => watchers.delete(watch);
}

/** Forgets the stream (signed out). */
export function stop(): void {
  close();
  followers.clear();
  if (fallback !== null) window.clearInterval(fallback);
  fallback = null;
  lastEventId = null;
  failures = 0;
  setConnection("idle");
}

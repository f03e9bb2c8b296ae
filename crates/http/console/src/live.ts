// The rooms' live picture: endpoints, their status snapshot and the listeners, read again
// whenever the service's event stream says statuses or listeners changed (./stream). One
// picture for the whole console; pages subscribe.

import { Endpoint, Listener, Status, get } from "./api";
import { follow } from "./stream";

export interface Room {
  endpoint: Endpoint;
  status: Status | null;
  listener: Listener | null;
}

export type State = "in call" | "dialling" | "idle" | "listener offline" | "no listener" | "unknown";

export interface Picture {
  rooms: Room[];
  listeners: Listener[];
  fetchedAt: number;
  error: string | null;
}

let picture: Picture = { rooms: [], listeners: [], fetchedAt: 0, error: null };
const subscribers = new Set<(p: Picture) => void>();
let unfollow: (() => void) | null = null;
/** A read under way, and whether another was asked for meanwhile (changes come in bursts). */
let reading: Promise<void> | null = null;
let again = false;

export function latest(): Picture {
  return picture;
}

/** What a room is doing, as one word for the table and the wall. */
export function stateOf(room: Room): State {
  if (!room.endpoint.listenerServiceId) return "no listener";
  if (room.listener && room.listener.health === "offline") return "listener offline";
  if (!room.status || room.status.timestamp === 0) return "unknown";
  if (room.status.callActive) return "in call";
  if (room.status.dialing) return "dialling";
  return "idle";
}

async function read(): Promise<void> {
  try {
    const [endpoints, statuses, listeners] = await Promise.all([
      get<Endpoint[]>("/api/endpoints"),
      get<Status[]>("/api/endpoints/status"),
      get<Listener[]>("/api/listenerservices"),
    ]);
    const byId = new Map(statuses.map((s) => [s.endpointId, s]));
    const listenerById = new Map(listeners.map((l) => [l.id, l]));
    picture = {
      rooms: endpoints.map((endpoint) => ({
        endpoint,
        status: byId.get(endpoint.id) ?? null,
        listener: endpoint.listenerServiceId ? listenerById.get(endpoint.listenerServiceId) ?? null : null,
      })),
      listeners,
      fetchedAt: Date.now(),
      error: null,
    };
  } catch (e) {
    picture = { ...picture, error: e instanceof Error ? e.message : String(e) };
  }
  for (const s of subscribers) s(picture);
}

/** Reads the picture again; a request made while a read is under way makes one more after it. */
function refresh(): Promise<void> {
  if (reading) {
    again = true;
    return reading;
  }
  reading = read().finally(() => {
    reading = null;
    if (again) {
      again = false;
      void refresh();
    }
  });
  return reading;
}

/** Calls `render` now (if known) and after each read until the returned function is called. */
export function subscribe(render: (p: Picture) => void): () => void {
  subscribers.add(render);
  if (picture.fetchedAt) render(picture);
  if (unfollow === null) {
    void refresh();
    unfollow = follow(["statuses", "listeners"], () => void refresh());
  }
  return () => {
    subscribers.delete(render);
    if (subscribers.size === 0 && unfollow !== null) {
      unfollow();
      unfollow = null;
    }
  };
}

/** Reads again now (after a command), without waiting for the stream to tell. */
export function poke(): void {
  void refresh();
}

export function reset(): void {
  picture = { rooms: [], listeners: [], fetchedAt: 0, error: null };
}

// The rooms' live picture: endpoints, their status snapshot and the listeners, polled while a
// page that shows them is open. One poller for the whole console; pages subscribe.

import { Endpoint, Listener, Status, get } from "./api";

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

/** How often the status snapshot is read. */
export const POLL_MS = 2000;

let picture: Picture = { rooms: [], listeners: [], fetchedAt: 0, error: null };
const subscribers = new Set<(p: Picture) => void>();
let timer: number | null = null;

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

async function refresh(): Promise<void> {
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

/** Calls `render` now (if known) and after each poll until the returned function is called. */
export function subscribe(render: (p: Picture) => void): () => void {
  subscribers.add(render);
  if (picture.fetchedAt) render(picture);
  if (timer === null) {
    void refresh();
    timer = window.setInterval(() => void refresh(), POLL_MS);
  }
  return () => {
    subscribers.delete(render);
    if (subscribers.size === 0 && timer !== null) {
      window.clearInterval(timer);
      timer = null;
    }
  };
}

/** Reads again now (after a command), without waiting for the next tick. */
export function poke(): void {
  void refresh();
}

export function reset(): void {
  picture = { rooms: [], listeners: [], fetchedAt: 0, error: null };
}

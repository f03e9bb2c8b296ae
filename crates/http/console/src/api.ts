// The console's only way to the service: same-origin fetch with the access token in the
// X-Access-Token header. The token lives in this module's variable and nowhere else (not in a
// URL, a cookie, localStorage or sessionStorage): reloading the page signs out.

export interface Session {
  token: string;
  tokenId: string;
  username: string;
  enterpriseName: string;
  roles: string[];
}

let session: Session | null = null;
let onSignedOut: (() => void) | null = null;

export function current(): Session | null {
  return session;
}

/** ROLE_READWRITE: may edit, import, register listeners and read the audit log. */
export function canWrite(): boolean {
  return session !== null && session.roles.includes("ROLE_READWRITE");
}

export function whenSignedOut(callback: () => void): void {
  onSignedOut = callback;
}

/** A failure as the service's error catalog describes it. */
export class ApiError extends Error {
  constructor(
    public status: number,
    public errorName: string,
    message: string,
    public details: Record<string, unknown> = {},
  ) {
    super(message);
  }

  /** The field an `Invalid` message names (`name: must not be blank`), if any. */
  field(): string | null {
    const m = /^([A-Za-z][A-Za-z0-9]*):\s/.exec(this.message);
    return m ? m[1] : null;
  }
}

async function failure(response: Response): Promise<ApiError> {
  try {
    const body = await response.json();
    return new ApiError(
      response.status,
      String(body.errorName ?? "Error"),
      String(body.errorMessage ?? response.statusText),
      (body.errorDetails as Record<string, unknown>) ?? {},
    );
  } catch {
    return new ApiError(response.status, "Error", `HTTP ${response.status}`);
  }
}

export interface Call {
  method?: string;
  json?: unknown;
  body?: BodyInit;
  contentType?: string;
  query?: Record<string, string | number | undefined>;
}

export async function request(path: string, call: Call = {}): Promise<Response> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (session) headers["X-Access-Token"] = session.token;
  let body = call.body;
  if (call.json !== undefined) {
    body = JSON.stringify(call.json);
    headers["Content-Type"] = "application/json";
  } else if (call.contentType) {
    headers["Content-Type"] = call.contentType;
  }
  let url = path;
  if (call.query) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(call.query)) if (v !== undefined && v !== "") q.set(k, String(v));
    const s = q.toString();
    if (s) url += "?" + s;
  }
  const response = await fetch(url, {
    method: call.method ?? "GET",
    headers,
    body,
    credentials: "omit",
    cache: "no-store",
  });
  if (!response.ok) {
    const error = await failure(response);
    if (response.status === 401 && session) {
      session = null;
      onSignedOut?.();
    }
    throw error;
  }
  return response;
}

/** Saves what `path` answers as the file `name` (the token goes in a header, never a URL). */
export async function download(path: string, name: string, query: Call["query"] = {}): Promise<void> {
  const blob = await (await request(path, { query })).blob();
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 10000);
}

export async function get<T>(path: string, query?: Call["query"]): Promise<T> {
  return (await (await request(path, { query })).json()) as T;
}

export async function send<T>(method: string, path: string, json?: unknown, query?: Call["query"]): Promise<T | null> {
  const response = await request(path, { method, json, query });
  const text = await response.text();
  return text ? (JSON.parse(text) as T) : null;
}

/** Basic credentials of a service or platform user, exchanged for an access token. */
export async function signIn(username: string, password: string): Promise<Session> {
  const basic = btoa(String.fromCharCode(...new TextEncoder().encode(`${username}:${password}`)));
  const response = await fetch("/api/auth/accesstokens?clientName=roomlink%20console&duration=12h", {
    method: "POST",
    headers: { Authorization: `Basic ${basic}`, Accept: "application/json" },
    credentials: "omit",
    cache: "no-store",
  });
  if (!response.ok) throw await failure(response);
  const token = await response.json();
  session = {
    token: token.accessToken,
    tokenId: token.id,
    username: token.username ?? token.creator ?? username,
    enterpriseName: token.enterpriseName,
    roles: token.roles ?? [],
  };
  return session;
}

/** Deletes the token on the service (by its id, not its value), then forgets it. */
export async function signOut(): Promise<void> {
  const was = session;
  if (was) {
    try {
      await request(`/api/auth/accesstokens/${encodeURIComponent(was.tokenId)}`, { method: "DELETE" });
    } catch {
      // Forgotten here either way; it expires on its own.
    }
  }
  session = null;
  onSignedOut?.();
}

// The API's shapes, as far as the console reads them.

export interface Endpoint {
  id: string;
  name: string;
  ipAddress: string | null;
  listenerServiceId: string | null;
  controlProtocol: string | null;
  location: string | null;
  [field: string]: unknown;
}

export interface Status {
  endpointId: string;
  callActive: boolean;
  reserved: boolean;
  dialing: boolean;
  microphoneMuted: boolean;
  lastDialTimestampMillis: number | null;
  timestamp: number;
}

export interface Listener {
  id: string;
  name: string;
  connection: "inbound" | "outbound";
  baseUrl: string | null;
  location: string | null;
  health: "online" | "offline" | "unknown";
  listenerVersion: string | null;
  lastContact: number | null;
  connected: boolean | null;
  connectedSince: number | null;
  checkedAt: number | null;
  checkError: { errorName: string; message: string } | null;
  secret?: string;
  [field: string]: unknown;
}

export interface Failure {
  id: string;
  subjectClass: string;
  subjectId: string;
  errorDate: number;
  errorCode: number;
  errorName: string;
  errorMessage: string;
  errorDetails: Record<string, unknown>;
}

export interface AuditEntry {
  id: string;
  at: number;
  actor: { kind: string; id: string; username: string | null; roles: string[] };
  operation: string;
  targetId: string | null;
  outcome: string;
  detail: string | null;
}

// The console in a real browser: playwright-core driving Debian's Chromium against a real
// `roomlink serve` and the listener simulator, started and seeded by `cargo xtask console-test`
// (which passes the CONSOLE_* variables). Each step is a check; the screenshots of each page
// go to docs/console/.

import { chromium } from "playwright-core";
import { createHmac } from "node:crypto";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run this through \`cargo xtask console-test\``);
  return value;
};
const base = env("CONSOLE_BASE");
const sim = env("CONSOLE_SIM");
const shots = env("CONSOLE_SCREENSHOTS");
const rooms = env("CONSOLE_ROOMS").split(";").map((r) => {
  const [id, name, address] = r.split("=");
  return { id, name, address };
});
mkdirSync(shots, { recursive: true });

/** The room names, read through the API with a token of our own. */
async function roomNames() {
  const basic = Buffer.from(`${env("CONSOLE_USER")}:${env("CONSOLE_PASSWORD")}`).toString("base64");
  const token = await (await fetch(`${base}/api/auth/accesstokens?duration=1h`, {
    method: "POST", headers: { Authorization: `Basic ${basic}` },
  })).json();
  const list = await (await fetch(`${base}/api/endpoints`, { headers: { "X-Access-Token": token.accessToken } })).json();
  return list.map((e) => e.name);
}

/** A call to the API with a token of the test's own (not the page's). */
let ownToken = null;
async function api(path, init = {}) {
  if (!ownToken) {
    const basic = Buffer.from(`${env("CONSOLE_USER")}:${env("CONSOLE_PASSWORD")}`).toString("base64");
    ownToken = (await (await fetch(`${base}/api/auth/accesstokens?duration=1h`, {
      method: "POST", headers: { Authorization: `Basic ${basic}` },
    })).json()).accessToken;
  }
  const response = await fetch(`${base}${path}`, { ...init, headers: { ...init.headers, "X-Access-Token": ownToken } });
  expect(response.ok, `${init.method ?? "GET"} ${path}: ${response.status}`);
  return response.status === 204 ? null : response.json();
}

/** A webhook receiver on loopback: records each request and answers 204. */
const received = [];
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    received.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
    res.writeHead(204).end();
  });
});
await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const receiverUrl = `http://127.0.0.1:${receiver.address().port}/hooks/roomlink`;

const steps = [];
async function step(name, body) {
  const started = Date.now();
  try {
    let timer;
    const limit = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error("the step took longer than 60 s")), 60000);
    });
    await Promise.race([body(), limit]).finally(() => clearTimeout(timer));
    steps.push(`ok   ${name} (${Date.now() - started} ms)`);
    console.log(`ok   ${name}`);
  } catch (e) {
    console.log(`FAIL ${name}: ${e.message}`);
    throw e;
  }
}

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

/** A real CalDAV server for the room page's meetings: Radicale (`pip install radicale`; `.ci/run`
 * installs it) on a free loopback port, with one user; stopped when the test ends. */
async function startRadicale() {
  const dir = mkdtempSync(join(tmpdir(), "console-radicale-"));
  writeFileSync(join(dir, "users"), "calendar-reader:calendar-pw\n");
  const port = await new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
  const child = spawn("python3.11", ["-m", "radicale", "--config", "", "--server-hosts", `127.0.0.1:${port}`,
    "--storage-filesystem-folder", join(dir, "collections"), "--auth-type", "htpasswd",
    "--auth-htpasswd-filename", join(dir, "users"), "--auth-htpasswd-encryption", "plain",
    "--rights-type", "authenticated", "--logging-level", "warning"], { stdio: "ignore" });
  process.on("exit", () => child.kill());
  const listening = () => new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => { socket.end(); resolve(true); });
    socket.on("error", () => resolve(false));
  });
  for (let i = 0; !(await listening()); i++) {
    expect(i < 300 && child.exitCode === null, "Radicale listens (python3.11 -m radicale; pip install radicale)");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const auth = `Basic ${Buffer.from("calendar-reader:calendar-pw").toString("base64")}`;
  const dav = async (method, path, body = "") => {
    const answer = await fetch(`http://127.0.0.1:${port}${path}`, {
      method, body, headers: { Authorization: auth, "Content-Type": "text/calendar; charset=utf-8" },
    });
    expect(answer.ok, `${method} ${path}: ${answer.status}`);
  };
  return { baseUrl: `http://127.0.0.1:${port}/rooms/`, dav };
}

/** An iCalendar time: UTC, to the second. */
const icalTime = (ms) => new Date(ms).toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");

const browser = await chromium.launch({
  executablePath: env("CONSOLE_CHROMIUM"),
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
const problems = [];
let failed = false;
let current = null;
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  current = page;
  const logged = [];
  page.on("console", (m) => {
    logged.push(m.text());
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  const requested = [];
  page.on("request", (r) => requested.push(r.url()));
  // The console must need nothing but its own origin.
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(base)) return route.continue();
    problems.push(`request outside the origin: ${url}`);
    return route.abort();
  });
  const board = rooms.find((r) => r.name === "Board room") ?? rooms[0];
  const shot = (name) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  const signIn = async (user, password) => {
    await page.getByLabel("Username").fill(user);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Sign out" }).waitFor();
  };

  await step("the console answers with a strict Content-Security-Policy", async () => {
    const response = await page.goto(`${base}/console/`);
    expect(response.status() === 200, `status ${response.status()}`);
    const csp = response.headers()["content-security-policy"] ?? "";
    expect(csp.includes("script-src 'self'") && !csp.includes("unsafe-inline"), `CSP: ${csp}`);
    expect(response.headers()["x-content-type-options"] === "nosniff", "nosniff");
    expect(response.headers()["cache-control"] === "no-cache", "no-cache on index.html");
  });

  await step("a wrong password is refused on the page", async () => {
    await page.getByLabel("Username").fill(env("CONSOLE_USER"));
    await page.getByLabel("Password").fill("not-the-password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("Wrong username or password.").waitFor();
    await shot("sign-in");
  });

  await step("sign in as the read-write user", async () => {
    await page.getByLabel("Password").fill(env("CONSOLE_PASSWORD"));
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator("#rooms-table").waitFor();
    for (const r of rooms) await page.locator(`#rooms-table tr[data-room="${r.id}"]`).waitFor();
    const stored = await page.evaluate(() => JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + document.cookie);
    expect(!stored.includes("token") && stored.length < 10, `browser storage holds: ${stored}`);
    expect(!page.url().toLowerCase().includes("token"), "no token in the URL");
    await shot("rooms");
  });

  await step("find a room with the search box", async () => {
    await page.getByLabel("Search rooms").fill(board.name.split(" ")[0]);
    await page.waitForFunction(() => document.querySelectorAll("#rooms-table tbody tr").length === 1);
    const shown = await page.locator("#rooms-table tbody tr").first().getAttribute("data-room");
    expect(shown === board.id, `the search shows ${shown}`);
  });

  await step("sort the table by name, descending", async () => {
    await page.getByLabel("Search rooms").fill("");
    await page.waitForFunction((n) => document.querySelectorAll("#rooms-table tbody tr").length === n, rooms.length);
    await page.getByRole("button", { name: /^Room/ }).click();
    await page.locator('th[aria-sort="descending"]').waitFor();
    const names = await page.locator("#rooms-table tbody th").allTextContents();
    const sorted = [...names].sort((a, b) => b.localeCompare(a));
    expect(JSON.stringify(names) === JSON.stringify(sorted), `order: ${names}`);
  });

  await step("open the wall, then join a meeting from the room page", async () => {
    await page.getByRole("link", { name: "Wall", exact: true }).click();
    await page.locator(`#wall [data-room="${board.id}"]`).waitFor();
    await page.goto(`${base}/console/#/room/${board.id}`);
    await page.getByRole("heading", { name: board.name, level: 1 }).waitFor();
    await page.getByLabel("Meeting id").fill("123456789");
    await page.getByLabel("Passcode (optional)").fill("4321");
    await page.getByRole("button", { name: "Join" }).click();
    await page.locator("#room-live .state-in-call").waitFor({ timeout: 15000 });
  });

  await step("the simulated room is in the meeting", async () => {
    const answer = await (await fetch(`${sim}/sim/endpoints/${board.address}`)).text();
    expect(answer.includes("123456789"), `the simulator says: ${answer}`);
  });

  await step("mute: the room page and the wall show it", async () => {
    await page.getByRole("button", { name: "Mute", exact: true }).click();
    await page.locator("#room-live .badge.muted").waitFor({ timeout: 15000 });
    await page.locator("#pairing-code").waitFor();
    await page.locator("svg.qr").waitFor();
    await shot("room");
    await page.getByRole("link", { name: "Wall", exact: true }).click();
    const tile = page.locator(`#wall .tile.state-in-call[data-room="${board.id}"]`);
    await tile.waitFor({ timeout: 15000 });
    expect((await tile.textContent()).includes("microphone muted"), "the tile says muted");
    await shot("wall");
  });

  await step("a field error is shown next to the field, and a valid edit is saved", async () => {
    await page.goto(`${base}/console/#/room/${board.id}`);
    await page.locator("#field-port").waitFor();
    await page.locator("#field-port").fill("70000");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.locator("#field-port-error:not(:empty)").waitFor();
    expect(await page.locator("#field-port").getAttribute("aria-invalid") === "true", "port marked invalid");
    await page.locator("#field-port").fill("22");
    await page.locator("#field-location").fill("Floor 3");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText("Saved.").waitFor();
    expect(await page.locator("#field-location").inputValue() === "Floor 3", "the saved value stays");
  });

  await step("hang up: the tile goes back to idle", async () => {
    await page.getByRole("button", { name: "Hang up" }).click();
    await page.locator("#room-live .state-idle").waitFor({ timeout: 15000 });
  });

  await step("meetings: the room page lists its calendar's meetings; a REDACTED room shows no title", async () => {
    const radicale = await startRadicale();
    const calendarId = "board@corp.example";
    const start = Date.now() + 2 * 3600_000;
    await radicale.dav("MKCOL", "/rooms/");
    await radicale.dav("MKCALENDAR", `/rooms/${calendarId}/`);
    await radicale.dav("PUT", `/rooms/${calendarId}/review.ics`, [
      "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//roomlink//console test//EN",
      "BEGIN:VEVENT", "UID:review@corp.example", `DTSTAMP:${icalTime(Date.now())}`,
      `DTSTART:${icalTime(start)}`, `DTEND:${icalTime(start + 3600_000)}`, "SUMMARY:Quarterly review",
      "DESCRIPTION:Join: https://bluejeans.com/123456789/4321", "END:VEVENT", "END:VCALENDAR", ""].join("\r\n"));
    await api("/api/calendaraccounts/CALDAV", {
      method: "PUT", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ baseUrl: radicale.baseUrl, username: "calendar-reader", password: "calendar-pw" }),
    });
    const patch = (fields) => api(`/api/endpoints/${board.id}`, {
      method: "PATCH", headers: { "Content-Type": "application/json" }, body: JSON.stringify(fields),
    });
    await patch({ calendarId, calendarType: "CALDAV" });
    // Away and back: the room page reads the room (and its meetings) when it opens.
    await page.getByRole("link", { name: "Rooms", exact: true }).click();
    await page.goto(`${base}/console/#/room/${board.id}`);
    const meeting = page.locator('#meeting-list li[data-uid="review@corp.example"]');
    await meeting.waitFor();
    const shown = await meeting.textContent();
    expect(shown.includes("Quarterly review") && shown.includes("Dialable: 123456789"), `the meeting: ${shown}`);
    await meeting.scrollIntoViewIfNeeded();
    await shot("room-meetings");
    await patch({ meetingPrivacyMode: "REDACTED" });
    await page.getByRole("link", { name: "Rooms", exact: true }).click();
    await page.goto(`${base}/console/#/room/${board.id}`);
    await page.locator("#meeting-list li em", { hasText: "Private meeting" }).waitFor();
    const redacted = await page.locator("#room-meetings").textContent();
    expect(!redacted.includes("Quarterly review") && redacted.includes("Dialable: 123456789"), `redacted: ${redacted}`);
    await patch({ meetingPrivacyMode: null });
  });

  await step("live: a call joined elsewhere shows on the open room page, told by the event stream", async () => {
    const other = rooms.find((r) => r.id !== board.id);
    await page.goto(`${base}/console/#/room/${other.id}`);
    await page.getByRole("heading", { name: other.name, level: 1 }).waitFor();
    await page.locator('#live-state[data-state="live"]').waitFor({ timeout: 15000 });
    expect((await page.locator("#live-state").textContent()) === "Live", await page.locator("#live-state").textContent());
    // The page has no timer of its own while the stream is live: only the stream's news makes
    // it read the status again.
    await page.locator("#room-live .state-idle, #room-live .state-unknown").first().waitFor({ timeout: 15000 });
    await api(`/api/endpoints/${other.id}/join?meetingid=555000111`, { method: "POST" });
    await page.locator("#room-live .state-in-call").waitFor({ timeout: 15000 });
    await api(`/api/endpoints/${other.id}/hangup`, { method: "POST" });
    await page.locator("#room-live .state-idle").waitFor({ timeout: 15000 });
    const streams = requested.filter((u) => u.includes("/api/live/events"));
    expect(streams.length >= 1 && streams.every((u) => /[?&]ticket=/.test(u)), `streams: ${streams}`);
    expect(!requested.some((u) => /accesstoken=/i.test(u)), "no access token in a URL");
  });

  await step("usage: the call just made is a bar and warms its hour of the heatmap", async () => {
    await page.getByRole("link", { name: "Usage", exact: true }).click();
    await page.getByRole("heading", { name: "Usage", level: 1 }).waitFor();
    const bar = page.locator(`#usage-bars rect[data-room="${board.id}"]`);
    await bar.waitFor();
    expect((await page.locator("#usage-bars").textContent()).includes(board.name), "the bar is labelled with the room's name");
    await page.locator("#usage-heatmap").waitFor();
    const warm = await page.locator("#usage-heatmap rect.heat").evaluateAll(
      (cells) => cells.filter((c) => c.getAttribute("fill-opacity") !== "0.04").length);
    expect(warm >= 1, `a warm cell in the heatmap: ${warm}`);
    expect(/^[1-9][0-9]* calls?,/.test(await page.locator("#usage-totals").textContent()), await page.locator("#usage-totals").textContent());
    expect((await page.locator("#usage-busiest").textContent()).startsWith("Busiest hour:"), "the busiest hour is named");
    await shot("usage");
  });

  await step("inventory: every room's model and software; the unplugged touch panel is named", async () => {
    await page.getByRole("link", { name: "Inventory", exact: true }).click();
    await page.getByRole("heading", { name: "Inventory", level: 1 }).waitFor();
    // The demo unplugged the last room's touch panel before the rooms were first read.
    const degraded = rooms[rooms.length - 1];
    const row = page.locator(`#inventory-table tr[data-room="${degraded.id}"]`);
    await row.waitFor({ timeout: 40000 });
    expect((await row.textContent()).includes(degraded.name), "the row names the room");
    const missing = row.locator('li[data-connected="false"]');
    expect(await missing.count() === 1, `one peripheral missing: ${await row.textContent()}`);
    expect((await missing.textContent()).includes("not connected"), await missing.textContent());
    // Rooms missing a peripheral come first.
    expect(await page.locator("#inventory-table tbody tr").first().getAttribute("data-room") === degraded.id, "the degraded room first");
    const models = await page.locator("#inventory-table tbody td:nth-child(2)").allTextContents();
    expect(models.length === rooms.length && models.every((m) => m === "Room Kit"), `models: ${models}`);
    expect((await page.locator("#inventory-summary").textContent()).includes("1 missing a peripheral"), await page.locator("#inventory-summary").textContent());
    await shot("inventory");
    // The export with inventory: a file with each room's reported columns, the unplugged
    // touch panel counted.
    const [file] = await Promise.all([page.waitForEvent("download"), page.locator("#inventory-export").click()]);
    expect(file.suggestedFilename() === "rooms-with-inventory.csv", file.suggestedFilename());
    const lines = readFileSync(await file.path(), "utf8").trim().split("\r\n");
    const header = lines[0].split(",");
    expect(header.includes("inventory.readat"), `inventory columns: ${lines[0]}`);
    // Every cell is quoted (a quote inside doubled): split on the commas between quotes.
    const cells = (line) => [...line.matchAll(/"((?:[^"]|"")*)"(?:,|$)/g)].map((m) => m[1].replaceAll('""', '"'));
    const degradedRow = lines.slice(1).map(cells).find((c) => c[header.indexOf("id")] === degraded.id);
    expect(lines.length > rooms.length && degradedRow !== undefined, `a row per room: ${lines.length}`);
    expect(degradedRow[header.indexOf("inventory.model")] === "Room Kit", `model: ${degradedRow}`);
    expect(degradedRow[header.indexOf("inventory.peripheralsdisconnected")] === "1", `one unplugged: ${degradedRow}`);
    // The room page shows the same, with its serial number.
    await row.getByRole("link").click();
    await page.locator('#room-inventory li[data-connected="false"]').waitFor();
    expect((await page.locator("#room-inventory").textContent()).includes("Serial number"), "the room's serial number");
    // Its health history: the health watch recorded it degraded, and why.
    const change = page.locator('#health-history > li[data-state="degraded"]');
    await change.waitFor({ timeout: 30000 });
    expect(await change.locator('li[data-reason="peripheralDisconnected"]').count() === 1, await change.textContent());
    await page.getByRole("link", { name: "Inventory", exact: true }).click();
  });

  await step("fleet health: the room with the unplugged panel is degraded, and why", async () => {
    await page.getByRole("link", { name: "Health", exact: true }).click();
    await page.getByRole("heading", { name: "Fleet health", level: 1 }).waitFor();
    const degraded = rooms[rooms.length - 1];
    const item = page.locator(`#health-rooms li[data-room="${degraded.id}"]`);
    await item.waitFor();
    expect(await item.getAttribute("data-state") === "degraded", await item.textContent());
    expect(await item.locator('li[data-reason="peripheralDisconnected"]').count() === 1, await item.textContent());
    expect((await page.locator('#health-counts [data-state="degraded"]').textContent()).trim().startsWith("1"), "one degraded room");
    expect((await page.locator('#health-counts [data-state="ok"]').textContent()).trim().startsWith(String(rooms.length - 1)), "the others ok");
    await page.locator("#health-listeners").waitFor();
    await shot("health");
  });

  await step("upload a CSV: the plan comes first, then the apply", async () => {
    await page.getByRole("link", { name: "Import", exact: true }).click();
    const csv = [
      "id,name,ipaddress,password,location",
      ",Lobby screen,127.77.0.20,lobby-secret,Ground floor",
      `${board.id},${board.name},${board.address},,Floor 4`,
      ",No password room,127.77.0.21,,",
      "unknown-id,Ghost,127.77.0.22,,",
    ].join("\n") + "\n";
    await page.locator("#csv-file").setInputFiles({ name: "rooms.csv", mimeType: "text/csv", buffer: Buffer.from(csv) });
    await page.locator("#plan-table").waitFor();
    const actions = await page.locator("#plan-table tbody td:nth-child(2)").allTextContents();
    expect(JSON.stringify(actions) === JSON.stringify(["create", "update", "skip", "skip"]), `plan: ${actions}`);
    const before = await page.evaluate(() => document.querySelector("#csv-plan")?.textContent ?? "");
    expect(before.includes("password"), "the skip reason names the password");
    await shot("import-plan");
    // Nothing written yet.
    expect(!(await roomNames()).includes("Lobby screen"), "the plan wrote nothing");
    await page.getByRole("button", { name: "Apply this plan" }).click();
    await page.getByRole("heading", { name: "Applied" }).waitFor();
    const applied = await page.locator("#applied-table").textContent();
    expect(applied.includes("Lobby screen") && applied.includes("Floor 3 → Floor 4"), `applied: ${applied}`);
    await shot("import-applied");
    await page.getByRole("link", { name: "Rooms", exact: true }).click();
    await page.getByRole("link", { name: "Lobby screen", exact: true }).waitFor();
    expect((await roomNames()).includes("Lobby screen"), "the apply wrote the new room");
  });

  await step("listeners, failures and the audit log", async () => {
    await page.getByRole("link", { name: "Listeners", exact: true }).click();
    await page.locator("#listeners-table").waitFor();
    await page.getByLabel("Name").fill("Second site");
    await page.getByLabel(/Base URL/).fill("http://127.0.0.1:9");
    await page.getByRole("button", { name: "Register" }).click();
    const secret = await page.locator("#listener-secret").textContent();
    expect(secret && secret.length >= 16, `secret shown once: ${secret}`);
    // Inbound listeners are checked every status poll round (5 s here; the page reloads its
    // list every 10 s): the simulator answers with its version, nothing listens on port 9.
    const rows = page.locator("#listeners-table tbody tr");
    const demo = rows.filter({ hasText: "Demo listener" });
    await demo.filter({ hasText: "online" }).waitFor({ timeout: 30000 });
    expect(/\d+\.\d+\.\d+/.test(await demo.locator("td").nth(1).textContent()), "the simulator's version shown");
    const second = rows.filter({ hasText: "Second site" });
    await second.filter({ hasText: "offline" }).waitFor({ timeout: 30000 });
    expect((await second.textContent()).includes("ListenerOffline"), "why it is offline");
    // The secret is the test's own, but a picture of a secret is still a secret: masked.
    await page.screenshot({ path: join(shots, "listeners.png"), fullPage: true, mask: [page.locator("#listener-secret")] });
    await page.getByRole("link", { name: "Failures", exact: true }).click();
    await page.getByRole("heading", { name: "Failures" }).waitFor();
    await shot("failures");
    await page.getByRole("link", { name: "Audit log", exact: true }).click();
    await page.locator("#audit-table").waitFor();
    const text = await page.locator("#audit-table").textContent();
    expect(text.includes("endpoints.join") && text.includes("endpoints.bulkPut"), "the audit shows the join and the import");
    await shot("audit");
  });

  // Webhooks. The console test's service allows loopback targets and names only 127.0.0.1
  // (webhooks.allow_networks, webhooks.allowed_hosts in the demo configuration): the
  // subscription goes to the receiver above, and no other host is ever looked up or reached.
  let hook = null;
  await step("webhooks: the service's Invalid is shown at the field, then a subscription is created", async () => {
    await page.getByRole("link", { name: "Webhooks", exact: true }).click();
    await page.getByRole("heading", { name: "Webhooks", level: 1 }).waitFor();
    await page.getByText("No subscriptions yet").waitFor();
    const urlError = page.locator("#webhook-url-error");
    const typesError = page.locator("#webhook-types-error");
    await page.getByLabel(/^URL/).fill("https://hooks.example.com/roomlink");
    await page.getByLabel("Description (optional)").fill("Ops pager");
    // No event type: the service says so, next to the event types.
    await page.getByRole("button", { name: "Subscribe" }).click();
    await page.locator("#webhook-types-error:not(:empty)").waitFor();
    expect(/^Invalid: eventTypes/.test(await typesError.textContent()), await typesError.textContent());
    await page.getByLabel("room.offline").check();
    await page.getByLabel("call.started").check();
    // A host the operator did not allow: refused at the URL, before any lookup.
    await page.getByRole("button", { name: "Subscribe" }).click();
    await page.locator("#webhook-url-error:not(:empty)").waitFor();
    expect(/^Invalid: url: the host is not among/.test(await urlError.textContent()), await urlError.textContent());
    expect(await page.getByLabel(/^URL/).getAttribute("aria-invalid") === "true", "the URL marked invalid");
    expect(await page.getByLabel("room.offline").isChecked(), "the form keeps what was entered");
    await page.getByLabel(/^URL/).fill(receiverUrl);
    await page.getByRole("button", { name: "Subscribe" }).click();
    await page.locator("#webhook-secret").waitFor();
    hook = { url: receiverUrl };
    hook.secret = (await page.locator("#webhook-secret").textContent()).trim();
    expect(/^whsec_[A-Za-z0-9+/=]{20,}$/.test(hook.secret), "a whsec_ secret is shown");
    await page.getByText("Copy it now: it is not shown again.").waitFor();
    expect(await urlError.textContent() === "" && await page.getByLabel(/^URL/).inputValue() === "", "the form is cleared");
    const row = page.locator("#webhooks-table tbody tr").filter({ hasText: hook.url });
    await row.waitFor();
    hook.id = await row.getAttribute("data-webhook");
    const text = await row.textContent();
    expect(text.includes("call.started") && text.includes("room.offline") && !text.includes("call.ended"), `event types: ${text}`);
    expect(text.includes("Ops pager") && text.includes("active"), `description and state: ${text}`);
    const listed = await api("/api/webhooks");
    expect(listed.length === 1 && listed[0].id === hook.id && listed[0].url === hook.url, JSON.stringify(listed));
    expect(JSON.stringify(listed[0].eventTypes) === JSON.stringify(["room.offline", "call.started"]), JSON.stringify(listed[0]));
  });

  await step("webhooks: a test delivery is listed in the subscription's deliveries", async () => {
    const row = page.locator(`#webhooks-table tr[data-webhook="${hook.id}"]`);
    await row.getByRole("button", { name: "Test", exact: true }).click();
    await page.getByText(/^Test event queued/).waitFor();
    const eventId = /\(([^)]+)\)/.exec(await page.locator("#toast").textContent())?.[1];
    expect(eventId, "the toast names the event");
    await page.locator("#webhook-deliveries").waitFor();
    expect((await page.locator("#deliveries-title").textContent()).includes(hook.url), "for this subscription");
    expect(await row.getByRole("button", { name: "Deliveries" }).getAttribute("aria-pressed") === "true", "the row is selected");
    const delivery = page.locator("#deliveries-table tbody tr").filter({ hasText: eventId });
    await delivery.waitFor();
    expect((await delivery.textContent()).includes("webhook.test"), await delivery.textContent());
    await page.locator(`#deliveries-table tr[data-state="delivered"]`).filter({ hasText: eventId }).waitFor({ timeout: 30000 });
    expect((await delivery.textContent()).includes("HTTP 204"), await delivery.textContent());
    // Received once, and signed with the secret the page showed (Standard Webhooks).
    const got = received.filter((r) => r.headers["webhook-id"] === eventId);
    expect(got.length === 1 && got[0].method === "POST" && got[0].url === "/hooks/roomlink", `received: ${JSON.stringify(got)}`);
    const { "webhook-timestamp": ts, "webhook-signature": signature } = got[0].headers;
    const key = Buffer.from(hook.secret.slice("whsec_".length), "base64");
    const expected = createHmac("sha256", key).update(`${eventId}.${ts}.${got[0].body}`).digest("base64");
    expect(signature.split(" ").includes(`v1,${expected}`), `signature ${signature}`);
    expect(JSON.parse(got[0].body).type === "webhook.test", got[0].body);
    // The secret is the test's own, but a picture of a secret is still a secret: masked. The
    // toast gone first (it would cover the deliveries).
    await page.waitForFunction(() => !document.querySelector("#toast")?.textContent, null, { timeout: 10000 });
    await page.screenshot({ path: join(shots, "webhooks.png"), fullPage: true, mask: [page.locator("#webhook-secret")] });
  });

  await step("webhooks: the secret is not shown again, nor kept in the URL, storage or the log", async () => {
    const kept = await page.evaluate(() => JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + document.cookie + location.href);
    expect(!kept.includes(hook.secret) && !kept.includes("whsec_"), `kept: ${kept}`);
    expect(!logged.some((l) => l.includes(hook.secret)), "the secret in the console's log");
    const listed = JSON.stringify(await api(`/api/webhooks/${hook.id}`));
    expect(!listed.includes("whsec_") && !listed.includes("secret"), listed);
    await page.getByRole("button", { name: "I have copied it" }).click();
    expect(await page.locator("#webhook-secret").count() === 0, "dismissed");
    // Leaving the page and coming back, then reloading (which signs out) and signing in again.
    await page.getByRole("link", { name: "Health", exact: true }).click();
    await page.getByRole("link", { name: "Webhooks", exact: true }).click();
    await page.locator(`#webhooks-table tr[data-webhook="${hook.id}"]`).waitFor();
    expect(!(await page.locator("body").textContent()).includes("whsec_"), "no secret after coming back");
    await page.reload();
    await signIn(env("CONSOLE_USER"), env("CONSOLE_PASSWORD"));
    await page.getByRole("link", { name: "Webhooks", exact: true }).click();
    await page.locator(`#webhooks-table tr[data-webhook="${hook.id}"]`).waitFor();
    expect(await page.locator("#webhook-secret").count() === 0 && !(await page.locator("body").textContent()).includes("whsec_"), "no secret after a reload");
  });

  await step("webhooks: older deliveries follow X-Next-Cursor", async () => {
    const row = page.locator(`#webhooks-table tr[data-webhook="${hook.id}"]`);
    // 20 more tests through the API: with the first, one more than a page of 20.
    for (let i = 0; i < 20; i++) await api(`/api/webhooks/${hook.id}/test`, { method: "POST" });
    await row.getByRole("button", { name: "Deliveries" }).click();
    const rows = page.locator("#deliveries-table tbody tr");
    await page.locator("#deliveries-more").waitFor();
    expect(await rows.count() === 20, `first page: ${await rows.count()}`);
    await page.getByRole("button", { name: "More deliveries" }).click();
    await page.waitForFunction(() => document.querySelectorAll("#deliveries-table tbody tr").length === 21);
    expect(await page.locator("#deliveries-more").count() === 0, "no more after the last page");
    const ids = (await rows.evaluateAll((trs) => trs.map((tr) => Number(tr.getAttribute("data-delivery")))));
    expect(ids.every((id, i) => i === 0 || id < ids[i - 1]), `newest first, no repeat: ${ids}`);
    const all = await api(`/api/webhooks/${hook.id}/deliveries?limit=200`);
    expect(all.length === 21 && all.every((d) => d.eventType === "webhook.test"), `deliveries: ${all.length}`);
  });

  await step("webhooks: pause, resume and delete (after a confirmation)", async () => {
    const row = page.locator(`#webhooks-table tr[data-webhook="${hook.id}"]`);
    await row.getByRole("button", { name: "Pause", exact: true }).click();
    await row.getByRole("button", { name: "Resume", exact: true }).waitFor();
    const paused = await row.locator("td").nth(2).textContent();
    expect(paused.includes("paused") && paused.includes("paused by"), `state: ${paused}`);
    expect((await api(`/api/webhooks/${hook.id}`)).paused !== null, "paused on the service");
    await row.getByRole("button", { name: "Resume", exact: true }).click();
    await row.getByRole("button", { name: "Pause", exact: true }).waitFor();
    expect((await row.locator("td").nth(2).textContent()).trim() === "active", "active again");
    expect((await api(`/api/webhooks/${hook.id}`)).paused === null, "resumed on the service");
    // Cancelling the confirmation keeps it; accepting deletes it.
    let asked = "";
    page.once("dialog", (d) => { asked = d.message(); void d.dismiss(); });
    await row.getByRole("button", { name: "Delete", exact: true }).click();
    expect(asked.includes(hook.url), `the confirmation names the URL: ${asked}`);
    expect((await api("/api/webhooks")).length === 1, "kept when cancelled");
    page.once("dialog", (d) => void d.accept());
    await row.getByRole("button", { name: "Delete", exact: true }).click();
    await page.getByText("No subscriptions yet").waitFor();
    expect(await page.locator("#webhook-deliveries").isHidden(), "its deliveries are gone from the page");
    expect((await api("/api/webhooks")).length === 0, "deleted on the service");
    // Each change is in the audit log, the refused creations too.
    await page.getByRole("link", { name: "Audit log", exact: true }).click();
    await page.locator("#audit-table").waitFor();
    const audit = await page.locator("#audit-table").textContent();
    for (const op of ["webhooks.create", "webhooks.pause", "webhooks.resume", "webhooks.delete"]) {
      expect(audit.includes(op), `the audit log shows ${op}`);
    }
    expect(audit.includes("Invalid"), "the refused creation is audited");
  });

  // Configuration templates: built from the settings catalog, then planned on every room.
  // The demo's rooms are Cisco-like (TANDBERG_SSH: every key, time zone Etc/UTC at first); a
  // Poly-like room (POLYCOM_TELNET: no time zone) is added behind the same simulator, and the
  // imported "Lobby screen" has no listener, so it cannot be asked.
  let template = null;
  await step("templates: a value outside its space is shown at its field, then a template is created", async () => {
    await page.getByRole("link", { name: "Templates", exact: true }).click();
    await page.getByRole("heading", { name: "Templates", level: 1 }).waitFor();
    await page.getByText("No templates yet").waitFor();
    await page.getByLabel("Name", { exact: true }).fill("Oslo rooms");
    await page.getByLabel("Description (optional)").fill("Head office");
    await page.getByLabel("time_zone", { exact: true }).selectOption("Europe/Oslo");
    await page.getByLabel("standby.delay_minutes", { exact: true }).selectOption("15");
    // The number field lets any number through: the service refuses it, naming key, value and space.
    const volume = page.getByLabel("audio.default_volume", { exact: true });
    await volume.fill("150");
    await page.getByRole("button", { name: "Create template" }).click();
    const volumeError = page.locator("#template-setting-audio-default_volume-error");
    await page.locator("#template-setting-audio-default_volume-error:not(:empty)").waitFor();
    const refused = await volumeError.textContent();
    expect(/^Invalid: settings\.audio\.default_volume: 150 is not/.test(refused), refused);
    expect(await volume.getAttribute("aria-invalid") === "true", "the volume marked invalid");
    expect((await api("/api/templates")).length === 0, "nothing stored");
    await volume.fill("");
    await page.getByRole("button", { name: "Create template" }).click();
    const row = page.locator("#templates-table tbody tr").filter({ hasText: "Oslo rooms" });
    await row.waitFor();
    const text = await row.textContent();
    expect(text.includes("time_zone = Europe/Oslo") && text.includes("standby.delay_minutes = 15") && text.includes("Head office"), text);
    expect(!text.includes("audio.default_volume"), `only the keys filled in: ${text}`);
    expect(await page.locator("#template-setting-audio-default_volume-error").textContent() === "", "the error is gone");
    const stored = await api("/api/templates");
    expect(stored.length === 1 && Object.keys(stored[0].settings).length === 2 && stored[0].settings.time_zone === "Europe/Oslo"
      && stored[0].settings["standby.delay_minutes"] === 15, JSON.stringify(stored));
    template = stored[0];
  });

  let poly = null;
  await step("templates: the plan on all rooms is a table of changes, unsupported keys and unreachable rooms", async () => {
    const listener = (await api("/api/listenerservices")).find((l) => l.name === "Demo listener");
    poly = await api("/api/endpoints", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Poly room", ipAddress: "127.77.0.30", controlProtocol: "POLYCOM_TELNET",
        listenerServiceId: listener.id, username: "admin", password: "room-secret" }),
    });
    const row = page.locator(`#templates-table tr[data-template="${template.id}"]`);
    await row.getByRole("button", { name: "Plan on all rooms" }).click();
    await page.locator("#template-plan-table").waitFor({ timeout: 30000 });
    expect((await page.locator("#template-plan-title").textContent()).includes("Oslo rooms"), "the plan names the template");
    const headers = await page.locator("#template-plan-table thead th code").allTextContents();
    expect(JSON.stringify(headers) === JSON.stringify(["time_zone", "standby.delay_minutes"]), `columns: ${headers}`);
    for (const r of rooms) {
      const tr = page.locator(`#template-plan-table tr[data-room="${r.id}"]`);
      const zone = tr.locator("td").nth(0);
      expect(await zone.getAttribute("data-plan") === "change", `${r.name}: ${await tr.textContent()}`);
      expect((await zone.textContent()).includes("Etc/UTC → Europe/Oslo"), `${r.name}: ${await zone.textContent()}`);
      expect(await tr.locator("td").nth(1).getAttribute("data-plan") === "change", `${r.name} standby: ${await tr.textContent()}`);
    }
    const polyRow = page.locator(`#template-plan-table tr[data-room="${poly.id}"]`);
    const polyZone = polyRow.locator("td").nth(0);
    expect(await polyZone.getAttribute("data-plan") === "unsupported", `Poly: ${await polyRow.textContent()}`);
    expect((await polyZone.locator(".plan-why").textContent()) === "unsupported", await polyZone.textContent());
    expect((await polyZone.getAttribute("title") ?? "").length > 0, "the reason is the tooltip");
    expect(["change", "unchanged"].includes(await polyRow.locator("td").nth(1).getAttribute("data-plan")), `Poly standby: ${await polyRow.textContent()}`);
    const lobby = page.locator("#template-plan-table tr.plan-unreachable").filter({ hasText: "Lobby screen" });
    expect((await lobby.textContent()).includes("EndpointHasNoListenerService"), await lobby.textContent());
    const summary = await page.locator("#template-plan-summary").textContent();
    const answered = await api(`/api/templates/${template.id}/plan`, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ rooms: { all: true } }),
    });
    const s = answered.summary;
    expect(summary.includes(`of ${s.rooms} would change`) && summary.includes(`${s.unsupported} unsupported`)
      && summary.includes(`${s.unreachable} unreachable`) && s.unreachable === 1 && s.unsupported >= 1, `${summary} / ${JSON.stringify(s)}`);
    await page.locator("#template-plan").scrollIntoViewIfNeeded();
    await page.waitForFunction(() => !document.querySelector("#toast")?.textContent, null, { timeout: 10000 });
    await shot("templates");
  });

  // Applying the plan on screen (all rooms) starts a job, followed live until it finishes; its
  // undo is a job of its own. Each wait is on the page's state, never a fixed time.
  let applyJob = null;
  await step("templates: Apply starts a job whose view follows it live to the end; a room shows applied", async () => {
    const planned = (await api(`/api/templates/${template.id}/plan`, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ rooms: { all: true } }),
    })).summary;
    const apply = page.locator("#template-apply");
    expect(await apply.isEnabled(), "Apply is enabled: the plan has changes");
    let asked = "";
    page.once("dialog", (d) => { asked = d.message(); void d.accept(); });
    await apply.click();
    expect(asked.includes("Oslo rooms") && asked.includes(`to ${planned.rooms} rooms`) && asked.includes(`${planned.changes} change`),
      `the confirmation counts rooms and changes: ${asked} / ${JSON.stringify(planned)}`);
    await page.locator("#template-job:not([hidden])").waitFor();
    expect((await page.locator("#template-job-title").textContent()).includes("Apply “Oslo rooms”"), "the job view names the template");
    await page.locator('#template-job-title [data-state="finished"]').waitFor({ timeout: 45000 });
    const jobs = await api("/api/jobs");
    applyJob = jobs.find((j) => j.kind === "apply" && j.templateId === template.id);
    expect(applyJob && applyJob.state === "finished" && applyJob.progress.done === applyJob.progress.rooms, JSON.stringify(applyJob?.progress));
    const bar = page.locator("#template-job-progress");
    expect(await bar.getAttribute("value") === String(applyJob.progress.rooms), `the bar is full: ${await bar.getAttribute("value")}`);
    const summary = await page.locator("#template-job-summary").textContent();
    expect(summary.includes(`${applyJob.progress.applied} applied`) && summary.includes("1 room unreachable"), summary);
    const zone = page.locator(`#template-job-table tr[data-room="${board.id}"] td[data-outcome]`).first();
    expect(await zone.getAttribute("data-outcome") === "applied", `${board.name}: ${await zone.textContent()}`);
    expect((await zone.textContent()).includes("appliedEtc/UTC → Europe/Oslo"), await zone.textContent());
    const lobby = page.locator("#template-job-table tr.plan-unreachable").filter({ hasText: "Lobby screen" });
    expect((await lobby.textContent()).includes("EndpointHasNoListenerService"), await lobby.textContent());
    const polyZone = page.locator(`#template-job-table tr[data-room="${poly.id}"] td[data-outcome]`).first();
    expect(await polyZone.getAttribute("data-outcome") === "unsupported"
      && (await polyZone.locator(".job-reason").textContent()).length > 0, `Poly: ${await polyZone.textContent()}`);
    // The jobs list has it, and opening it from there shows the same view.
    const row = page.locator(`#template-jobs-table tr[data-job="${applyJob.id}"]`);
    await row.locator('[data-state="finished"]').waitFor();
    await page.locator("#template-job").scrollIntoViewIfNeeded();
    await page.waitForFunction(() => !document.querySelector("#toast")?.textContent, null, { timeout: 10000 });
    await page.locator("#template-job").screenshot({ path: join(shots, "template-job.png") });
  });

  await step("templates: Undo starts the undo job, followed to the end; the room shows applied back", async () => {
    let asked = "";
    page.once("dialog", (d) => { asked = d.message(); void d.accept(); });
    await page.locator("#template-undo").click();
    expect(asked.includes(`${applyJob.progress.applied} settings`), `the confirmation counts the settings: ${asked}`);
    await page.locator("#template-job-title").filter({ hasText: "Undo of “Oslo rooms”" }).waitFor();
    await page.locator('#template-job-title [data-state="finished"]').waitFor({ timeout: 45000 });
    const undoJob = (await api("/api/jobs")).find((j) => j.undoes === applyJob.id);
    expect(undoJob && undoJob.kind === "undo" && undoJob.state === "finished" && undoJob.progress.applied > 0, JSON.stringify(undoJob?.progress));
    const zone = page.locator(`#template-job-table tr[data-room="${board.id}"] td[data-outcome]`).first();
    expect(await zone.getAttribute("data-outcome") === "applied", `${board.name}: ${await zone.textContent()}`);
    expect((await zone.textContent()).includes("Europe/Oslo → Etc/UTC"), await zone.textContent());
    expect(await page.locator("#template-undo").count() === 0, "an undo cannot be undone");
    await page.locator(`#template-jobs-table tr[data-job="${undoJob.id}"] [data-state="finished"]`).waitFor();
    // The apply job, opened from the list, links its undo.
    await page.locator(`#template-jobs-table tr[data-job="${applyJob.id}"]`).getByRole("button", { name: "Open" }).click();
    await page.locator("#template-job-facts").filter({ hasText: "undone by" }).waitFor();
  });

  // Cancel: a job over the demo listener usually ends within a second, so the Poly room's
  // listener is told to hang (the simulator's `listener_hang`): its read lasts roomlink's
  // command timeout (5 s in the demo), the job runs while the board room is done at once.
  // Every wait is on the page's or the service's state; nothing sleeps.
  const hang = async (address, on) => {
    const answer = await fetch(`${sim}/sim/endpoints/${address}/fault`, on
      ? { method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ fault: "listener_hang" }) }
      : { method: "DELETE" });
    expect(answer.ok, `${on ? "PUT" : "DELETE"} the fault of ${address}: ${answer.status}`);
  };
  /** Starts an apply of the template on `ids` through the API; the page is told by the stream. */
  const applyOn = (ids) => api(`/api/templates/${template.id}/apply`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ rooms: { endpoints: ids } }),
  });
  const cancelThroughApi = (id) => fetch(`${base}/api/jobs/${id}/cancel`, { method: "POST", headers: { "X-Access-Token": ownToken } });
  await step("templates: Cancel (asked first) stops a running job; its room not begun is shown not done; Undo is offered", async () => {
    expect(poly.ipAddress === "127.77.0.30", JSON.stringify(poly.ipAddress));
    await hang(poly.ipAddress, true);
    let cancelled = null;
    try {
      const started = await applyOn([board.id, poly.id]);
      const began = Date.now();
      expect(started.state === "running", JSON.stringify(started.state));
      const row = page.locator(`#template-jobs-table tr[data-job="${started.id}"]`);
      await row.getByRole("button", { name: "Open" }).click();
      await page.locator(`#template-job-table tr[data-room="${board.id}"] [data-state="done"]`).waitFor();
      await page.locator(`#template-job-table tr[data-room="${poly.id}"] [data-state="pending"]`).waitFor();
      expect(await page.locator('#template-job-title [data-state="running"]').count() === 1
        && await page.locator("#template-undo").count() === 0, "running: Cancel, no Undo");
      // Dismissed first: nothing is sent and the job runs on.
      let asked = "";
      page.once("dialog", (d) => { asked = d.message(); void d.dismiss(); });
      await page.locator("#template-cancel").click();
      expect(asked.includes("Cancel the apply of “Oslo rooms”") && asked.includes("The 1 room not done yet"), `the confirmation: ${asked}`);
      expect((await api(`/api/jobs/${started.id}`)).state === "running", "kept running when dismissed");
      page.once("dialog", (d) => void d.accept());
      await page.locator("#template-cancel").click();
      await page.locator('#template-job-title [data-state="cancelled"]').waitFor();
      const ms = Date.now() - began;
      cancelled = await api(`/api/jobs/${started.id}`);
      expect(cancelled.state === "cancelled" && cancelled.finishedAt, `cancelled after ${ms} ms: ${JSON.stringify(cancelled.state)}`);
      expect(cancelled.rooms.find((r) => r.endpointId === poly.id).state === "pending", "the Poly room was not begun");
      // The room not begun says so, in words; the board room keeps its outcome.
      const polyRow = page.locator(`#template-job-table tr[data-room="${poly.id}"]`);
      expect(await polyRow.locator(".badge").first().textContent() === "not done", await polyRow.textContent());
      expect((await polyRow.textContent()).includes("not written: Europe/Oslo"), await polyRow.textContent());
      const zone = page.locator(`#template-job-table tr[data-room="${board.id}"] td[data-outcome]`).first();
      expect((await zone.textContent()).includes("appliedEtc/UTC → Europe/Oslo"), await zone.textContent());
      expect((await page.locator("#template-job-summary").textContent()).includes("1 room not done"), await page.locator("#template-job-summary").textContent());
      expect((await page.locator("#template-job-facts").textContent()).includes(", cancelled "), await page.locator("#template-job-facts").textContent());
      expect(await page.locator("#template-cancel").count() === 0, "no Cancel once cancelled");
      await page.locator("#template-undo").waitFor();
      await row.locator('[data-state="cancelled"]').filter({ hasText: "cancelled" }).waitFor();
      // Only a running job can be cancelled: the service's Conflict, in its error shape.
      const again = await cancelThroughApi(started.id);
      const body = await again.json();
      expect(again.status === 409 && body.errorName === "Conflict" && body.errorMessage.includes("cancelled"), `${again.status} ${JSON.stringify(body)}`);
      await page.waitForFunction(() => !document.querySelector("#toast")?.textContent, null, { timeout: 10000 });
      await page.locator("#template-job").screenshot({ path: join(shots, "template-job-cancelled.png") });
    } finally {
      await hang(poly.ipAddress, false);
    }
    // A cancelled apply is undone as a finished one: the board room gets its time zone back.
    let asked = "";
    page.once("dialog", (d) => { asked = d.message(); void d.accept(); });
    await page.locator("#template-undo").click();
    const n = cancelled.progress.applied;
    expect(n > 0 && asked.includes(`${n} setting${n === 1 ? "" : "s"} it applied on 1 room`), `the confirmation: ${asked}`);
    await page.locator("#template-job-title").filter({ hasText: "Undo of “Oslo rooms”" }).waitFor();
    await page.locator('#template-job-title [data-state="finished"]').waitFor({ timeout: 45000 });
    const zone = page.locator(`#template-job-table tr[data-room="${board.id}"] td[data-outcome]`).first();
    expect((await zone.textContent()).includes("Europe/Oslo → Etc/UTC"), await zone.textContent());
    expect(await page.locator("#template-job-table tbody tr").count() === 1, "the undo has the board room only");
  });

  await step("templates: a cancel the service refuses (the job ended meanwhile) is said in words", async () => {
    await hang(poly.ipAddress, true);
    try {
      const started = await applyOn([poly.id]);
      const row = page.locator(`#template-jobs-table tr[data-job="${started.id}"]`);
      await row.locator('[data-state="running"]').waitFor();
      await row.getByRole("button", { name: "Open" }).click();
      await page.locator('#template-job-title [data-state="running"]').waitFor();
      // The page's cancel is held until the job has been cancelled elsewhere: the service then
      // answers the page's request with its own Conflict.
      const path = `**/api/jobs/${started.id}/cancel`;
      let elsewhere = null;
      await page.route(path, async (route) => {
        elsewhere = (await cancelThroughApi(started.id)).status;
        await route.continue();
      });
      try {
        page.once("dialog", (d) => void d.accept());
        await page.locator("#template-cancel").click();
        await page.locator("#template-cancel-error:not(:empty)").waitFor();
      } finally {
        await page.unroute(path);
      }
      expect(elsewhere === 200, `cancelled elsewhere first: ${elsewhere}`);
      const said = await page.locator("#template-cancel-error").textContent();
      expect(said.startsWith("Conflict: ") && said.includes("only a running job can be cancelled"), said);
      // The view reads the job again: cancelled, its room not done, nothing to undo; the message stays.
      await page.locator('#template-job-title [data-state="cancelled"]').waitFor();
      await page.locator("#template-job-nothing").waitFor();
      expect(await page.locator(`#template-job-table tr[data-room="${poly.id}"] .badge`).first().textContent() === "not done", "not done");
      expect(await page.locator("#template-cancel-error").textContent() === said, "the message outlives the redraw");
    } finally {
      await hang(poly.ipAddress, false);
    }
  });

  // Drift (issue #36 item 3): the template assigned to rooms, which are checked for whether
  // they still hold its settings. After the undo above every demo room holds other values than
  // the template again: drifted. The card follows the stream's `drift` events.
  const roomsOf = () => api(`/api/templates/${template.id}/rooms`);
  const jobIds = async () => new Set((await api("/api/jobs")).map((j) => j.id));
  /** The job started since `before` was read, once it is finished. */
  const newJob = async (before) => {
    for (let i = 0; ; i++) {
      const job = (await api("/api/jobs")).find((j) => !before.has(j.id));
      if (job && job.state === "finished") return job;
      expect(i < 200, `a new job, finished: ${JSON.stringify(job?.progress)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  const driftRow = (id) => page.locator(`#template-rooms-table tr[data-room="${id}"]`);
  let reapplyJob = null;
  await step("templates: assign chosen rooms, then all rooms; the card lists them by name, unchecked or checked", async () => {
    await page.locator("#template-rooms:not([hidden])").waitFor();
    expect((await page.locator("#template-rooms-title").textContent()).includes("Oslo rooms"), "the card names the template");
    await page.locator("#template-rooms-none").waitFor();
    expect(await page.locator("#template-reapply").isDisabled() && await page.locator("#template-check").isDisabled(), "nothing to check or re-apply");
    const toggle = page.getByRole("button", { name: "Assign rooms" });
    await toggle.click();
    expect(await toggle.getAttribute("aria-expanded") === "true", "the form is open");
    await page.getByLabel("Rooms to assign").selectOption("chosen");
    // None ticked: said at the form, nothing sent.
    await page.locator("#template-assign-submit").click();
    await page.locator("#template-assign-error:not(:empty)").waitFor();
    for (const r of rooms) await page.locator(`#template-assign-rooms-room-${r.id}`).check();
    await page.locator("#template-assign-submit").click();
    await page.waitForFunction((n) => document.querySelectorAll("#template-rooms-table tbody tr").length === n, rooms.length);
    await page.locator("#template-assign").waitFor({ state: "hidden" });
    const names = await page.locator("#template-rooms-table tbody th").allTextContents();
    expect(JSON.stringify(names) === JSON.stringify(rooms.map((r) => r.name).sort()), `by name: ${names}`);
    // All rooms: the Poly room and the Lobby screen (no listener) join.
    await toggle.click();
    expect(await page.getByLabel("Rooms to assign").inputValue() === "all", "all rooms by default");
    await page.locator("#template-assign-submit").click();
    await page.waitForFunction((n) => document.querySelectorAll("#template-rooms-table tbody tr").length === n, rooms.length + 2);
    const doc = await roomsOf();
    expect(doc.counts.assigned === rooms.length + 2 && doc.rooms.some((r) => r.endpointId === poly.id), JSON.stringify(doc.counts));
    const states = await page.locator("#template-rooms-table tbody tr").evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-state")));
    expect(states.every((s) => ["unchecked", "in_line", "drifted", "unreachable"].includes(s)), `states: ${states}`);
  });

  await step("templates: Check now shows the demo rooms drifted (held → template) and the Lobby screen unreachable", async () => {
    await page.locator("#template-check").click();
    for (const r of rooms) await driftRow(r.id).and(page.locator('[data-state="drifted"]')).waitFor({ timeout: 30000 });
    const lobby = page.locator("#template-rooms-table tr").filter({ hasText: "Lobby screen" });
    await lobby.and(page.locator('[data-state="unreachable"]')).waitFor();
    expect((await lobby.textContent()).includes("EndpointHasNoListenerService"), await lobby.textContent());
    const zone = driftRow(board.id).locator('li[data-key="time_zone"]');
    expect((await zone.textContent()) === "time_zone: Etc/UTC → Europe/Oslo", await zone.textContent());
    expect(await driftRow(board.id).locator(".badge").textContent() === "drifted", "the badge in words");
    // The Poly room cannot set a time zone: not drift.
    expect(await driftRow(poly.id).locator('li[data-key="time_zone"]').count() === 0, await driftRow(poly.id).textContent());
    const c = (await roomsOf()).counts;
    await page.locator("#template-check:not([disabled])").waitFor();
    const summary = await page.locator("#template-rooms-summary").textContent();
    expect(c.drifted >= rooms.length && summary.startsWith(`${c.drifted} rooms drifted of ${c.assigned} assigned`)
      && summary.includes(`${c.inLine} in line`) && summary.includes(`${c.unreachable} unreachable`), `${summary} / ${JSON.stringify(c)}`);
    expect(await page.locator("#template-reapply").isEnabled(), "Re-apply is enabled");
    await page.waitForFunction(() => !document.querySelector("#toast")?.textContent, null, { timeout: 10000 });
    await page.locator("#template-rooms").screenshot({ path: join(shots, "template-drift.png") });
  });

  await step("templates: Re-apply to drifted rooms runs a job on them, shown as Apply's; Check now shows them in line", async () => {
    const before = await jobIds();
    const drifted = (await roomsOf()).rooms.filter((r) => r.state === "drifted");
    let asked = "";
    page.once("dialog", (d) => { asked = d.message(); void d.accept(); });
    await page.locator("#template-reapply").click();
    expect(asked.includes(`${drifted.length} drifted rooms`), `the confirmation counts the rooms: ${asked}`);
    reapplyJob = await newJob(before);
    expect(reapplyJob.kind === "apply" && reapplyJob.templateId === template.id, JSON.stringify(reapplyJob));
    expect(JSON.stringify(reapplyJob.rooms.map((r) => r.endpointId).sort()) === JSON.stringify(drifted.map((r) => r.endpointId).sort()),
      `the drifted rooms only: ${reapplyJob.rooms.map((r) => r.name)}`);
    await page.locator(`#template-jobs-table tr.selected[data-job="${reapplyJob.id}"] [data-state="finished"]`).waitFor({ timeout: 30000 });
    await page.locator('#template-job-title [data-state="finished"]').waitFor();
    expect(await page.locator("#template-job-table tbody tr").count() === drifted.length, "the job view has the drifted rooms");
    const zone = page.locator(`#template-job-table tr[data-room="${board.id}"] td[data-outcome]`).first();
    expect((await zone.textContent()).includes("appliedEtc/UTC → Europe/Oslo"), await zone.textContent());
    await page.locator("#template-check").click();
    for (const r of rooms) await driftRow(r.id).and(page.locator('[data-state="in_line"]')).waitFor({ timeout: 30000 });
    expect((await driftRow(board.id).textContent()).includes("none"), await driftRow(board.id).textContent());
    await page.locator("#template-check:not([disabled])").waitFor();
    expect(await page.locator("#template-reapply").isDisabled(), "nothing left to re-apply");
  });

  await step("templates: unassign one room; a check made elsewhere shows through the stream's drift events", async () => {
    const one = rooms.find((r) => r.id !== board.id);
    await driftRow(one.id).getByRole("button", { name: `Unassign ${one.name}` }).click();
    await driftRow(one.id).waitFor({ state: "detached" });
    const doc = await roomsOf();
    expect(doc.counts.assigned === rooms.length + 1 && !doc.rooms.some((r) => r.endpointId === one.id), JSON.stringify(doc.counts));
    // Behind the page's back: the re-apply undone and the rooms checked through the API.
    const before = await jobIds();
    await api(`/api/jobs/${reapplyJob.id}/undo`, { method: "POST" });
    await newJob(before);
    await api(`/api/templates/${template.id}/check`, { method: "POST" });
    await driftRow(board.id).and(page.locator('[data-state="drifted"]')).waitFor({ timeout: 15000 });
    await page.locator("#template-reapply:not([disabled])").waitFor();
  });

  await step("templates: the plan behind one listener; delete asks first", async () => {
    const listener = (await api("/api/listenerservices")).find((l) => l.name === "Demo listener");
    await page.getByLabel("Rooms", { exact: true }).selectOption(listener.id);
    await page.locator("#template-plan-again").click();
    await page.waitForFunction(() => !document.querySelector("#template-plan-table tr.plan-unreachable")
      && document.querySelector("#template-plan-table"), null, { timeout: 30000 });
    const planned = await page.locator("#template-plan-table tbody tr").count();
    expect(planned === rooms.length + 1, `the listener's rooms: ${planned}`);
    // A second template, deleted: cancelling keeps it, accepting deletes it.
    await api("/api/templates", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Quiet rooms", settings: { "auto_answer.mode": "off" } }),
    });
    await page.getByRole("link", { name: "Health", exact: true }).click();
    await page.getByRole("link", { name: "Templates", exact: true }).click();
    const row = page.locator("#templates-table tbody tr").filter({ hasText: "Quiet rooms" });
    await row.waitFor();
    let asked = "";
    page.once("dialog", (d) => { asked = d.message(); void d.dismiss(); });
    await row.getByRole("button", { name: "Delete", exact: true }).click();
    expect(asked.includes("Quiet rooms"), `the confirmation names the template: ${asked}`);
    expect((await api("/api/templates")).length === 2, "kept when cancelled");
    page.once("dialog", (d) => void d.accept());
    await row.getByRole("button", { name: "Delete", exact: true }).click();
    await row.waitFor({ state: "detached" });
    const left = await api("/api/templates");
    expect(left.length === 1 && left[0].id === template.id, JSON.stringify(left));
    await api(`/api/endpoints/${poly.id}`, { method: "DELETE" });
    // In the audit log (where the next step signs out from, as before).
    await page.getByRole("link", { name: "Audit log", exact: true }).click();
    await page.locator("#audit-table").waitFor();
    const audit = await page.locator("#audit-table").textContent();
    for (const op of ["templates.create", "templates.delete"]) expect(audit.includes(op), `the audit log shows ${op}`);
  });

  // Raw Cisco paths (`cisco:<xConfiguration path>`): rows of path and value under the catalog's
  // fields, checked by the service against Cisco's schemas; a refusal is shown at its row. The
  // demo rooms are emulated Cisco rooms: Audio Ultrasound MaxVolume 70 (0..90), UserInterface
  // Language English.
  const MAX_VOLUME = "cisco:Audio Ultrasound MaxVolume";
  const LANGUAGE = "cisco:UserInterface Language";
  let rawTemplate = null;
  await step("templates: raw Cisco paths are refused at their row, then a template with them is created", async () => {
    await page.getByRole("link", { name: "Templates", exact: true }).click();
    await page.locator("#template-form").waitFor();
    const before = (await api("/api/templates")).length;
    const paths = page.getByLabel("Path after cisco:");
    const values = page.getByLabel("Value", { exact: true });
    const rowError = (i) => page.locator("#template-raw-rows [data-raw-row] > .field-error").nth(i);
    expect(await paths.count() === 0, "no raw row at first");
    await page.getByLabel("Name", { exact: true }).fill("Cisco extras");
    await page.getByRole("button", { name: "Add raw path" }).click();
    expect(await paths.count() === 1, "a row added");
    expect(await paths.first().evaluate((el) => el === document.activeElement), "the new path has the focus");
    expect(await paths.first().getAttribute("placeholder") === "Audio Ultrasound MaxVolume", "the placeholder");
    // Typed in lower case: the service's message names it in Cisco's spelling, and the row is found.
    await paths.first().fill("audio ultrasound maxvolume");
    await values.first().fill("91");
    // An empty row is left out.
    await page.getByRole("button", { name: "Add raw path" }).click();
    await page.getByRole("button", { name: "Create template" }).click();
    await page.locator("#template-raw-rows [data-raw-row] > .field-error:not(:empty)").first().waitFor();
    const refused = await rowError(0).textContent();
    expect(/^Invalid: settings\.cisco:Audio Ultrasound MaxVolume: 91 is not a whole number from 0 to 90/i.test(refused), refused);
    expect(await values.first().getAttribute("aria-invalid") === "true", "the value marked invalid");
    expect(await page.locator("#template-form-error").textContent() === "", "not the form's error");
    expect((await api("/api/templates")).length === before, "nothing stored");
    // A path a catalog key writes is refused at its own row, the path marked.
    await values.first().fill("40");
    await paths.nth(1).fill("Audio DefaultVolume");
    await values.nth(1).fill("50");
    await page.getByRole("button", { name: "Add raw path" }).click();
    await paths.nth(2).fill("UserInterface Language");
    await values.nth(2).fill("Norwegian");
    await page.getByRole("button", { name: "Create template" }).click();
    await rowError(1).and(page.locator(":not(:empty)")).waitFor();
    const catalogKey = await rowError(1).textContent();
    expect(catalogKey.includes("'cisco:Audio DefaultVolume'") && catalogKey.includes("audio.default_volume"), catalogKey);
    expect(await paths.nth(1).getAttribute("aria-invalid") === "true" && await rowError(0).textContent() === "", "the second row only");
    expect((await api("/api/templates")).length === before, "still nothing stored");
    await page.waitForFunction(() => !document.querySelector("#toast")?.textContent, null, { timeout: 10000 });
    await page.locator("#template-raw").scrollIntoViewIfNeeded();
    await page.locator("#template-create").screenshot({ path: join(shots, "template-raw-paths.png") });
    // Removed: the rows left are sent, a whole number as a number and a word as text.
    await page.getByRole("button", { name: "Remove raw path 2" }).click();
    expect(await paths.count() === 2, "the row removed");
    await page.getByRole("button", { name: "Create template" }).click();
    const row = page.locator("#templates-table tbody tr").filter({ hasText: "Cisco extras" });
    await row.waitFor();
    const chips = await row.locator(".setting-chips li").allTextContents();
    expect(chips.includes(`${MAX_VOLUME} = 40`) && chips.includes(`${LANGUAGE} = Norwegian`) && chips.length === 2, `chips: ${chips}`);
    await page.locator("#template-form").filter({ has: page.locator("#template-raw-rows:empty") }).waitFor();
    rawTemplate = (await api("/api/templates")).find((t) => t.name === "Cisco extras");
    expect(rawTemplate && rawTemplate.settings[MAX_VOLUME] === 40 && rawTemplate.settings[LANGUAGE] === "Norwegian"
      && Object.keys(rawTemplate.settings).length === 2, JSON.stringify(rawTemplate));
  });

  await step("templates: the raw paths' plan: the Cisco rooms change 70 → 40 and English → Norwegian", async () => {
    const row = page.locator(`#templates-table tr[data-template="${rawTemplate.id}"]`);
    await row.getByRole("button", { name: "Plan on all rooms" }).click();
    await page.locator("#template-plan-title").filter({ hasText: "Cisco extras" }).waitFor();
    await page.locator("#template-plan-table thead th code").filter({ hasText: MAX_VOLUME }).waitFor({ timeout: 30000 });
    const headers = await page.locator("#template-plan-table thead th code").allTextContents();
    expect(JSON.stringify(headers) === JSON.stringify([MAX_VOLUME, LANGUAGE]), `columns: ${headers}`);
    // Raw paths need listener 3.5.0, which the demo's listener reports.
    const version = (await api("/api/listenerservices")).find((l) => l.name === "Demo listener").listenerVersion ?? "";
    expect(version === "3.5.0", `demo listener ${version}`);
    for (const r of rooms) {
      const tr = page.locator(`#template-plan-table tr[data-room="${r.id}"]`);
      const volume = tr.locator("td").nth(0);
      const language = tr.locator("td").nth(1);
      expect(await volume.getAttribute("data-plan") === "change" && (await volume.textContent()).includes("70 → 40"), `${r.name}: ${await tr.textContent()}`);
      expect(await language.getAttribute("data-plan") === "change" && (await language.textContent()).includes("English → Norwegian"), `${r.name}: ${await tr.textContent()}`);
    }
    await api(`/api/templates/${rawTemplate.id}`, { method: "DELETE" });
    // Back to the audit log, where the next step signs out from (sign-in returns to the page left).
    await page.getByRole("link", { name: "Audit log", exact: true }).click();
    await page.locator("#audit-table").waitFor();
  });

  await step("sign out forgets the token", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Sign in" }).waitFor();
  });

  await step("a read-only user sees no edit or import, but the controls", async () => {
    await page.getByLabel("Username").fill(env("CONSOLE_VIEWER"));
    await page.getByLabel("Password").fill(env("CONSOLE_VIEWER_PASSWORD"));
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator("#rooms-table").waitFor();
    expect(await page.getByRole("link", { name: "Audit log", exact: true }).count() === 0, "no audit link");
    await page.goto(`${base}/console/#/room/${board.id}`);
    await page.locator("dl.fields").waitFor();
    expect(await page.getByRole("button", { name: "Save changes" }).count() === 0, "no save button");
    expect(await page.getByRole("button", { name: "Join" }).count() === 1, "join is there");
    await page.getByRole("link", { name: "Import", exact: true }).click();
    await page.getByText("Importing needs ROLE_READWRITE.").waitFor();
  });

  await step("a read-only user is told that webhooks need the read-write role", async () => {
    await page.getByRole("link", { name: "Webhooks", exact: true }).click();
    await page.locator("#webhooks-forbidden").waitFor();
    expect((await page.locator("#webhooks-forbidden").textContent()).includes("Webhooks need the read-write role"), "the message");
    expect(await page.locator("#webhook-url").count() === 0 && await page.locator("main .error").count() === 0, "no form, no error");
  });

  await step("a read-only user plans templates but cannot create or delete them, nor cancel a job", async () => {
    await page.getByRole("link", { name: "Templates", exact: true }).click();
    const row = page.locator(`#templates-table tr[data-template="${template.id}"]`);
    await row.waitFor();
    expect(await page.locator("#template-form").count() === 0 && await page.getByRole("button", { name: "Create template" }).count() === 0, "no form");
    expect(await row.getByRole("button", { name: "Delete" }).count() === 0, "no delete");
    await page.locator("#templates-read-only").waitFor();
    await row.getByRole("button", { name: "Plan on all rooms" }).click();
    // The assigned rooms, without a control to change them.
    await page.locator(`#template-rooms-table tr[data-room="${board.id}"]`).waitFor();
    await page.locator("#template-rooms-read-only").waitFor();
    for (const control of ["#template-check", "#template-reapply", "#template-assign-open"]) {
      expect(await page.locator(control).count() === 0, `no ${control}`);
    }
    expect(await page.locator("#template-rooms-table").getByRole("button").count() === 0, "no Unassign");
    await page.locator(`#template-plan-table tr[data-room="${board.id}"] td[data-plan="change"]`).first().waitFor({ timeout: 30000 });
    // Apply is the service's to refuse: the 403 is said in words, and no job starts.
    const before = (await api("/api/jobs")).length;
    page.once("dialog", (d) => void d.accept());
    await page.locator("#template-apply").click();
    await page.locator("#template-apply-error:not(:empty)").waitFor();
    const refused = await page.locator("#template-apply-error").textContent();
    expect(refused.startsWith("Applying a template needs the read-write role (ROLE_READWRITE).") && refused.includes("Forbidden"), refused);
    expect((await api("/api/jobs")).length === before, "no job started");
    await page.locator(`#template-jobs-table tr[data-job="${applyJob.id}"]`).waitFor();
    // A job running (the board room's listener hanging): its view has no Cancel for this user.
    await hang(board.address, true);
    try {
      const started = await applyOn([board.id]);
      const row = page.locator(`#template-jobs-table tr[data-job="${started.id}"]`);
      await row.getByRole("button", { name: "Open" }).click();
      await page.locator('#template-job-title [data-state="running"]').waitFor();
      expect(await page.locator("#template-cancel").count() === 0, "no Cancel for a read-only user");
      expect((await cancelThroughApi(started.id)).status === 200, "cancelled by the read-write user");
      await page.locator('#template-job-title [data-state="cancelled"]').waitFor();
    } finally {
      await hang(board.address, false);
    }
  });

  await step("on a phone", async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    const p = await phone.newPage();
    await p.goto(`${base}/console/`);
    await p.getByLabel("Username").fill(env("CONSOLE_USER"));
    await p.getByLabel("Password").fill(env("CONSOLE_PASSWORD"));
    await p.getByRole("button", { name: "Sign in" }).click();
    await p.locator("#rooms-table").waitFor();
    const wide = await p.evaluate(() => document.documentElement.scrollWidth);
    expect(wide <= 390, `the page is ${wide}px wide on a 390px screen`);
    await p.screenshot({ path: join(shots, "rooms-phone.png"), fullPage: true });
    // The templates' form and tables too (a wide plan scrolls inside its own box).
    await p.goto(`${base}/console/#/templates`);
    await p.locator("#templates-table").waitFor();
    await p.locator("#template-form").waitFor();
    const templatesWide = await p.evaluate(() => document.documentElement.scrollWidth);
    expect(templatesWide <= 390, `the templates page is ${templatesWide}px wide on a 390px screen`);
    // The assigned rooms too (their table scrolls inside its own box).
    await p.locator(`#templates-table tr[data-template="${template.id}"]`).getByRole("button", { name: "Assigned rooms" }).click();
    await p.locator("#template-rooms-table").waitFor();
    const driftWide = await p.evaluate(() => document.documentElement.scrollWidth);
    expect(driftWide <= 390, `the assigned rooms make the page ${driftWide}px wide on a 390px screen`);
    await phone.close();
  });

  await step("unknown console paths: the page or the catalog's NotFound", async () => {
    const deep = await page.request.get(`${base}/console/rooms`);
    expect(deep.status() === 200 && (await deep.text()).includes('id="app"'), "a page path answers the index");
    const missing = await page.request.get(`${base}/console/nope.js`);
    expect(missing.status() === 404 && (await missing.json()).errorName === "NotFound", "a missing file is NotFound");
  });

  const unexpected = problems.filter((p) => !/status of 40[0-9]/.test(p) && !/status of 50[0-9]/.test(p));
  expect(unexpected.length === 0, `browser problems:\n${unexpected.join("\n")}`);
} catch (e) {
  failed = true;
  console.error(e);
  if (current) await current.screenshot({ path: join(shots, "..", "..", "target", "console-test-failure.png") }).catch(() => undefined);
  if (problems.length) console.error(problems.join("\n"));
} finally {
  await browser.close();
  receiver.close();
}
console.log(failed ? "console test: FAILED" : `console test: ${steps.length} steps passed`);
process.exit(failed ? 1 : 0);

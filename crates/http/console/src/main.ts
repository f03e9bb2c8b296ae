// The console's shell: sign-in, navigation and the hash router (#/rooms, #/room/ID, ...).

import { ApiError, canWrite, current, signIn, signOut, whenSignedOut } from "./api";
import { h, replace } from "./dom";
import { reset } from "./live";
import { Connection, stop as stopStream, watchConnection } from "./stream";
import { auditPage, failuresPage, importPage, listenersPage } from "./pages";
import { roomPage } from "./room";
import { roomsPage, wallPage } from "./rooms";
import { usagePage } from "./usage";
import { inventoryPage } from "./inventory";
import { healthPage } from "./health";
import { webhooksPage } from "./webhooks";
import { templatesPage } from "./templates";

const app = document.getElementById("app") as HTMLElement;
let leave: (() => void) | null = null;
let unwatch: (() => void) | null = null;

const CONNECTION_TEXT: Record<Connection, string> = {
  live: "Live",
  connecting: "Connecting…",
  offline: "Not live: reading every 15 s",
  idle: "",
};

function signInPage(message = ""): void {
  leave?.();
  leave = null;
  reset();
  unwatch?.();
  unwatch = null;
  stopStream();
  document.body.classList.remove("signed-in");
  const username = h("input", { id: "username", name: "username", autocomplete: "username", required: true });
  const password = h("input", { id: "password", name: "password", type: "password", autocomplete: "current-password", required: true });
  const error = h("p", { class: "error", role: "alert", id: "sign-in-error" }, message);
  const button = h("button", { type: "submit" }, "Sign in");
  const form = h("form", {
    class: "sign-in card", "aria-labelledby": "sign-in-title",
    onsubmit: async (ev: Event) => {
      ev.preventDefault();
      error.textContent = "";
      button.disabled = true;
      try {
        await signIn(username.value.trim(), password.value);
        password.value = "";
        const writeOnly = NAV.some(([href, , write]) => write && href === location.hash);
        if (!location.hash || location.hash === "#/" || location.hash === "#" || (writeOnly && !canWrite())) {
          location.hash = "#/rooms";
        }
        shell();
      } catch (e) {
        error.textContent = e instanceof ApiError && e.status === 401
          ? "Wrong username or password."
          : `Could not sign in: ${e instanceof Error ? e.message : String(e)}`;
        password.focus();
      } finally {
        button.disabled = false;
      }
    },
  },
    h("h1", { id: "sign-in-title" }, "roomlink console"),
    h("p", null, "Sign in with your roomlink service user or platform user."),
    h("div", { class: "field" }, h("label", { for: "username" }, "Username"), username),
    h("div", { class: "field" }, h("label", { for: "password" }, "Password"), password),
    error, button);
  replace(app, h("main", { id: "main" }, form));
  username.focus();
}

const NAV: [string, string, boolean][] = [
  ["#/rooms", "Rooms", false],
  ["#/wall", "Wall", false],
  ["#/import", "Import", false],
  ["#/listeners", "Listeners", false],
  ["#/failures", "Failures", false],
  ["#/usage", "Usage", false],
  ["#/health", "Health", false],
  // Shown to read-only users too: the page says that webhooks need the read-write role.
  ["#/webhooks", "Webhooks", false],
  ["#/inventory", "Inventory", false],
  ["#/templates", "Templates", false],
  ["#/audit", "Audit log", true],
];

let main: HTMLElement;
let nav: HTMLElement;

function shell(): void {
  const session = current();
  if (!session) {
    signInPage();
    return;
  }
  document.body.classList.add("signed-in");
  nav = h("nav", { "aria-label": "Pages" },
    h("ul", null, NAV.filter(([, , write]) => !write || canWrite())
      .map(([href, label]) => h("li", null, h("a", { href }, label)))));
  main = h("main", { id: "main", tabindex: -1 });
  // Whether pages update as things change (the service's event stream) or on a timer.
  const liveState = h("span", { id: "live-state", class: "live-state", role: "status" });
  unwatch?.();
  unwatch = watchConnection((c) => {
    liveState.dataset.state = c;
    liveState.textContent = CONNECTION_TEXT[c];
  });
  replace(app,
    h("a", { href: "#main", class: "skip", onclick: (ev: Event) => { ev.preventDefault(); main.focus(); } }, "Skip to content"),
    h("header", { class: "top" },
      h("span", { class: "brand" }, "roomlink"),
      nav,
      liveState,
      h("span", { class: "who" },
        `${session.username} · ${session.enterpriseName} · ${canWrite() ? "read-write" : "read-only"} `,
        h("button", { type: "button", class: "secondary", id: "sign-out", onclick: () => void signOut() }, "Sign out"))),
    main);
  route();
}

function route(): void {
  if (!current()) return;
  leave?.();
  leave = null;
  const hash = location.hash || "#/rooms";
  for (const a of nav.querySelectorAll("a")) {
    const active = hash === a.getAttribute("href") || (hash.startsWith("#/room/") && a.getAttribute("href") === "#/rooms");
    if (active) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const room = /^#\/room\/(.+)$/.exec(hash);
  if (room) leave = roomPage(main, decodeURIComponent(room[1]));
  else if (hash === "#/wall") leave = wallPage(main);
  else if (hash === "#/import") leave = importPage(main);
  else if (hash === "#/listeners") leave = listenersPage(main);
  else if (hash === "#/failures") leave = failuresPage(main);
  else if (hash === "#/usage") leave = usagePage(main);
  else if (hash === "#/inventory") leave = inventoryPage(main);
  else if (hash === "#/health") leave = healthPage(main);
  else if (hash === "#/webhooks") leave = webhooksPage(main);
  else if (hash === "#/templates") leave = templatesPage(main);
  else if (hash === "#/audit") leave = auditPage(main);
  else leave = roomsPage(main);
  document.title = `${main.querySelector("h1")?.textContent ?? "Console"} · roomlink`;
}

window.addEventListener("hashchange", route);
whenSignedOut(() => signInPage("You are signed out."));
signInPage();

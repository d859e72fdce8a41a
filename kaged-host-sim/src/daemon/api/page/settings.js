// The settings page of `kaged-host-sim up`: plugin states and restart
// history, knob panels rendered from each plugin's knob schema, each
// plugin's live notifications (its WebSocket) and a live audit tail. Plain JavaScript, no build step, no external assets.
"use strict";

// Every error the page meets (read by the browser test).
window.kagedErrors = [];
addEventListener("error", (e) => window.kagedErrors.push(String(e.message)));
addEventListener("unhandledrejection", (e) => window.kagedErrors.push(String(e.reason)));

const AGENT = new URLSearchParams(location.search).get("agent");
// The audit event names and the WebSocket subprotocols, from the daemon's
// tables of them.
const NAMES = JSON.parse(document.getElementById("daemon-names").textContent);
const AUDIT_EVENTS = NAMES.all;
const LIFECYCLE = new Set(NAMES.lifecycle);

// The daemon's token. `up` prints the page's URL with it in the fragment
// (`#token=`), which the browser never sends to any server; it is kept in
// this tab's sessionStorage (this origin only: scheme, host and port) and
// taken out of the address bar and the history at once. No cookie: a
// cookie is not scoped by port and would reach every server on 127.0.0.1.
const TOKEN_KEY = "kaged_token";
const TOKEN = (() => {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const given = fragment.get("token");
  if (given !== null) {
    sessionStorage.setItem(TOKEN_KEY, given);
    fragment.delete("token");
    const rest = fragment.toString();
    history.replaceState(history.state, "",
      location.pathname + location.search + (rest ? `#${rest}` : ""));
  }
  return sessionStorage.getItem(TOKEN_KEY);
})();
const AUDIT_KEEP = 200;
const NOTIFICATIONS_KEEP = 20;

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function withAgent(path) {
  return AGENT ? `${path}?agent=${encodeURIComponent(AGENT)}` : path;
}

function authorization() {
  return { Authorization: `Bearer ${TOKEN}` };
}

// A wrong or stale token (the daemon makes a new one at every start):
// forget it and say how to get the new one.
function tokenRefused() {
  sessionStorage.removeItem(TOKEN_KEY);
  document.getElementById("needs-token").hidden = false;
}

async function api(method, path, body) {
  const init = {
    method,
    credentials: "omit",
    headers: { ...authorization(), "Content-Type": "application/json" },
  };
  if (body !== undefined) init.body = JSON.stringify(body);
  const r = await fetch(path, init);
  if (r.status === 401) tokenRefused();
  let json = null;
  try { json = await r.json(); } catch (_) { /* an empty or non-JSON body */ }
  return { ok: r.ok, status: r.status, json };
}

function errorText(res) {
  const e = res.json && res.json.error;
  return e ? e.message : `HTTP ${res.status}`;
}

// ---- plugins ---------------------------------------------------------------

const cards = new Map();

function facts(p) {
  const exit = p.last_exit
    ? (p.last_exit.signal !== null ? `signal ${p.last_exit.signal}` : `code ${p.last_exit.code}`)
    : "—";
  return [["version", p.version || "?"], ["pid", p.pid ?? "—"], ["restarts", p.restarts],
    ["last exit", exit], ["caged", p.caged === null ? "—" : (p.caged ? "yes" : "NO")],
    ["health", p.health ? p.health.summary : "—"]];
}

function card(p) {
  let c = cards.get(p.name);
  if (!c) {
    const action = (what) => el("button", {
      type: "button", class: `action ${what}`, text: what,
      onclick: async () => {
        const res = await api("POST", `/api/v1/plugins/${encodeURIComponent(p.name)}/${what}`);
        if (!res.ok) alertIn(c.root, errorText(res));
        refresh();
      },
    });
    c = {
      root: el("section", { class: "plugin", "data-plugin": p.name }),
      state: el("span", { class: "badge state" }),
      health: el("span", { class: "badge health", "data-health": "" }),
      facts: el("dl", { class: "facts" }),
      history: el("ol", { class: "history", "aria-label": "restart history" }),
      knobs: el("form", { class: "knobs", "aria-label": `${p.name} knobs` }),
      knobsLoaded: false,
      notifications: el("ol", { class: "notifications", reversed: true,
        "aria-label": `${p.name} live notifications` }),
      socketState: el("span", { class: "badge socket", text: "connecting" }),
    };
    c.knobs.addEventListener("submit", (e) => e.preventDefault());
    c.root.append(
      el("header", {}, el("h2", { text: p.name }), c.state, c.health,
        el("div", { class: "actions" }, action("enable"), action("disable"), action("restart"))),
      c.facts, c.history,
      el("h3", {}, "Live notifications ", c.socketState), c.notifications, c.knobs);
    cards.set(p.name, c);
    document.getElementById("plugins").append(c.root);
    listen(p.name, c);
  }
  c.state.textContent = p.state;
  c.state.dataset.state = p.state;
  // ok | degraded | failed, and why (the badge's title and the fact).
  const health = p.health || { status: "ok", summary: "" };
  c.health.textContent = health.status;
  c.health.dataset.health = health.status;
  c.health.title = health.summary;
  c.root.dataset.state = p.state;
  c.facts.replaceChildren(...facts(p).map(([k, v]) =>
    el("div", { "data-fact": k.replace(" ", "_") }, el("dt", { text: k }), el("dd", { text: String(v) }))));
  c.root.querySelector(".refusal")?.remove();
  const refusal = refusalNote(p);
  if (refusal) c.facts.after(refusal);
  return c;
}

// Why the daemon did not start the plugin (its manifest asks more than was
// consented at install), with the command that re-consents; null when
// nothing was refused.
function refusalNote(p) {
  const r = p.refusal;
  if (!r) return null;
  return el("div", { class: "refusal", role: "alert", "data-reason": r.reason },
    el("p", { text: `Not started: ${r.message}` }),
    r.remedy ? el("p", {}, "Re-consent with: ", el("code", { class: "remedy", text: r.remedy })) : null);
}

function alertIn(root, text) {
  const m = el("p", { class: "empty", role: "alert", text });
  root.append(m);
  setTimeout(() => m.remove(), 8000);
}

async function loadHistory(name) {
  const res = await api("GET", `/api/v1/plugins/${encodeURIComponent(name)}/history`);
  const c = cards.get(name);
  if (!c || !res.ok) return;
  c.history.replaceChildren(...res.json.history.map(historyItem));
}

function historyItem(r) {
  const t = (r.ts || "").replace(/^.*T/, "").replace(/Z$/, "");
  const detail = ["pid", "code", "signal", "reason", "total_failures", "last_failure"]
    .filter((k) => r[k] !== undefined && r[k] !== null).map((k) => `${k}=${r[k]}`).join(" ");
  return el("li", { "data-event": r.event, text: `${t} ${r.event.replace("plugin.", "")} ${detail}` });
}

async function refresh() {
  const res = await api("GET", "/api/v1/plugins");
  if (!res.ok) return;
  const loading = document.getElementById("loading");
  if (loading) loading.remove();
  for (const p of res.json) {
    const c = card(p);
    loadHistory(p.name);
    if (!c.knobsLoaded) loadKnobs(p.name);
  }
  // A plugin between states (its handshake's config.update and
  // projects.activated come after `plugin.initialized`, and no audit
  // event marks the end): look again until it settles.
  if (res.json.some((p) => p.state === "spawning")) setTimeout(refreshSoon, 250);
}

// ---- live notifications ----------------------------------------------------

// The plugin's notifications WebSocket; reconnects after a drop. A browser
// cannot set headers on the upgrade: the token rides as a subprotocol next
// to the one the socket speaks, which the daemon selects.
function listen(name, c) {
  const url = new URL(`/api/v1/plugins/${encodeURIComponent(name)}/notifications`, location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  url.hash = "";
  const ws = new WebSocket(url, [NAMES.ws_protocol, NAMES.ws_token_prefix + TOKEN]);
  ws.onopen = () => { c.socketState.textContent = "live"; };
  ws.onclose = () => {
    c.socketState.textContent = "reconnecting";
    setTimeout(() => listen(name, c), 1000);
  };
  ws.onmessage = (e) => {
    const n = JSON.parse(e.data);
    const t = new Date().toISOString().replace(/^.*T/, "").replace(/Z$/, "");
    const text = n.missed !== undefined
      ? `${t} (${n.missed} missed)`
      : `${t} ${n.method} ${JSON.stringify(n.params ?? null)}`;
    c.notifications.prepend(el("li", { "data-method": n.method, text }));
    while (c.notifications.children.length > NOTIFICATIONS_KEEP) c.notifications.lastChild.remove();
  };
}

// ---- knobs -----------------------------------------------------------------

async function loadKnobs(name) {
  const c = cards.get(name);
  c.knobsLoaded = true;
  const res = await api("GET", withAgent(`/api/v1/plugins/${encodeURIComponent(name)}/knobs`));
  if (!res.ok) {
    c.knobsLoaded = false;
    c.knobs.replaceChildren(el("p", { class: "empty", text: `knobs: ${errorText(res)}` }));
    return;
  }
  const knobs = res.json.knobs;
  if (knobs.length === 0) {
    c.knobs.replaceChildren(el("p", { class: "empty", text: "This plugin declares no knobs." }));
    return;
  }
  c.knobs.replaceChildren(...knobs.map((k) => knobRow(name, k)));
}

// Each renderer returns {node, read(), write(v), inputs: [elements]}.
const RENDER = {
  range: (k) => slider(k, false),
  int_range: (k) => slider(k, true),
  enum: (k) => {
    const labels = k.fields.labels || {};
    const s = el("select", { name: k.name },
      ...(k.fields.values || []).map((v) => el("option", { value: v, text: labels[v] || v })));
    return { node: s, read: () => s.value, write: (v) => { s.value = v; }, inputs: [s] };
  },
  boolean: (k) => {
    const b = el("input", { type: "checkbox", name: k.name, role: "switch" });
    return { node: b, read: () => b.checked, write: (v) => { b.checked = !!v; }, inputs: [b], instant: true };
  },
  text: (k) => {
    const t = el("input", { type: "text", name: k.name, spellcheck: "false" });
    return { node: t, read: () => t.value, write: (v) => { t.value = v ?? ""; }, inputs: [t] };
  },
  multiline: (k) => {
    const t = el("textarea", { name: k.name, spellcheck: "false" });
    return { node: t, read: () => t.value, write: (v) => { t.value = v ?? ""; }, inputs: [t] };
  },
  path: (k) => {
    const t = el("input", { type: "text", name: k.name, spellcheck: "false",
      placeholder: (k.fields.prefixes || []).map((p) => `${p}/…`).join(" or ") });
    return { node: t, read: () => t.value, write: (v) => { t.value = v ?? ""; }, inputs: [t] };
  },
  model_alias: (k) => {
    const t = el("input", { type: "text", name: k.name, spellcheck: "false",
      placeholder: "model alias (empty: none)" });
    return { node: t, read: () => (t.value === "" ? null : t.value),
      write: (v) => { t.value = v ?? ""; }, inputs: [t] };
  },
};

function slider(k, integer) {
  const step = k.fields.step ?? (integer ? 1 : "any");
  const r = el("input", { type: "range", min: k.fields.min, max: k.fields.max, step,
    "aria-label": `${k.label || k.name} slider` });
  // The number box takes any value, so that one out of bounds reaches the
  // daemon, which names the bound it breaks.
  const n = el("input", { type: "number", name: k.name, step });
  r.addEventListener("input", () => { n.value = r.value; });
  n.addEventListener("input", () => { r.value = n.value; });
  const read = () => (n.value === "" ? null : (integer ? Number.parseInt(n.value, 10) : Number(n.value)));
  return { node: el("span", { class: "control" }, r, n), read,
    write: (v) => { n.value = v ?? ""; r.value = v ?? ""; }, inputs: [r, n] };
}

function generic(k) {
  // A knob type this page does not know: edit its JSON value.
  const t = el("input", { type: "text", name: k.name, spellcheck: "false" });
  return { node: t, read: () => JSON.parse(t.value), write: (v) => { t.value = JSON.stringify(v); }, inputs: [t] };
}

function hints(k) {
  const f = k.fields, out = [];
  if (f.min !== undefined || f.max !== undefined) out.push(`from ${f.min ?? "−∞"} to ${f.max ?? "∞"}`);
  if (f.step !== undefined) out.push(`step ${f.step}`);
  if (f.max_length !== undefined) out.push(`at most ${f.max_length} characters`);
  if (f.pattern !== undefined) out.push(`matching ${f.pattern}`);
  if (f.prefixes) out.push(`starting with ${f.prefixes.join(" or ")}`);
  if (f.filter) out.push(`${f.filter} models`);
  if (f.must_exist) out.push("must exist");
  return out.join(", ");
}

function knobRow(plugin, k) {
  const id = `knob-${plugin}-${k.name}`;
  const ctl = (RENDER[k.type] || generic)(k);
  ctl.inputs[ctl.inputs.length - 1].id = id;
  ctl.write(k.value);
  const msg = el("p", { class: "msg", role: "status", "aria-live": "polite" });
  const help = [k.description, hints(k)].filter(Boolean).join(" — ");
  const apply = async () => {
    let value;
    try { value = ctl.read(); } catch (e) { return show(false, `not JSON: ${e.message}`); }
    msg.textContent = "saving…";
    msg.className = "msg";
    const res = await api("PUT",
      withAgent(`/api/v1/plugins/${encodeURIComponent(plugin)}/knobs/${encodeURIComponent(k.name)}`),
      { value });
    show(res.ok, res.ok ? `saved: ${JSON.stringify(value)} sent with config.update` : errorText(res));
  };
  const show = (ok, text) => {
    msg.textContent = text;
    msg.className = `msg ${ok ? "ok" : "error"}`;
    for (const i of ctl.inputs) i.setAttribute("aria-invalid", ok ? "false" : "true");
  };
  if (ctl.instant) ctl.inputs[0].addEventListener("change", apply);
  const button = el("button", { type: "button", class: "apply", text: "Apply", onclick: apply });
  for (const i of ctl.inputs) {
    i.addEventListener("keydown", (e) => { if (e.key === "Enter" && i.tagName !== "TEXTAREA") apply(); });
  }
  return el("div", { class: "knob", "data-knob": k.name, "data-type": k.type },
    el("label", { for: id, text: k.label || k.name, title: k.type }),
    ctl.node, button,
    help ? el("p", { class: "help", text: help }) : null, msg);
}

// ---- audit tail ------------------------------------------------------------

function auditLine(r) {
  const t = (r.ts || "").replace(/^.*T/, "").replace(/Z$/, "");
  const data = Object.entries(r).filter(([k]) => !["ts", "event", "plugin", "name"].includes(k))
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join(" ");
  return el("li", { "data-event": r.event, "data-plugin": r.plugin },
    `${t} `, el("span", { class: "ev", text: r.event }), ` ${r.plugin} ${data}`);
}

let pending = null;
function refreshSoon() {
  if (pending) return;
  pending = setTimeout(() => { pending = null; refresh(); }, 50);
}

// The audit stream's server-sent events, read with fetch (EventSource
// cannot send the token); reconnects after a drop. Each event's data is
// one audit record.
async function tail() {
  const list = document.getElementById("audit");
  const state = document.getElementById("audit-state");
  const onRecord = (data) => {
    const r = JSON.parse(data);
    if (!AUDIT_EVENTS.includes(r.event)) return;
    list.prepend(auditLine(r));
    while (list.children.length > AUDIT_KEEP) list.lastChild.remove();
    if (LIFECYCLE.has(r.event)) refreshSoon();
  };
  for (;;) {
    try {
      const r = await fetch("/api/v1/audit/stream", {
        credentials: "omit",
        headers: { ...authorization(), Accept: "text/event-stream" },
      });
      if (r.status === 401) { tokenRefused(); state.textContent = "no token"; return; }
      if (!r.ok || !r.body) throw new Error(`HTTP ${r.status}`);
      state.textContent = "live";
      await readEvents(r.body, onRecord);
    } catch (_) { /* dropped: reconnect below */ }
    state.textContent = "reconnecting";
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

// Read a text/event-stream body, calling onData with each event's data.
async function readEvents(body, onData) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let data = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n")) !== -1) {
      const line = buffer.slice(0, end).replace(/\r$/, "");
      buffer = buffer.slice(end + 1);
      if (line === "") {
        if (data.length) onData(data.join("\n"));
        data = [];
      } else if (line.startsWith("data:")) {
        data.push(line.slice(5).replace(/^ /, ""));
      }
      // `event:`, `id:`, `retry:` and `:` comments: the record says it all.
    }
  }
}

if (AGENT) {
  document.getElementById("agent-line").hidden = false;
  document.getElementById("agent-path").textContent = AGENT;
}
if (TOKEN === null) {
  document.getElementById("needs-token").hidden = false;
  document.getElementById("loading").remove();
  document.getElementById("audit-state").textContent = "no token";
} else {
  tail();
  refresh();
}

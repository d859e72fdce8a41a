#!/usr/bin/node
// node-notes: a kaged plugin in plain JavaScript for Node.js (no npm packages).
//
// One event loop does everything: the reader hands each request to an async
// handler and goes on reading, so a handler can await the host's answer to a
// storage request (which arrives on stdin) without blocking anything.
"use strict";
const readline = require("node:readline");

const NAME = "node-notes", VERSION = "0.1.0", API_VERSION = 1;
const CAPABILITIES = ["kaged:storage:write"]; // what we use, within the manifest's
const DEFAULT_CONFIG = { max_notes: 100, greeting: "Notes saved in earlier sessions:" };

const state = { phase: "fresh", storage: true, config: { ...DEFAULT_CONFIG } };
let tableReady = null; // a promise, made by the first call needing `notes`: settled once it exists
let exiting = false;

class RpcError extends Error {
  // Thrown by a handler: the caller gets the JSON-RPC error {code, message, data?}.
  constructor(code, message, data) {
    super(message);
    Object.assign(this, { code, data });
  }
}

const log = (text) => process.stderr.write(`node-notes: ${text}\n`); // never console.log: it writes stdout
const result = (id, value) => ({ jsonrpc: "2.0", id, result: value ?? null });
const error = (id, code, message, data) => ({ jsonrpc: "2.0", id, error: { code, message, data } });
const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

// guide:begin framing
function send(msg) {
  // One message, one line: JSON.stringify escapes the newlines inside strings.
  // Never console.log: everything on stdout must be protocol.
  process.stdout.write(JSON.stringify(msg) + "\n");
}

// The only reader of stdin. route() never awaits: each request runs as its
// own async call while the reader goes on, so answers to our own requests
// (and pings) are read while a handler waits.
// (readline also ends a line at a lone \r, which JSON encoders never write.)
const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => line.trim() && route(line));
lines.on("close", exit); // end of stdin: the host is gone
process.stdout.on("error", () => process.exit(0)); // EPIPE: the host is gone too
// guide:end framing

// guide:begin storage
const pending = new Map(); // id of our request -> {resolve, reject, timer}
let nextId = 1; // our request ids: integers from 1, increasing

function hostCall(method, params, timeoutMs = 10000) {
  // Send the host a request; the promise settles when deliver() gets its answer.
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(new RpcError(-32603, `${method}: no answer from the host in ${timeoutMs} ms`));
    }, timeoutMs).unref(); // a timer must not keep the process alive
    pending.set(id, { resolve, reject, timer });
    send({ jsonrpc: "2.0", id, method, params });
  });
}

function deliver(answer) {
  // On the reader: hand an answer to the call awaiting it.
  const waiter = pending.get(answer.id);
  if (!waiter) return; // a late answer: its caller gave up
  pending.delete(answer.id);
  clearTimeout(waiter.timer);
  if (!answer.error) return waiter.resolve(answer.result);
  const { code, message } = answer.error; // -32003 denied, -32602 an SQL error...
  waiter.reject(new RpcError(-32000, `storage failed: ${message}`, { code, message }));
}

// exec answers {"rows_affected": n}; query {"columns": [...], "rows": [{column: value}]}
const sqlExec = async (sql, ...args) =>
  (await hostCall("kaged.storage.exec", { sql, params: args })).rows_affected;
const sqlQuery = async (sql, ...args) =>
  (await hostCall("kaged.storage.query", { sql, params: args })).rows;
// guide:end storage

async function createTable() {
  // The host prefixes the name (plugin_node-notes_notes); we never see it.
  if (!state.storage) throw new RpcError(-32003, "storage is not available (storage_available: false)");
  await sqlExec("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, project TEXT NOT NULL," +
    " agent TEXT NOT NULL, text TEXT NOT NULL, tags TEXT NOT NULL)");
}

// Created once, by the first call after `initialized` that needs it; calls
// arriving meanwhile await the same promise.
const notesTable = () => (tableReady ??= createTable());

// JSON Schema's lengths count code points; a JS string's .length counts UTF-16 units.
const chars = (s) => [...s].length;
const typeOf = (v) => (Array.isArray(v) ? "array" : Number.isInteger(v) ? "integer" : typeof v);
const TYPE_NAMES = { string: "a string", integer: "an integer", array: "an array" };

function want(args, field, type, fallback) {
  // args[field] if it is of `type`; the fallback when absent (none: required).
  if (!Object.hasOwn(args, field)) {
    if (fallback !== undefined) return fallback;
    throw new RpcError(-32602, `invalid params: missing required field \`${field}\``);
  }
  if (typeOf(args[field]) !== type) {
    throw new RpcError(-32602, `invalid params: field \`${field}\` must be ${TYPE_NAMES[type]}`);
  }
  return args[field];
}

function projectOf(ctx, args, fields) {
  // Fields beyond the schema's are refused; the agent's project is the key.
  for (const field of Object.keys(args)) {
    if (!fields.includes(field)) throw new RpcError(-32602, `invalid params: unknown field \`${field}\``);
  }
  if (!ctx.project_id) throw new RpcError(-32006, "not applicable: this tool needs an agent's _context");
  return ctx.project_id;
}

const countNotes = async (project) =>
  (await sqlQuery("SELECT COUNT(*) AS n FROM notes WHERE project = ?", project))[0].n;

// guide:begin tool
async function remember(args, ctx) {
  // node-notes.remember {text, tags?}: save a note for the agent's project.
  const project = projectOf(ctx, args, ["text", "tags"]);
  const text = want(args, "text", "string");
  if (chars(text) < 1 || chars(text) > 2000) {
    throw new RpcError(-32602, "invalid params: field `text` must be 1 to 2000 characters");
  }
  const tags = want(args, "tags", "array", []);
  if (tags.length > 8 || !tags.every((t) => typeof t === "string" && chars(t) <= 32)) {
    throw new RpcError(-32602, "invalid params: field `tags` must be <= 8 strings, each <= 32 long");
  }
  await notesTable();
  await sqlExec("INSERT INTO notes (project, agent, text, tags) VALUES (?, ?, ?, ?)",
    project, ctx.agent_path, text, JSON.stringify(tags));
  const pruned = await sqlExec("DELETE FROM notes WHERE project = ? AND id NOT IN (SELECT id" +
    " FROM notes WHERE project = ? ORDER BY id DESC LIMIT ?)", // keep the newest max_notes
    project, project, state.config.max_notes);
  const notes = await countNotes(project);
  send({ jsonrpc: "2.0", method: "notes.added", params: { count: notes } }); // a notification: no id
  return { saved: true, pruned, notes };
}
// guide:end tool

async function recall(args, ctx) {
  // node-notes.recall {query?, limit?}: the project's newest notes holding query.
  const project = projectOf(ctx, args, ["query", "limit"]);
  const query = want(args, "query", "string", "");
  const limit = want(args, "limit", "integer", 10);
  if (limit < 1 || limit > 50) {
    throw new RpcError(-32602, "invalid params: field `limit` must be from 1 to 50");
  }
  await notesTable();
  const rows = await sqlQuery("SELECT id, agent, text, tags FROM notes WHERE project = ?" +
    " AND instr(lower(text), lower(?)) > 0 ORDER BY id DESC LIMIT ?", project, query, limit);
  return { notes: rows.map((row) => ({ ...row, tags: JSON.parse(row.tags) })) };
}

// guide:begin hook
async function onSessionStart(args, ctx) {
  // Answer {"inject": text} for the agent's system prompt, or null for nothing.
  let count;
  try {
    await notesTable();
    count = await countNotes(ctx.project_id);
  } catch (e) { // a failed hook counts as null anyway: say why, answer null
    log(`on_session_start: ${e.message}`);
    return null;
  }
  if (count === 0) return null;
  return { inject: `${state.config.greeting} ${count} note(s) for this project;` +
    " call node-notes.recall to read them." };
}
// guide:end hook

// guide:begin config
function configUpdate(config) {
  // The whole merged config: check it all, then take it all, or refuse it.
  for (const key of Object.keys(config)) {
    if (!Object.hasOwn(DEFAULT_CONFIG, key)) {
      throw new RpcError(-32004, `config_invalid: unknown field \`${key}\``);
    }
  }
  const next = { ...DEFAULT_CONFIG, ...config }; // a field left out takes its default
  if (!Number.isInteger(next.max_notes) || next.max_notes < 1 || next.max_notes > 1000) {
    throw new RpcError(-32004, "config_invalid: `max_notes` must be an integer from 1 to 1000");
  }
  if (typeof next.greeting !== "string" || chars(next.greeting) > 200) {
    throw new RpcError(-32004, "config_invalid: `greeting` must be a string of <= 200 characters");
  }
  state.config = next; // refused above: the old config stays
  return { status: "ok" };
}
// guide:end config

const HANDLERS = new Map([ // method -> handler(args without _context, _context); a Map has no "toString"
  ["ping", () => ({ status: "ok" })],
  ["projects.activated", () => ({ status: "ok" })], // args: {project, config}
  ["projects.deactivated", () => ({ status: "ok" })], // args: {project}
  ["config.update", configUpdate],
  ["node-notes.remember", remember],
  ["node-notes.recall", recall],
  ["kaged.hook.on_session_start", onSessionStart],
]);

// guide:begin handshake
function initialize(params) {
  // Name, version and api_version must match the manifest's, or the host kills us.
  state.storage = params.storage_available !== false;
  state.phase = "answered"; // until `initialized`, only config.update is served
  return { name: NAME, version: VERSION, api_version: API_VERSION,
    methods: ["node-notes.remember", "node-notes.recall"], // tools, as <plugin>.<tool>
    notifications: ["notes.added"], capabilities_used: CAPABILITIES };
}

function initialized() {
  // The handshake is complete: serve calls. notesTable() makes the table on
  // first use (python-notes makes it here instead: the host lets a plugin
  // have its say on `initialized` before the first call).
  state.phase = "ready";
}
// guide:end handshake

function route(line) {
  // On the reader: the handshake here, each call as its own async call().
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return send(error(null, -32700, "Parse error: the line is not JSON"));
  }
  if (!isObject(msg) || msg.jsonrpc !== "2.0" ||
      (Object.hasOwn(msg, "method") && typeof msg.method !== "string")) {
    return send(error(null, -32600, "Invalid request: not one JSON-RPC 2.0 object")); // a batch too
  }
  if (!Object.hasOwn(msg, "method")) return deliver(msg); // an answer to one of our own requests
  const { method } = msg, isRequest = Object.hasOwn(msg, "id"); // a notification has no id
  if (method === "initialize" && isRequest && state.phase === "fresh") {
    return send(result(msg.id, initialize(isObject(msg.params) ? msg.params : {})));
  }
  if (method === "initialized" && state.phase === "answered") return initialized();
  if (method === "shutdown") return shutdown(msg.id, isRequest);
  if (!isRequest) { // any other notification: never answered
    if (method === "system.rate_limited") { // params: {limit_per_sec, dropped}
      log(`the host dropped notifications of ours: ${JSON.stringify(msg.params)}`);
    }
    return;
  }
  const early = state.phase === "answered" && method === "config.update"; // ADDENDUM §12
  if (state.phase !== "ready" && !early) {
    return send(error(msg.id, -32002, `not initialized: \`${method}\` before \`initialized\``));
  }
  call(msg); // not awaited: the reader goes on at once
}

async function call(msg) {
  // Run the handler, answer with the id exactly as it came (a string too).
  let answer;
  try {
    const params = msg.params ?? {};
    if (!isObject(params)) {
      throw new RpcError(msg.method === "config.update" ? -32004 : -32602, "params must be an object");
    }
    const { _context: ctx, ...args } = params; // operator, project, agent, session, request ids
    const handler = HANDLERS.get(msg.method);
    if (!handler) throw new RpcError(-32601, `Method not found: ${msg.method}`);
    answer = result(msg.id, await handler(args, ctx ?? {}));
  } catch (e) {
    if (!(e instanceof RpcError)) log(e.stack); // a bug of ours: log it, answer, serve on
    answer = e instanceof RpcError ? error(msg.id, e.code, e.message, e.data)
      : error(msg.id, -32603, `internal error: ${e.message}`);
  }
  send(answer);
}

// guide:begin shutdown
function shutdown(id, isRequest) {
  // The host sends `shutdown` as a notification; some send a request.
  if (isRequest) send(result(id, { status: "ok" }));
  exit();
}

function exit() {
  // stdout into a pipe is written asynchronously: process.exit() at once
  // would drop the lines still queued. This write's callback runs after them.
  if (exiting) return; // shutdown, then the end of stdin: exit once
  exiting = true;
  process.stdout.write("", () => process.exit(0));
}
// guide:end shutdown

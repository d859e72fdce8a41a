#!/usr/bin/python3
"""py-notes: a kaged plugin in plain Python 3 (standard library only).

One thread reads stdin; calls run on worker threads, so a call can wait for
the host's answer to a storage request while the reader reads on."""
import itertools
import json
import os
import sys
import threading
import traceback

NAME, VERSION, API_VERSION = "py-notes", "0.1.0", 1
CAPABILITIES = ["kaged:storage:write"]  # what we use, within the manifest's
DEFAULT_CONFIG = {"max_notes": 100, "greeting": "Notes saved in earlier sessions:"}

state = {"phase": "fresh", "storage": True, "config": dict(DEFAULT_CONFIG)}
table = {"ready": threading.Event(), "error": None}  # ready once `notes` exists
stopping = threading.Event()  # set by `shutdown` or by the end of stdin


class RpcError(Exception):
    """Raised by a handler: the caller gets the JSON-RPC error {code, message}."""
    def __init__(self, code, message):
        super().__init__(message)
        self.code, self.message = code, message


def log(text):  # stderr only: stdout is the protocol's
    print(f"py-notes: {text}", file=sys.stderr, flush=True)

def result(msg_id, value):
    return {"jsonrpc": "2.0", "id": msg_id, "result": value}

def error(msg_id, code, message):
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


# guide:begin framing
_out = threading.Lock()  # one writer at a time: lines never interleave


def send(msg):
    """Write one message as one line, then flush: unflushed, it never arrives."""
    line = json.dumps(msg) + "\n"  # json.dumps escapes the newlines in strings
    with _out:
        sys.stdout.write(line)
        sys.stdout.flush()


def reader():
    """The only reader of stdin; it never waits on a handler."""
    for line in sys.stdin:  # each line as soon as it is complete
        if line.strip():
            route(line)
    stopping.set()  # end of file: the host is gone
# guide:end framing


# guide:begin storage
_pending = {}  # id of our request -> [Event, answer]
_ids = itertools.count(1)  # our request ids: integers from 1, increasing
_ids_lock = threading.Lock()


def host_call(method, params, timeout=10.0):
    """Send the host a request; wait, on this worker thread, for its answer."""
    slot = [threading.Event(), None]
    with _ids_lock:  # take the id and send under one lock: ids go out in order
        msg_id = next(_ids)
        _pending[msg_id] = slot
        send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    if not slot[0].wait(timeout):
        _pending.pop(msg_id, None)
        raise RpcError(-32603, f"{method}: no answer from the host in {timeout} s")
    if "error" in slot[1]:
        e = slot[1]["error"]
        raise RpcError(-32000, f"{method} failed: {e.get('code')} {e.get('message')}")
    return slot[1]["result"]


def deliver(answer):
    """On the reader thread: hand an answer to the thread waiting for it."""
    slot = _pending.pop(answer.get("id"), None)
    if slot is not None:  # None: a late answer, its caller gave up
        slot[1] = answer
        slot[0].set()


def sql_exec(sql, *args):  # answers {"rows_affected": n}
    return host_call("kaged.storage.exec", {"sql": sql, "params": list(args)})["rows_affected"]

def sql_query(sql, *args):  # answers {"columns": [...], "rows": [{column: value}]}
    return host_call("kaged.storage.query", {"sql": sql, "params": list(args)})["rows"]
# guide:end storage


def create_table():
    """On `initialized`. The host prefixes the name (plugin_py_notes_notes)."""
    try:
        if not state["storage"]:
            raise RpcError(-32003, "storage is not available (storage_available: false)")
        sql_exec("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, project TEXT NOT NULL,"
                 " agent TEXT NOT NULL, text TEXT NOT NULL, tags TEXT NOT NULL)")
    except RpcError as e:
        table["error"] = e
        log(f"no notes table: {e.message}")
    table["ready"].set()


def notes_table():
    """Wait until the table exists: a call may arrive before it does."""
    if not table["ready"].wait(10.0) or table["error"]:
        raise table["error"] or RpcError(-32603, "the notes table is not ready")


def want(args, field, kind, default=None):
    """args[field], if it is a `kind`; else -32602 naming the field."""
    if field not in args:
        if default is None:
            raise RpcError(-32602, f"invalid params: missing required field `{field}`")
        return default
    if not isinstance(args[field], kind) or isinstance(args[field], bool):
        name = {str: "a string", int: "an integer", list: "an array"}[kind]
        raise RpcError(-32602, f"invalid params: field `{field}` must be {name}")
    return args[field]


def project_of(ctx, args, fields):
    """Fields beyond the schema's are refused; the agent's project is the key."""
    for field in args:
        if field not in fields:
            raise RpcError(-32602, f"invalid params: unknown field `{field}`")
    if not ctx.get("project_id"):
        raise RpcError(-32006, "not applicable: this tool needs an agent's _context")
    return ctx["project_id"]


# guide:begin tool
def remember(args, ctx):
    """py-notes.remember {text, tags?}: save a note for the agent's project."""
    project = project_of(ctx, args, ("text", "tags"))
    text = want(args, "text", str)
    if not 1 <= len(text) <= 2000:
        raise RpcError(-32602, "invalid params: field `text` must be 1 to 2000 characters")
    tags = want(args, "tags", list, default=[])
    if len(tags) > 8 or not all(isinstance(t, str) and len(t) <= 32 for t in tags):
        raise RpcError(-32602, "invalid params: field `tags` must be <= 8 strings, each <= 32 long")
    notes_table()
    sql_exec("INSERT INTO notes (project, agent, text, tags) VALUES (?, ?, ?, ?)",
             project, ctx["agent_path"], text, json.dumps(tags))
    pruned = sql_exec("DELETE FROM notes WHERE project = ? AND id NOT IN (SELECT id FROM notes"
                      " WHERE project = ? ORDER BY id DESC LIMIT ?)",  # keep the newest max_notes
                      project, project, state["config"]["max_notes"])
    count = sql_query("SELECT COUNT(*) AS n FROM notes WHERE project = ?", project)[0]["n"]
    send({"jsonrpc": "2.0", "method": "notes.added", "params": {"count": count}})  # a notification
    return {"saved": True, "pruned": pruned, "notes": count}
# guide:end tool


def recall(args, ctx):
    """py-notes.recall {query?, limit?}: the project's newest notes holding query."""
    project = project_of(ctx, args, ("query", "limit"))
    query = want(args, "query", str, default="")
    limit = want(args, "limit", int, default=10)
    if not 1 <= limit <= 50:
        raise RpcError(-32602, "invalid params: field `limit` must be from 1 to 50")
    notes_table()
    rows = sql_query("SELECT id, agent, text, tags FROM notes WHERE project = ?"
                     " AND instr(lower(text), lower(?)) > 0 ORDER BY id DESC LIMIT ?",
                     project, query, limit)
    return {"notes": [dict(row, tags=json.loads(row["tags"])) for row in rows]}


# guide:begin hook
def on_session_start(args, ctx):
    """Answer {"inject": text} for the agent's system prompt, or null for nothing."""
    try:
        notes_table()
        count = sql_query("SELECT COUNT(*) AS n FROM notes WHERE project = ?",
                          ctx.get("project_id"))[0]["n"]
    except RpcError as e:  # a failed hook counts as null anyway: say why, answer null
        log(f"on_session_start: {e.message}")
        return None
    if count == 0:
        return None
    return {"inject": f"{state['config']['greeting']} {count} note(s) for this project;"
                      " call py-notes.recall to read them."}
# guide:end hook


# guide:begin config
def config_update(config, ctx):
    """The whole merged config: check it all, then take it all, or refuse it."""
    for key in config:
        if key not in DEFAULT_CONFIG:
            raise RpcError(-32004, f"config_invalid: unknown field `{key}`")
    new = dict(DEFAULT_CONFIG, **config)  # a field left out takes its default
    n = new["max_notes"]
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 1000:
        raise RpcError(-32004, "config_invalid: `max_notes` must be an integer from 1 to 1000")
    if not isinstance(new["greeting"], str) or len(new["greeting"]) > 200:
        raise RpcError(-32004, "config_invalid: `greeting` must be a string of <= 200 characters")
    state["config"] = new  # one assignment: a call sees the old config or the new
    return {"status": "ok"}
# guide:end config


HANDLERS = {  # method -> handler(args without _context, _context)
    "ping": lambda args, ctx: {"status": "ok"},
    "projects.activated": lambda args, ctx: {"status": "ok"},  # args: {project, config}
    "projects.deactivated": lambda args, ctx: {"status": "ok"},  # args: {project}
    "config.update": config_update,
    "py-notes.remember": remember,
    "py-notes.recall": recall,
    "kaged.hook.on_session_start": on_session_start,
}


# guide:begin handshake
def initialize(params):
    """Name, version and api_version must match the manifest's, or the host kills us."""
    state["storage"] = params.get("storage_available") is not False
    state["phase"] = "answered"  # until `initialized`, only config.update is served
    return {"name": NAME, "version": VERSION, "api_version": API_VERSION,
            "methods": ["py-notes.remember", "py-notes.recall"],  # tools: <plugin>.<tool>
            "notifications": ["notes.added"], "capabilities_used": CAPABILITIES}
# guide:end handshake


def route(line):
    """On the reader thread: the handshake here, each call on a worker thread."""
    try:
        msg = json.loads(line)
    except ValueError:
        return send(error(None, -32700, "Parse error: the line is not JSON"))
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":  # a batch (a list) too
        return send(error(None, -32600, "Invalid request: not one JSON-RPC 2.0 object"))
    if "method" not in msg:
        return deliver(msg)  # an answer to one of our own requests
    method, msg_id, is_request = msg["method"], msg.get("id"), "id" in msg
    if method == "initialize" and is_request and state["phase"] == "fresh":
        return send(result(msg_id, initialize(msg.get("params") or {})))
    if method == "initialized" and state["phase"] == "answered":  # the handshake is complete
        state["phase"] = "ready"
        return threading.Thread(target=create_table, daemon=True).start()
    if method == "shutdown":
        return shutdown(msg_id, is_request)
    if not is_request:  # any other notification: never answered
        if method == "system.rate_limited":  # {limit_per_sec, dropped}
            log(f"the host dropped notifications of ours: {msg.get('params')}")
        return None
    early = state["phase"] == "answered" and method == "config.update"  # ADDENDUM §12
    if state["phase"] != "ready" and not early:
        return send(error(msg_id, -32002, f"not initialized: `{method}` before `initialized`"))
    threading.Thread(target=call, args=(msg,), daemon=True).start()


def call(msg):
    """On a worker thread: run the handler, answer with the id as it came."""
    try:
        args = msg.get("params", {})
        if not isinstance(args, dict):
            raise RpcError(-32602, "invalid params: params must be an object")
        ctx = args.pop("_context", None) or {}  # operator, project, agent, session
        handler = HANDLERS.get(msg["method"])
        if handler is None:
            raise RpcError(-32601, f"Method not found: {msg['method']}")
        answer = result(msg["id"], handler(args, ctx))
    except RpcError as e:
        answer = error(msg["id"], e.code, e.message)
    except Exception as e:  # a bug of ours: log it, answer, serve on
        log(traceback.format_exc())
        answer = error(msg["id"], -32603, f"internal error: {e}")
    send(answer)


# guide:begin shutdown
def shutdown(msg_id, is_request):
    """The host sends `shutdown` as a notification; some send a request."""
    if is_request:
        send(result(msg_id, {"status": "ok"}))
    stopping.set()


def main():
    sys.stdin.reconfigure(encoding="utf-8", errors="replace")
    threading.Thread(target=reader, daemon=True).start()
    stopping.wait()  # set by shutdown() or by the end of stdin
    with _out:  # let a line being written finish; start no other
        sys.stdout.flush()
        os._exit(0)  # exit 0 at once, worker threads and all
# guide:end shutdown


if __name__ == "__main__":
    main()

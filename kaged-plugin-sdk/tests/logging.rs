//! The SDK's logging in a real plugin process (`plugin-host.md` § Stdio:
//! stderr is for logs, stdout carries JSON-RPC only; § Spawn environment:
//! `KAGED_LOG_LEVEL`): `kaged_plugin_sdk::log` events leave as JSON lines on
//! stderr, never on stdout, filtered at the level `KAGED_LOG_LEVEL` names
//! (default `info`); a stray `println!` lands on stderr too.
//!
//! This test binary is its own plugin: started with `KAGED_SDK_LOG_PROBE`
//! set, it serves with `Plugin::run` (which sets up logging and stdio as
//! every SDK plugin does) instead of testing. It has no libtest harness
//! (`harness = false`), so that nothing but the plugin writes to the
//! child's stdout.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use kaged_plugin_sdk::logging::LOG_LEVEL_VAR;
use kaged_plugin_sdk::{log, Call, Plugin, PluginError};
use serde_json::{json, Value};

/// Set in the child: serve instead of testing.
const PROBE_VAR: &str = "KAGED_SDK_LOG_PROBE";

/// The probe's log lines: (level as tracing prints it, message).
const LOGGED: [(&str, &str); 5] = [
    ("TRACE", "probe trace"),
    ("DEBUG", "probe debug"),
    ("INFO", "probe info"),
    ("WARN", "probe warn"),
    ("ERROR", "probe error"),
];

const STRAY: &str = "stray println from a handler";

fn probe_plugin() -> Plugin {
    Plugin::builder("log-probe")
        .version("0.1.0")
        .method("probe.log", |_p: Value, _c: Call| async move {
            log::trace!("probe trace");
            log::debug!(step = 1, "probe debug");
            log::info!(notes = 3, "probe info");
            log::warn!("probe warn");
            log::error!(code = "E1", "probe error");
            println!("{STRAY}");
            Ok::<_, PluginError>("logged")
        })
        .build()
        .expect("valid plugin")
}

/// What one run of the probe wrote.
struct Output {
    stdout: Vec<String>,
    stderr: Vec<String>,
}

impl Output {
    /// The probe's own log events on stderr, parsed, in order.
    fn probe_events(&self) -> Vec<Value> {
        self.stderr
            .iter()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| {
                v["fields"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("probe "))
            })
            .collect()
    }

    fn probe_levels(&self) -> Vec<String> {
        self.probe_events()
            .iter()
            .map(|e| e["level"].as_str().unwrap_or("?").to_string())
            .collect()
    }
}

fn send(stdin: &mut ChildStdin, msg: Value) {
    let mut line = serde_json::to_vec(&msg).expect("json");
    line.push(b'\n');
    stdin.write_all(&line).expect("write to the plugin");
    stdin.flush().expect("flush");
}

fn recv(stdout: &mut BufReader<ChildStdout>, seen: &mut Vec<String>) -> Value {
    let mut line = String::new();
    let n = stdout
        .read_line(&mut line)
        .expect("read the plugin's stdout");
    assert!(n > 0, "the plugin closed its stdout early");
    let line = line.trim_end_matches('\n').to_string();
    seen.push(line.clone());
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"))
}

/// Run the probe with `KAGED_LOG_LEVEL` set to `level` (or unset): the
/// handshake, one `probe.log` call, then `shutdown` and end of input.
fn run_probe(level: Option<&str>) -> Output {
    let mut cmd = Command::new(std::env::current_exe().expect("own path"));
    cmd.env(PROBE_VAR, "1")
        .env_remove(LOG_LEVEL_VAR)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(level) = level {
        cmd.env(LOG_LEVEL_VAR, level);
    }
    let mut child: Child = cmd.spawn().expect("start the probe");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut stderr = child.stderr.take().expect("stderr");
    let stderr_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut seen = Vec::new();
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "daemon_version": "0.1.0", "api_version": 1, "plugin_name": "log-probe",
            "storage_available": false, "projects": []}}),
    );
    let init = recv(&mut stdout, &mut seen);
    assert_eq!(init["result"]["name"], "log-probe", "{init}");
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
    );
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "probe.log", "params": {}}),
    );
    let answer = recv(&mut stdout, &mut seen);
    assert_eq!(answer["result"], "logged", "{answer}");
    send(&mut stdin, json!({"jsonrpc": "2.0", "method": "shutdown"}));
    drop(stdin);
    let mut rest = String::new();
    stdout
        .read_to_string(&mut rest)
        .expect("read the rest of stdout");
    seen.extend(rest.lines().map(str::to_string));
    let status = child.wait().expect("wait for the probe");
    assert!(status.success(), "the probe exited with {status}");
    let stderr = stderr_reader.join().expect("stderr reader");
    Output {
        stdout: seen,
        stderr: stderr.lines().map(str::to_string).collect(),
    }
}

fn stdout_is_json_rpc_only() {
    let out = run_probe(Some("trace"));
    assert_eq!(out.stdout.len(), 2, "two answers: {:?}", out.stdout);
    for line in &out.stdout {
        let v: Value = serde_json::from_str(line).expect("JSON");
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
        assert!(!line.contains("probe ") && !line.contains(STRAY), "{line}");
    }
    assert!(
        out.stderr.iter().any(|l| l == STRAY),
        "a stray println! lands on stderr: {:?}",
        out.stderr
    );
}

fn events_are_json_lines_with_level_message_and_fields() {
    let out = run_probe(Some("debug"));
    let events = out.probe_events();
    let by_message = |m: &str| {
        events
            .iter()
            .find(|e| e["fields"]["message"] == m)
            .unwrap_or_else(|| panic!("no `{m}` event in {:?}", out.stderr))
            .clone()
    };
    for (level, message) in &LOGGED[1..] {
        let e = by_message(message);
        assert_eq!(e["level"], *level, "{e}");
        assert!(e["timestamp"].is_string(), "a timestamp: {e}");
        assert!(e["target"].is_string(), "a target: {e}");
    }
    assert_eq!(by_message("probe debug")["fields"]["step"], 1);
    assert_eq!(by_message("probe info")["fields"]["notes"], 3);
    assert_eq!(by_message("probe error")["fields"]["code"], "E1");
    // Every stderr line but the stray print is a JSON object.
    for line in out.stderr.iter().filter(|l| *l != STRAY) {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("stderr line is not JSON ({e}): {line}"));
        assert!(v.is_object(), "{line}");
    }
}

fn kaged_log_level_filters() {
    let expect = |level: Option<&str>, from: usize| {
        let out = run_probe(level);
        let wanted: Vec<&str> = LOGGED[from..].iter().map(|(l, _)| *l).collect();
        assert_eq!(out.probe_levels(), wanted, "KAGED_LOG_LEVEL={level:?}");
    };
    expect(Some("trace"), 0);
    expect(Some("debug"), 1);
    expect(None, 2); // default: info
    expect(Some("warn"), 3);
    expect(Some("ERROR"), 4); // the daemon's value, case-insensitive
}

fn main() {
    if std::env::var_os(PROBE_VAR).is_some() {
        probe_plugin().run();
    }
    let tests: [(&str, fn()); 3] = [
        ("stdout_is_json_rpc_only", stdout_is_json_rpc_only),
        (
            "events_are_json_lines_with_level_message_and_fields",
            events_are_json_lines_with_level_message_and_fields,
        ),
        ("kaged_log_level_filters", kaged_log_level_filters),
    ];
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        // None of them is ignored: `--list --ignored` (which nextest asks
        // too) lists nothing, or nextest would take all three as ignored
        // and never run them.
        if !args.iter().any(|a| a == "--ignored") {
            for (name, _) in &tests {
                println!("{name}: test");
            }
        }
        return;
    }
    // Name filters as libtest takes them (`cargo test -p .. kaged_log`).
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let mut ran = 0;
    for (name, test) in tests {
        if filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())) {
            println!("test {name} ...");
            test();
            println!("test {name} ... ok");
            ran += 1;
        }
    }
    println!("test result: ok. {ran} passed");
}

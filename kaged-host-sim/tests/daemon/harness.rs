//! Run `kaged-host-sim up` as a child process: its stdout lines, its API.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Instant;

use serde_json::Value;

use crate::support::host::{fixture, LIMIT};

/// The interval between two polls of a condition (a poll, not a wait for
/// an event: every wait is bounded by [`LIMIT`]).
const POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// A plugins directory holding links to the named fixture plugins (and
/// their shared `_lib`).
pub fn plugins(names: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for name in names.iter().chain(&["_lib"]) {
        std::os::unix::fs::symlink(fixture(name), dir.path().join(name)).expect("symlink");
    }
    dir
}

/// A running `up`, killed (SIGKILL) if still running when dropped.
pub struct Up {
    child: Child,
    lines: Receiver<String>,
    /// Every stdout line read so far.
    pub seen: Vec<String>,
    err_lines: Receiver<String>,
    /// Every stderr line (the operational log) read so far.
    pub err_seen: Vec<String>,
    /// The API's `IP:PORT`.
    pub addr: String,
    /// Whether the plugins run caged (`--cage require`).
    pub caged: bool,
    /// The `--audit` file.
    pub audit: PathBuf,
    /// The `--token-file`.
    pub token_file: PathBuf,
    /// The API token (from the settings URL `up` printed).
    pub token: String,
    /// The settings URL `up` printed, `#token=` included.
    pub settings_url: String,
    _tmp: tempfile::TempDir,
}

impl Up {
    /// `--cage require --time-scale 0.2 up --plugins DIR --listen
    /// 127.0.0.1:0`: caged as the daemon runs them, where bwrap cages
    /// (always under `CI=true`, which fails without it); uncaged, saying
    /// so, elsewhere.
    pub fn start(dir: &Path) -> Up {
        Up::start_with(dir, &[])
    }

    /// [`Up::start`] with more `up` options (`--project FILE`).
    pub fn start_with(dir: &Path, extra: &[&std::ffi::OsStr]) -> Up {
        let mut args: Vec<&std::ffi::OsStr> = vec!["--plugins".as_ref(), dir.as_os_str()];
        args.extend_from_slice(extra);
        Up::start_args(&args)
    }

    /// `up --listen 127.0.0.1:0 --token-file FILE` with `args` (the plugin
    /// source and more).
    pub fn start_args(args: &[&std::ffi::OsStr]) -> Up {
        Up::start_under(None, "0.2", &[], &[], args)
    }

    /// [`Up::start_args`] with more environment for `up` (a `PATH` with a
    /// stand-in first).
    pub fn start_with_env(env: &[(&str, &std::ffi::OsStr)], args: &[&std::ffi::OsStr]) -> Up {
        Up::start_under(None, "0.2", env, &[], args)
    }

    /// [`Up::start_args`] with `global` options before `up`
    /// (`--storage-db FILE`; a `--cage MODE` here replaces the harness's).
    pub fn start_global(global: &[&std::ffi::OsStr], args: &[&std::ffi::OsStr]) -> Up {
        Up::start_under(None, "0.2", &[], global, args)
    }

    /// [`Up::start_args`] with `up`'s `RLIMIT_NOFILE` (soft and hard) set
    /// to `nofile` from its start (util-linux `prlimit`).
    pub fn start_with_nofile(nofile: u64, args: &[&std::ffi::OsStr]) -> Up {
        Up::start_under(Some(nofile), "0.2", &[], &[], args)
    }

    /// [`Up::start_args`] at `--time-scale scale`.
    pub fn start_scaled(scale: &str, args: &[&std::ffi::OsStr]) -> Up {
        Up::start_under(None, scale, &[], &[], args)
    }

    fn start_under(
        nofile: Option<u64>,
        scale: &str,
        env: &[(&str, &std::ffi::OsStr)],
        global: &[&std::ffi::OsStr],
        args: &[&std::ffi::OsStr],
    ) -> Up {
        // A `--cage` among `global` is the test's own; else caged where bwrap works.
        let own_cage = global.iter().position(|a| *a == "--cage");
        let cage = match own_cage {
            Some(i) => global
                .get(i + 1)
                .and_then(|m| m.to_str())
                .expect("--cage MODE"),
            None if kaged_host_core::testing::cage_available_for_blocking("daemon tests") => {
                "require"
            }
            None => "off",
        };
        let cage_args: &[&str] = match own_cage {
            Some(_) => &[],
            None => &["--cage", cage],
        };
        let tmp = tempfile::tempdir().expect("tempdir");
        let audit = tmp.path().join("audit.jsonl");
        let token_file = tmp.path().join("token");
        let bin = env!("CARGO_BIN_EXE_kaged-host-sim");
        let mut command = match nofile {
            None => Command::new(bin),
            Some(n) => {
                let mut c = Command::new("prlimit");
                c.arg(format!("--nofile={n}:{n}")).arg("--").arg(bin);
                c
            }
        };
        let mut child = command
            .args(cage_args)
            .args(["--time-scale", scale, "--audit"])
            .arg(&audit)
            .args(global)
            .args(["up", "--listen", "127.0.0.1:0", "--token-file"])
            .arg(&token_file)
            .args(args)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn up (with --nofile: util-linux prlimit on PATH)");
        let lines = line_channel(child.stdout.take().expect("stdout"));
        let err_lines = line_channel(child.stderr.take().expect("stderr"));
        let mut up = Up {
            child,
            lines,
            seen: Vec::new(),
            err_lines,
            err_seen: Vec::new(),
            addr: String::new(),
            caged: cage == "require",
            audit,
            token_file,
            token: String::new(),
            settings_url: String::new(),
            _tmp: tmp,
        };
        let listening = up.wait_line(|l| l.starts_with("listening: "));
        up.addr = listening
            .trim_start_matches("listening: http://")
            .trim_end_matches("/api/v1/plugins")
            .to_string();
        let settings = up.wait_line(|l| l.starts_with("settings: "));
        up.settings_url = settings.trim_start_matches("settings: ").to_string();
        up.token = up
            .settings_url
            .split_once("#token=")
            .map(|(_, t)| t.to_string())
            .unwrap_or_else(|| panic!("no #token= in {settings:?}"));
        up
    }

    /// `up`'s process id (under `prlimit`, which execs it: the same).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `Authorization: Bearer TOKEN`.
    pub fn bearer(&self) -> (&'static str, String) {
        ("Authorization", format!("Bearer {}", self.token))
    }

    /// One request with the token (a JSON body when `body` is given): the
    /// status and the body's text.
    pub fn request(&self, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
        let bearer = self.bearer();
        let mut headers = vec![(bearer.0, bearer.1.as_str())];
        if body.is_some() {
            headers.push(("Content-Type", "application/json"));
        }
        let reply = raw(&self.addr, method, path, Some(&self.addr), &headers, body);
        (reply.status, reply.body)
    }

    /// `GET /api/v1/audit/stream` with the token; read its lines with the
    /// reader.
    pub fn open_stream(&self) -> BufReader<TcpStream> {
        let mut s = TcpStream::connect(&self.addr).expect("connect");
        s.set_read_timeout(Some(LIMIT)).expect("timeout");
        write!(
            s,
            "GET /api/v1/audit/stream HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\
             Accept: text/event-stream\r\n\r\n",
            self.addr, self.token
        )
        .expect("write");
        BufReader::new(s)
    }

    /// Wait (bounded by [`LIMIT`]) for a stdout line matching `pred`.
    pub fn wait_line(&mut self, pred: impl Fn(&str) -> bool) -> String {
        wait_for_line(&self.lines, &mut self.seen, pred, "stdout")
    }

    /// Wait (bounded by [`LIMIT`]) for a stderr line (the operational log)
    /// matching `pred`.
    pub fn wait_err_line(&mut self, pred: impl Fn(&str) -> bool) -> String {
        wait_for_line(&self.err_lines, &mut self.err_seen, pred, "stderr")
    }

    /// One HTTP request; the status and the JSON body.
    pub fn http(&self, method: &str, path: &str, body: Option<&str>) -> (u16, Value) {
        let (status, text) = self.request(method, path, body);
        let json = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{method} {path}: not JSON ({e}): {text:?}"));
        (status, json)
    }

    /// `GET /api/v1/plugins`, the row of `name`.
    pub fn plugin(&self, name: &str) -> Value {
        let (status, list) = self.http("GET", "/api/v1/plugins", None);
        assert_eq!(status, 200);
        list.as_array()
            .and_then(|a| a.iter().find(|p| p["name"] == name).cloned())
            .unwrap_or_else(|| panic!("no {name} in {list}"))
    }

    /// Poll the row of `name` (bounded by [`LIMIT`]) until `pred` holds.
    pub fn wait_plugin(&self, name: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + LIMIT;
        loop {
            let row = self.plugin(name);
            if pred(&row) {
                return row;
            }
            assert!(Instant::now() < deadline, "{name} never matched: {row}");
            std::thread::sleep(POLL);
        }
    }

    /// The audit file's records.
    pub fn audit(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.audit)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    }

    /// Send `signal` to `up`, wait for its exit (bounded by [`LIMIT`]) and
    /// return its exit code.
    pub fn signal_and_wait(&mut self, signal: rustix::process::Signal) -> Option<i32> {
        let pid = rustix::process::Pid::from_raw(self.child.id() as i32).expect("a pid");
        rustix::process::kill_process(pid, signal).expect("signal up");
        let deadline = Instant::now() + LIMIT;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                // Collect the last lines.
                while let Ok(line) = self.lines.recv_timeout(LIMIT) {
                    self.seen.push(line);
                }
                return status.code();
            }
            assert!(Instant::now() < deadline, "up did not exit");
            std::thread::sleep(POLL);
        }
    }
}

/// The lines of `stream`, read on their own thread until it closes.
fn line_channel(stream: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, lines) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

/// The first line of `seen`, then of `lines`, matching `pred` (bounded by
/// [`LIMIT`]); every line read is kept in `seen`.
fn wait_for_line(
    lines: &Receiver<String>,
    seen: &mut Vec<String>,
    pred: impl Fn(&str) -> bool,
    what: &str,
) -> String {
    if let Some(l) = seen.iter().find(|l| pred(l)) {
        return l.clone();
    }
    let deadline = Instant::now() + LIMIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => {
                seen.push(line.clone());
                if pred(&line) {
                    return line;
                }
            }
            Err(_) => panic!("no such {what} line; saw:\n{}", seen.join("\n")),
        }
    }
}

impl Drop for Up {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Poll `cond` until it holds (`true`) or [`LIMIT`] has passed (`false`).
pub fn eventually(cond: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + LIMIT;
    while !cond() {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(POLL);
    }
    true
}

/// An HTTP answer: its status, head (status line and headers) and body.
#[derive(Debug)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The status line and the headers.
    pub head: String,
    /// The body.
    pub body: String,
}

impl Reply {
    /// The value of header `name` (case-insensitive), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    /// The body as JSON (panics, naming it, when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }
}

/// A raw HTTP/1.1 request with `Connection: close`: `Host: host` when
/// given, then `headers`, a `Content-Length` when there is a body. No
/// other header is added (no token, no `Content-Type`).
pub fn raw(
    addr: &str,
    method: &str,
    path: &str,
    host: Option<&str>,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Reply {
    let mut text = format!("{method} {path} HTTP/1.1\r\n");
    if let Some(h) = host {
        text.push_str(&format!("Host: {h}\r\n"));
    }
    for (k, v) in headers {
        text.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(b) = body {
        text.push_str(&format!("Content-Length: {}\r\n", b.len()));
    }
    text.push_str("Connection: close\r\n\r\n");
    text.push_str(body.unwrap_or(""));
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(LIMIT)).expect("timeout");
    s.write_all(text.as_bytes()).expect("write");
    let mut answer = String::new();
    s.read_to_string(&mut answer).expect("read");
    let (head, body) = answer
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("not a response: {answer:?}"));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("a status");
    Reply {
        status,
        head: head.to_string(),
        body: body.to_string(),
    }
}

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
    /// The API's `IP:PORT`.
    pub addr: String,
    /// Whether the plugins run caged (`--cage require`).
    pub caged: bool,
    /// The `--audit` file.
    pub audit: PathBuf,
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

    /// `up --listen 127.0.0.1:0` with `args` (the plugin source and more).
    pub fn start_args(args: &[&std::ffi::OsStr]) -> Up {
        let cage = match kaged_host_sim::testing::cage_available_for_blocking("daemon tests") {
            true => "require",
            false => "off",
        };
        let tmp = tempfile::tempdir().expect("tempdir");
        let audit = tmp.path().join("audit.jsonl");
        let mut child = Command::new(env!("CARGO_BIN_EXE_kaged-host-sim"))
            .args(["--cage", cage, "--time-scale", "0.2", "--audit"])
            .arg(&audit)
            .args(["up", "--listen", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn up");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut up = Up {
            child,
            lines,
            seen: Vec::new(),
            addr: String::new(),
            caged: cage == "require",
            audit,
            _tmp: tmp,
        };
        let listening = up.wait_line(|l| l.starts_with("listening: "));
        up.addr = listening
            .trim_start_matches("listening: http://")
            .trim_end_matches("/api/v1/plugins")
            .to_string();
        up
    }

    /// Wait (bounded by [`LIMIT`]) for a stdout line matching `pred`.
    pub fn wait_line(&mut self, pred: impl Fn(&str) -> bool) -> String {
        if let Some(l) = self.seen.iter().find(|l| pred(l)) {
            return l.clone();
        }
        let deadline = Instant::now() + LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if pred(&line) {
                        return line;
                    }
                }
                Err(_) => panic!("no such line; saw:\n{}", self.seen.join("\n")),
            }
        }
    }

    /// One HTTP request; the status and the JSON body.
    pub fn http(&self, method: &str, path: &str, body: Option<&str>) -> (u16, Value) {
        let (status, text) = request(&self.addr, method, path, body);
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

impl Drop for Up {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A raw HTTP/1.1 request with `Connection: close`: status and body.
pub fn request(addr: &str, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    let body = body.unwrap_or("");
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("write");
    let mut text = String::new();
    s.read_to_string(&mut text).expect("read");
    let (head, body) = text.split_once("\r\n\r\n").expect("a response");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("a status");
    (status, body.to_string())
}

/// Open `GET /api/v1/audit/stream`; read its lines with the reader.
pub fn open_stream(addr: &str) -> BufReader<TcpStream> {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(LIMIT)).expect("timeout");
    write!(
        s,
        "GET /api/v1/audit/stream HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n"
    )
    .expect("write");
    BufReader::new(s)
}

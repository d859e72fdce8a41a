//! Clients without the token cannot exhaust `up`: a flood of silent
//! loopback connections against a daemon held to 256 descriptors, the
//! header-read and idle timeouts, and a plugin start that fails for want
//! of the daemon's own descriptors (retried, never marked failed).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::{eventually, plugins, Up};
use crate::support::host::LIMIT;

/// `up`'s `RLIMIT_NOFILE` in the flood test.
const NOFILE: u64 = 256;
/// Connections the flood holds at once: eight times `up`'s limit.
const FLOOD_HELD: usize = 2048;

/// Descriptors `up` holds.
fn open_fds(up: &Up) -> usize {
    std::fs::read_dir(format!("/proc/{}/fd", up.pid()))
        .expect("up's fd directory")
        .count()
}

/// Raise this process's soft descriptor limit to its hard one (the flood
/// holds thousands of sockets); the number it may hold for the flood.
fn room_for_the_flood() -> usize {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let limit = getrlimit(Resource::Nofile);
    let raised = Rlimit {
        current: limit.maximum,
        maximum: limit.maximum,
    };
    let soft = match setrlimit(Resource::Nofile, raised) {
        Ok(()) => limit.maximum,
        Err(_) => limit.current,
    };
    let soft = soft.map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
    FLOOD_HELD.min(soft.saturating_sub(256))
}

/// A flood of silent connections on its own thread: it opens `held`
/// connections to `addr` one after another, half of them sending the
/// start of a request head and nothing more, and holds every one until
/// stopped.
struct Flood {
    opened: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<usize>>,
}

impl Flood {
    fn start(addr: SocketAddr, held: usize) -> Flood {
        let opened = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (o, s) = (Arc::clone(&opened), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            let mut sockets = Vec::with_capacity(held);
            let mut failed = 0;
            // Bounded even if the test never stops it.
            let deadline = Instant::now() + 6 * LIMIT;
            while !s.load(Ordering::SeqCst) && Instant::now() < deadline {
                if sockets.len() + failed >= held {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                }
                match TcpStream::connect_timeout(&addr, LIMIT) {
                    Ok(mut socket) => {
                        if o.load(Ordering::SeqCst) % 2 == 1 {
                            let _ = socket.write_all(b"GET /api/v1/plugins HTTP/1.1\r\nHost: ");
                        }
                        sockets.push(socket);
                        o.fetch_add(1, Ordering::SeqCst);
                    }
                    Err(_) => failed += 1,
                }
            }
            // Every socket of the flood is closed here.
            drop(sockets);
            failed
        });
        Flood {
            opened,
            stop,
            thread: Some(thread),
        }
    }

    fn opened(&self) -> usize {
        self.opened.load(Ordering::SeqCst)
    }

    /// Stop and close every connection; the connects that failed.
    fn stop(mut self) -> usize {
        self.stop.store(true, Ordering::SeqCst);
        self.thread
            .take()
            .map(|t| t.join().expect("the flood thread"))
            .unwrap_or(0)
    }
}

impl Drop for Flood {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Poll `cond` (bounded by [`LIMIT`]).
fn wait_until(what: &str, cond: impl Fn() -> bool) {
    assert!(eventually(cond), "{what}: never");
}

/// The audit records of `name` with event `event`.
fn records(up: &Up, name: &str, event: &str) -> Vec<Value> {
    up.audit()
        .into_iter()
        .filter(|r| r["plugin"] == name && r["event"] == event)
        .collect()
}

#[test]
fn the_operator_is_answered_and_a_plugin_restarts_during_a_connection_flood() {
    let held = room_for_the_flood();
    assert!(
        held > 2 * NOFILE as usize,
        "this process may hold {held} sockets: too few to flood a daemon limited to {NOFILE}"
    );
    let dir = plugins(&["good"]);
    let up = Up::start_with_nofile(NOFILE, &["--plugins".as_ref(), dir.path().as_os_str()]);
    let first = up.wait_plugin("good", |p| p["state"] == "running");
    let addr: SocketAddr = up.addr.parse().expect("the API's address");

    let flood = Flood::start(addr, held);
    // Past the daemon's descriptor limit.
    wait_until("the flood passing up's descriptor limit", || {
        flood.opened() > NOFILE as usize + 64
    });
    let mut latencies = Vec::new();
    let mut operator = |method: &str, path: &str| -> (u16, String) {
        let t = Instant::now();
        let answer = up.request(method, path, None);
        latencies.push(t.elapsed());
        answer
    };
    for _ in 0..5 {
        let (status, body) = operator("GET", "/api/v1/plugins");
        assert_eq!(status, 200, "{body}");
        assert!(open_fds(&up) < NOFILE as usize);
    }
    // A restart during the flood: the new process starts (no `Too many
    // open files`, no plugin disabled).
    let (status, body) = operator("POST", "/api/v1/plugins/good/restart");
    assert_eq!(status, 200, "{body}");
    let restarted = up.wait_plugin("good", |p| {
        p["state"] == "running" && p["pid"] != first["pid"] && p["pid"] != Value::Null
    });
    for _ in 0..5 {
        let (status, body) = operator("GET", "/api/v1/plugins/good/history");
        assert_eq!(status, 200, "{body}");
    }
    // Every connection of the flood open and held.
    wait_until("the whole flood open", || flood.opened() == held);
    let (status, body) = operator("GET", "/api/v1/plugins");
    assert_eq!(status, 200, "{body}");
    let flooded = flood.opened();
    let fds = open_fds(&up);
    let failed_connects = flood.stop();
    assert!(fds < NOFILE as usize, "up holds {fds} descriptors");
    assert_eq!(flooded, held, "every connection of the flood was opened");
    // Not asserted (time is not a test's business): the figure for the
    // record.
    let slowest = latencies.iter().max().copied().unwrap_or_default();
    eprintln!(
        "flood: {flooded} connections opened and held ({failed_connects} connects failed); up \
         held {fds} descriptors (limit {NOFILE}); the operator's {} requests answered in at most \
         {slowest:?} (all: {latencies:?})",
        latencies.len()
    );
    assert_eq!(restarted["state"], "running");
    for event in ["plugin.failed", "plugin.disabled"] {
        assert_eq!(records(&up, "good", event), Vec::<Value>::new());
    }
    // Once the flood is gone, everything is as before.
    let (status, body) = up.request("GET", "/api/v1/plugins", None);
    assert_eq!(status, 200, "{body}");
}

/// Read one answer with a `Content-Length` body from `s`.
fn read_answer(s: &mut TcpStream) -> String {
    let mut text = Vec::new();
    let mut byte = [0u8; 1];
    while !text.ends_with(b"\r\n\r\n") {
        let n = s.read(&mut byte).expect("an answer");
        assert_eq!(
            n,
            1,
            "closed mid-answer: {:?}",
            String::from_utf8_lossy(&text)
        );
        text.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&text).to_string();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or_else(|| panic!("no Content-Length in {head}"));
    let mut body = vec![0u8; length];
    s.read_exact(&mut body).expect("the body");
    head
}

/// Whether the daemon closes `s` (end of stream, or a reset) without
/// answering, waiting at most `within`.
fn closed_by_the_daemon(s: &mut TcpStream, within: Duration) -> bool {
    s.set_read_timeout(Some(within)).expect("timeout");
    let mut buf = [0u8; 64];
    match s.read(&mut buf) {
        Ok(0) => true,
        Ok(n) => panic!("answered: {:?}", String::from_utf8_lossy(&buf[..n])),
        Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
    }
}

#[test]
fn a_silent_connection_meets_the_header_read_timeout_and_a_quiet_one_the_idle_timeout() {
    // At 0.05 the header-read timeout is 0.5 s and the idle one 1.5 s; no
    // plugin needed.
    let dir = plugins(&[]);
    let up = Up::start_scaled("0.05", &["--plugins".as_ref(), dir.path().as_os_str()]);
    let connect = || TcpStream::connect(&up.addr).expect("connect");

    // Sends nothing at all.
    let mut silent = connect();
    // Sends the start of a head, never its end.
    let mut partial = connect();
    partial
        .write_all(b"GET /api/v1/plugins HTTP/1.1\r\nHost: ")
        .expect("write");
    // A kept-alive connection: one request with the token, answered, then
    // quiet.
    let mut quiet = connect();
    write!(
        quiet,
        "GET /api/v1/plugins HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\r\n",
        up.addr, up.token
    )
    .expect("write");
    quiet.set_read_timeout(Some(LIMIT)).expect("timeout");
    let head = read_answer(&mut quiet);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        !head.to_ascii_lowercase().contains("connection: close"),
        "{head}"
    );
    for (what, s) in [
        ("the silent connection", &mut silent),
        ("the unfinished head", &mut partial),
        ("the kept-alive connection", &mut quiet),
    ] {
        assert!(closed_by_the_daemon(s, LIMIT), "{what} is still open");
    }
    // The API still answers.
    let (status, body) = up.request("GET", "/api/v1/plugins", None);
    assert_eq!(status, 200, "{body}");
}

#[test]
fn a_start_that_fails_for_want_of_the_daemons_descriptors_is_retried_not_failed() {
    use rustix::process::{prlimit, Pid, Resource, Rlimit};
    let dir = plugins(&["good"]);
    let mut up = Up::start(dir.path());
    let first = up.wait_plugin("good", |p| p["state"] == "running");
    let daemon = Pid::from_raw(up.pid() as i32).expect("up's pid");
    // No new descriptor for the daemon: every open, pipe and accept fails
    // with EMFILE (the ones it holds stay usable).
    let before = rustix::process::getrlimit(Resource::Nofile);
    let starved = Rlimit {
        current: Some(3),
        maximum: before.maximum,
    };
    let restored = prlimit(Some(daemon), Resource::Nofile, starved).expect("prlimit up");
    // The plugin dies: the restart cannot read its manifest nor spawn it.
    let pid = first["pid"].as_u64().expect("a pid") as i32;
    let plugin = Pid::from_raw(pid).expect("a pid");
    rustix::process::kill_process(plugin, rustix::process::Signal::KILL).expect("SIGKILL");
    let want = "for want of the host's own resources";
    let line = up.wait_err_line(|l| l.contains(want));
    assert!(line.contains("Too many open files"), "{line}");
    // Retried with its own backoff (200 ms, then 400 ms at scale 0.2),
    // never counted as a failure of the plugin (5 would mark it failed).
    up.wait_err_line(|l| l.contains(want) && l.contains("delay=400ms"));
    prlimit(Some(daemon), Resource::Nofile, restored).expect("give up its descriptors back");
    let row = up.wait_plugin("good", |p| {
        p["state"] == "running" && p["pid"] != first["pid"] && p["pid"] != Value::Null
    });
    assert!(row["restarts"].as_u64() >= Some(1), "{row}");
    // Each failed start is audited as one (the host could not start it),
    // but the plugin is never marked failed nor disabled.
    assert_eq!(records(&up, "good", "plugin.disabled"), Vec::<Value>::new());
    let failed = records(&up, "good", "plugin.failed");
    assert!(failed.len() >= 2, "{failed:?}");
    assert!(
        failed.iter().all(|r| r["reason"] == "spawn failed"),
        "{failed:?}"
    );
}

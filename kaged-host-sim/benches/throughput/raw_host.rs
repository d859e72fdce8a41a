//! The reference host: the least a host can do for an `echo.say` call, as
//! a C host would do it. One thread, blocking `write(2)` of a request line
//! formatted into a reused buffer, blocking reads until the line answering
//! it (the `echo.said` notification before it is skipped by its missing
//! id), no JSON parser, no runtime, no audit, no transcript. Its calls per
//! second against the raw baseline plugin are the limit a host can reach
//! for this exchange on this machine; what `kaged-host-sim` reaches against
//! the same plugin, as a share of it, is the host's own cost.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

use kaged_host_sim::bench::reference::request_id;
use kaged_plugin_protocol::manifest::Manifest;

/// A plugin spawned and spoken to by the reference host.
pub struct RawHost {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    out: Vec<u8>,
    line: Vec<u8>,
}

/// The `_context` every call carries, as the host-sim's calls do.
const CONTEXT: &str = r#"{"operator_id":"operator","project_id":"bench","agent_path":"primary","session_id":"ses_bench","request_id":"req_bench"}"#;

impl RawHost {
    /// Spawn the plugin of the (staged) directory `dir`, uncaged, and
    /// complete the handshake.
    pub fn spawn(dir: &Path) -> Result<RawHost, String> {
        let manifest = Manifest::load_dir(dir).map_err(|e| e.to_string())?;
        let (program, args) = manifest
            .command
            .split_first()
            .ok_or("the manifest has no command")?;
        let program = if program.starts_with('/') {
            program.into()
        } else {
            dir.join(program)
        };
        let mut child = Command::new(program)
            .args(args)
            .current_dir(dir)
            .env("KAGED_PLUGIN_NAME", &manifest.name)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("spawning {}: {e}", manifest.name))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut host = RawHost {
            child,
            stdin,
            stdout,
            next_id: 1,
            out: Vec::with_capacity(512),
            line: Vec::with_capacity(512),
        };
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"daemon_version":"raw-host","api_version":1,"plugin_name":"{}","projects":[],"storage_available":false}}}}"#,
            manifest.name
        );
        host.send(init.as_bytes())?;
        host.answer_to(0)?;
        host.send(br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#)?;
        Ok(host)
    }

    /// The plugin's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn send(&mut self, line: &[u8]) -> Result<(), String> {
        self.stdin
            .write_all(line)
            .and_then(|()| self.stdin.write_all(b"\n"))
            .map_err(|e| format!("writing to the plugin: {e}"))
    }

    /// Queue one `echo.say` request in `self.out`; its id.
    fn queue_call(&mut self, i: usize) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let _ = write!(
            self.out,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"echo.say","params":{{"text":"call {i}","_context":{CONTEXT}}}}}"#
        );
        self.out.push(b'\n');
        id
    }

    fn flush_out(&mut self) -> Result<(), String> {
        let r = self.stdin.write_all(&self.out);
        self.out.clear();
        r.map_err(|e| format!("writing to the plugin: {e}"))
    }

    /// Read lines until the one answering `id` (lines without an id, the
    /// plugin's notifications, are skipped).
    fn answer_to(&mut self, id: u64) -> Result<(), String> {
        loop {
            self.line.clear();
            let n = self
                .stdout
                .read_until(b'\n', &mut self.line)
                .map_err(|e| format!("reading from the plugin: {e}"))?;
            if n == 0 {
                return Err("the plugin closed its stdout".into());
            }
            match line_id(&self.line) {
                Some(got) if got == id => return Ok(()),
                Some(got) => return Err(format!("answer {got} while waiting for {id}")),
                None => {}
            }
        }
    }

    /// `n` calls, each sent when the previous one is answered; calls per
    /// second.
    pub fn one_at_a_time(&mut self, n: usize) -> Result<f64, String> {
        let start = Instant::now();
        for i in 0..n {
            let id = self.queue_call(i);
            self.flush_out()?;
            self.answer_to(id)?;
        }
        Ok(n as f64 / start.elapsed().as_secs_f64())
    }

    /// `n` calls, `window` at a time: one write of the window's requests,
    /// then its answers, in order; calls per second.
    pub fn pipelined(&mut self, n: usize, window: usize) -> Result<f64, String> {
        let start = Instant::now();
        let mut done = 0;
        while done < n {
            let batch = window.min(n - done);
            let first = self.next_id;
            for i in 0..batch {
                self.queue_call(i);
            }
            self.flush_out()?;
            for id in first..first + batch as u64 {
                self.answer_to(id)?;
            }
            done += batch;
        }
        Ok(n as f64 / start.elapsed().as_secs_f64())
    }

    /// `shutdown`, then wait for the exit.
    pub fn shutdown(mut self) {
        let _ = self.send(br#"{"jsonrpc":"2.0","method":"shutdown"}"#);
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

/// The numeric id of an answer line, or `None` for a notification.
fn line_id(line: &[u8]) -> Option<u64> {
    request_id(line)?.parse().ok()
}

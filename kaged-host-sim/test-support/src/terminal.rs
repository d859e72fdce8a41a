//! Running a command with its standard error on a pseudo-terminal, as a
//! person at a terminal would see it, and its standard output on a pipe:
//! what tests of the progress line need (it is drawn only on a terminal).
//!
//! ```no_run
//! let run = kaged_test_support::terminal::run_with_terminal_stderr(
//!     std::process::Command::new("sh").args(["-c", "echo out; echo err >&2"]),
//! );
//! assert_eq!(run.stdout, "out\n");
//! assert!(run.terminal.contains("err"));
//! ```

use std::fs::File;
use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};

use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
use rustix::termios::{tcsetwinsize, Winsize};

/// What a command printed, and how it ended.
#[derive(Debug)]
pub struct TerminalRun {
    /// Its standard output (a pipe), as text.
    pub stdout: String,
    /// Everything written to its standard error (the terminal), escape
    /// sequences included, as text.
    pub terminal: String,
    /// How it ended.
    pub status: ExitStatus,
}

impl TerminalRun {
    /// Whether the terminal shows a line with `words` that was erased at
    /// the end: after the last time the words were drawn, the line was
    /// cleared (`ESC [ 2K`, as a progress line is when its run ends).
    pub fn drew_and_cleared(&self, words: &str) -> bool {
        self.terminal
            .rfind(words)
            .is_some_and(|at| self.terminal[at..].contains("\x1b[2K"))
    }
}

/// Run `cmd` with standard error on a fresh 100×30 pseudo-terminal and
/// standard output piped; its standard input is closed. Panics (a test's
/// failure) when the terminal cannot be made or the command not run.
pub fn run_with_terminal_stderr(cmd: &mut Command) -> TerminalRun {
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)
        .expect("open a pseudo-terminal");
    grantpt(&master).expect("grantpt");
    unlockpt(&master).expect("unlockpt");
    let name = ptsname(&master, Vec::new()).expect("ptsname");
    let path = name
        .to_str()
        .expect("the terminal's name is UTF-8")
        .to_string();
    tcsetwinsize(
        &master,
        Winsize {
            ws_row: 30,
            ws_col: 100,
            ws_xpixel: 0,
            ws_ypixel: 0,
        },
    )
    .expect("set the terminal's size");
    let slave = File::options()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("open {path}: {e}"));
    // Read the terminal while the command runs, so a full buffer never
    // stops it; the read ends (EIO) once every writer has closed it.
    let mut reader = File::from(master);
    let drain = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = reader.read(&mut buf) {
            seen.extend_from_slice(&buf[..n]);
        }
        seen
    });
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(slave))
        .spawn()
        .unwrap_or_else(|e| panic!("run {cmd:?}: {e}"));
    // `cmd` keeps its copy of the terminal's other end until its stderr is
    // set again: from here the command holds the only one, so the reader
    // sees the end when the command (and anything it left) exits.
    cmd.stderr(Stdio::null());
    let out = child.wait_with_output().expect("wait for the command");
    let terminal = drain.join().expect("the terminal's reader");
    TerminalRun {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        terminal: String::from_utf8_lossy(&terminal).into_owned(),
        status: out.status,
    }
}

//! Running a command in a test: a failure shows both its streams, so the
//! panic message says why without a rerun.

use std::fmt::Display;
use std::process::{Command, Output};

/// Both streams of a finished command, each under its heading, for a
/// panic message.
pub fn streams(out: &Output) -> String {
    format!(
        "--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Panic, naming `what` and showing both streams, unless `out` is of a
/// command that succeeded.
#[track_caller]
pub fn assert_success(what: impl Display, out: &Output) {
    assert!(
        out.status.success(),
        "{what} failed ({})\n{}",
        out.status,
        streams(out)
    );
}

/// The variables that make cargo lint the workspace as it compiles it
/// (`.ci/run` sets them for the test build: clippy-driver as the
/// workspace's rustc wrapper, with clippy's arguments).
pub const LINT_WRAPPER_ENV: [&str; 2] = ["RUSTC_WORKSPACE_WRAPPER", "CLIPPY_ARGS"];

/// `c` without [`LINT_WRAPPER_ENV`]: a cargo build of a package outside
/// the kit (a new plugin, trybuild's cases) compiles as an author's does,
/// not linted as the kit's own code. (A build of the kit itself keeps
/// them: its crates then match what the test build compiled.)
pub fn outside_the_kit(c: &mut Command) -> &mut Command {
    for var in LINT_WRAPPER_ENV {
        c.env_remove(var);
    }
    c
}

/// Run `c` to its end, and panic with both streams unless it succeeded.
#[track_caller]
pub fn run_ok(c: &mut Command) -> Output {
    let out = c
        .output()
        .unwrap_or_else(|e| panic!("cannot run {c:?}: {e}"));
    assert_success(format_args!("{c:?}"), &out);
    out
}

/// Run `c` with its stdout a pipe whose reader is already gone (what `c |
/// head -0` gives it: every write fails with a broken pipe), and assert
/// that it ends as a command line should when its reader stops reading:
/// no panic, nothing on stderr about the pipe, an exit status (not a
/// signal). Its output, for further checks.
#[track_caller]
pub fn assert_quiet_on_closed_stdout(c: &mut Command) -> Output {
    let (reader, writer) = rustix::pipe::pipe().expect("a pipe");
    drop(reader);
    let out = c
        .stdout(std::process::Stdio::from(writer))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {c:?}: {e}"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("panicked") && !err.to_lowercase().contains("broken pipe"),
        "{c:?} with its stdout closed:\n{}",
        streams(&out)
    );
    assert!(
        out.status.code().is_some(),
        "{c:?} ended by a signal: {}",
        out.status
    );
    out
}

/// Run `git ARGS` in `dir` as a fixed committer, with no user or global
/// configuration read (a test's repository is the same on every machine),
/// and assert that it succeeded.
pub fn git(dir: &std::path::Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git runs");
    assert_success(format!("git {args:?}"), &out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_shows_both_streams() {
        let mut c = Command::new("sh");
        c.args(["-c", "echo said; echo complained >&2; exit 3"]);
        let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || run_ok(&mut c)))
            .expect_err("it failed");
        let text = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(text.contains("exit status: 3"), "{text}");
        assert!(
            text.contains("--- stdout\nsaid\n") && text.contains("--- stderr\ncomplained\n"),
            "{text}"
        );
    }

    #[test]
    fn a_success_gives_the_output() {
        let out = run_ok(Command::new("sh").args(["-c", "echo hi"]));
        assert_eq!(out.stdout, b"hi\n");
    }
}

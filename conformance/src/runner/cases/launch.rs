//! `launch.*`: does `command[0]` resolve to an executable, and does the
//! process start and stay up for the handshake? The start is the first
//! half of the primary spawn; `handshake.rs` runs the second half.

use kaged_host_sim::spawn::{resolve_command, SpawnError};

use super::handshake::{Primary, QuietWindow};
use super::sessions::describe_launch;
use super::suite::Mode;
use super::{Suite, Verdict};

/// Run `launch.command_exists` and start the primary spawn (whose
/// `launch.starts` verdict is given once the handshake shows whether the
/// process stayed up).
pub(crate) async fn run(suite: &mut Suite<'_>) {
    let Some(m) = suite.manifest.clone() else {
        return;
    };
    let exists = match m.command.first() {
        None => Verdict::fail("expected: a command; actual: the manifest's command is empty"),
        Some(program) => {
            let dir = std::fs::canonicalize(&suite.dir).unwrap_or_else(|_| suite.dir.clone());
            match resolve_command(program, &dir) {
                Ok(p) => Verdict::pass(format!("{program} resolves to {}", p.display())),
                Err(SpawnError::NotFound { path }) => Verdict::fail(format!(
                    "expected: an executable file; actual: not found: {} does not exist",
                    path.display()
                )),
                Err(SpawnError::NotExecutable { path }) => Verdict::fail(format!(
                    "expected: an executable file; actual: not executable: {} lacks the executable bit (chmod +x)",
                    path.display()
                )),
                Err(e) => Verdict::fail(format!("expected: an executable file; actual: {e}")),
            }
        }
    };
    let command_ok = matches!(exists, Verdict::Pass(_));
    suite.record("launch.command_exists", "launch.command_exists", exists);
    if !command_ok {
        suite.mode =
            Mode::Unavailable("the command cannot be started (see launch.command_exists)".into());
        suite.record(
            "launch.starts",
            "launch.starts",
            Verdict::skip("the command cannot be started (see launch.command_exists)"),
        );
        return;
    }
    // launch.starts is decided after the handshake; its scope spans both.
    let Some(mut scope) = suite.begin("launch.starts", "launch.starts") else {
        // Not selected: the primary spawn is still needed by later cases.
        start_primary(suite, None).await;
        return;
    };
    start_primary(suite, Some(&mut scope)).await;
    let verdict = match &suite.primary {
        None => Verdict::fail("expected: the process starts; actual: it could not be started"),
        Some(p) => match &p.launch_error {
            Some(e) => Verdict::fail(format!("expected: the process starts; actual: {e}")),
            None if p.exited_at_once() => Verdict::fail(format!(
                "expected: the process stays up for the handshake; actual: {}",
                p.exit_description()
            )),
            None => Verdict::pass("the process started and stayed up for the handshake"),
        },
    };
    suite.end(scope, verdict);
}

async fn start_primary(suite: &mut Suite<'_>, scope: Option<&mut super::case::Scope>) {
    let t = suite.new_transcript();
    if let Some(s) = scope {
        s.touch_from(&t, 0);
    }
    let host = suite.host(t.clone());
    let quiet = QuietWindow::for_timeouts(&suite.timeouts());
    let primary = match host.launch_lenient(&suite.dir).await {
        Err(e) => Primary::failed(describe_launch(&e), t),
        Ok(session) => Primary::handshake(suite, session, t, quiet).await,
    };
    suite.primary = Some(primary);
}

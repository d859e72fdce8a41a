//! How long the whole suite takes (the issue's budget, measured here rather
//! than in a test):
//!
//! - against correct plugins (`examples/echo`, built by `cargo build
//!   --workspace`, and the suite's own `conforming` fixture) at time scale
//!   1: under 3 s;
//! - against `wrong-but-prompt` (answers every probe at once, wrongly where
//!   it can) at time scale 1: each failing case under the run's smallest
//!   timeout and not ended by one (`ended_by`): every verdict from the
//!   answer;
//! - against `hangs-everywhere` (answers `initialize`, then nothing; ignores
//!   shutdown, EOF and SIGTERM): every case bounded by the timeouts the
//!   report states. Each case's duration is printed next to its bound.
//!
//! ```sh
//! cargo bench -p kaged-conformance --bench suite                     # hang run at scale 0.1
//! cargo bench -p kaged-conformance --bench suite -- --hang-scale 1   # the real thing (~7 min)
//! ```
//!
//! Exits 1 when a budget is exceeded.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kaged_conformance::catalogue::{self, *};
use kaged_conformance::report::{EffectiveTimeouts, Report, Status};
use kaged_conformance::testing::InstalledCopy;
use kaged_conformance::{run_suite, Options};
use kaged_host_core::TimeScale;

/// What the suite may spend on a correct plugin at time scale 1.
const CORRECT_BUDGET: Duration = Duration::from_secs(3);
/// Per-case allowance for spawning processes and bookkeeping.
const SLACK: Duration = Duration::from_millis(250);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn options(scale: f64) -> Options {
    Options {
        time_scale: TimeScale::new(scale).unwrap_or_default(),
        ..Options::default()
    }
}

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

/// The longest case `id` may take against a plugin that never answers,
/// from the effective timeouts: a (re)spawn and handshake, the wait the
/// case makes, and the shutdown ladder (shutdown, SIGTERM grace, kill
/// confirmation, reaping) for spawns it ends.
fn bound(id: &str, t: &EffectiveTimeouts) -> Duration {
    let (init, req, hook, ping) = (
        ms(t.initialize_ms),
        ms(t.request_ms),
        ms(t.hook_ms),
        ms(t.ping_ms),
    );
    let ladder = ms(t.shutdown_ms)
        + ms(t.sigterm_grace_ms)
        + Duration::from_secs(1)
        + ms(t.sigterm_grace_ms.max(500));
    let Some(case) = catalogue::find(id) else {
        return SLACK;
    };
    let wait = match *case {
        LAUNCH_STARTS => ms(500) + init + ladder,
        // A copy of the plugin directory, started, handshaken and retired.
        LAUNCH_SELF_CONTAINED => ms(500) + init + ladder,
        // Two fresh spawns, each handshaken and retired.
        HANDSHAKE_INITIALIZE_VARIANTS => ms(1000) + init + ladder + init + ladder,
        PROTOCOL_PING => init + ping,
        PROTOCOL_UNKNOWN_METHOD | PROTOCOL_IDS_ECHOED | PROTOCOL_CONCURRENT_CALLS => init + req,
        PROTOCOL_NOT_INITIALIZED => init + req + ladder,
        // The ping's wait, then the busy calls' (bounded by the request timeout).
        PROTOCOL_PING_DURING_SLOW_CALL => init + ping + req,
        PROTOCOL_BATCH_REJECTED | PROTOCOL_PARSE_ERROR => init + req + req + ladder,
        METHODS_ANSWERS
        | METHODS_EXAMPLES
        | METHODS_INVALID_PARAMS
        | METHODS_TOOL_VALID_ARGS
        | METHODS_TOOL_INVALID_ARGS
        | CONFIG_UPDATE_ACCEPTED
        | CONFIG_INVALID_REJECTED => init + req + ladder,
        SYSTEM_PROJECTS_ACTIVATED | SYSTEM_PROJECTS_DEACTIVATED => init + req,
        CONFIG_UPDATE_IN_HANDSHAKE_WINDOW => init + init + req + ladder,
        HOOKS_ANSWERS => init + hook,
        COMPACTION_COMPACTOR_CONTRACT => init + hook + ladder,
        LIFECYCLE_STDIN_EOF_EXITS => init + ms(t.shutdown_ms) + ladder,
        LIFECYCLE_NO_ORPHANS => init + ping + ladder + ladder,
        LIFECYCLE_SHUTDOWN_EXITS_ZERO => init + ladder + ladder,
        _ => Duration::ZERO,
    };
    wait + SLACK
}

fn timed(dir: &Path, scale: f64) -> Option<(Report, Duration)> {
    let start = Instant::now();
    match run_suite(dir, &options(scale)) {
        Ok(r) => Some((r, start.elapsed())),
        Err(e) => {
            eprintln!("cannot run the suite against {}: {e}", dir.display());
            None
        }
    }
}

fn correct(name: &str, dir: PathBuf, hint: &str) -> bool {
    let Some((r, took)) = timed(&dir, 1.0) else {
        eprintln!("  ({hint})");
        return false;
    };
    let s = r.summary;
    let ok = took < CORRECT_BUDGET && s.failed == 0 && s.warned == 0;
    println!(
        "correct  {name:<22} time scale 1: {:>7.3} s for {} cases ({} passed, {} failed, {} warned, {} skipped); budget {:?}: {}",
        took.as_secs_f64(),
        r.cases.len(),
        s.passed,
        s.failed,
        s.warned,
        s.skipped,
        CORRECT_BUDGET,
        if ok { "ok" } else { "EXCEEDED or not conforming" }
    );
    if !ok {
        eprintln!("  ({hint})");
    }
    ok
}

fn wrong_but_prompt() -> bool {
    let dir = root().join("tests/fixtures/plugins/wrong-but-prompt");
    let Some((r, took)) = timed(&dir, 1.0) else {
        return false;
    };
    let Some(t) = r.timeouts else {
        eprintln!("the report states no timeouts");
        return false;
    };
    // Per case: every verdict from the answer, so each failing case ends
    // below the smallest timeout of the run, and not by one.
    let smallest = [t.initialize_ms, t.request_ms, t.hook_ms, t.ping_ms]
        .into_iter()
        .min()
        .map_or(Duration::ZERO, ms);
    let s = r.summary;
    let late: Vec<&kaged_conformance::report::CaseResult> = r
        .cases
        .iter()
        .filter(|c| matches!(c.status, Status::Fail | Status::Warn))
        .filter(|c| {
            ms(c.duration_ms) >= smallest
                || c.ended_by == Some(kaged_conformance::report::EndedBy::Timeout)
        })
        .collect();
    let ok = s.failed > 0 && late.is_empty();
    println!(
        "wrong    wrong-but-prompt       time scale 1: {:>7.3} s for {} cases ({} passed, {} failed, {} warned, {} skipped); budget per failing case: under {:?} and not ended by a timeout: {}",
        took.as_secs_f64(),
        r.cases.len(),
        s.passed,
        s.failed,
        s.warned,
        s.skipped,
        smallest,
        if ok { "ok" } else { "EXCEEDED (or nothing failed)" }
    );
    for c in late {
        println!(
            "  late case {:<48} {:>6} ms, ended by {}",
            c.id,
            c.duration_ms,
            c.ended_by.map_or("?", |e| e.as_str())
        );
    }
    ok
}

fn hanging(scale: f64) -> bool {
    let dir = root().join("tests/fixtures/plugins/hangs-everywhere");
    let Some((r, took)) = timed(&dir, scale) else {
        return false;
    };
    let Some(t) = r.timeouts else {
        eprintln!("the report states no timeouts");
        return false;
    };
    println!(
        "hanging  hangs-everywhere       time scale {scale}: effective timeouts: {}",
        t.describe()
    );
    println!(
        "  {:<52} {:>6} {:>10} {:>10}",
        "case", "status", "took", "bound"
    );
    let mut total_bound = Duration::ZERO;
    let mut over = Vec::new();
    for c in &r.cases {
        let b = bound(&c.id, &t);
        total_bound += b;
        let d = ms(c.duration_ms);
        if d > b {
            over.push(c.id.clone());
        }
        if c.duration_ms > 0 || d > b {
            println!(
                "  {:<52} {:>6} {:>8} ms {:>8} ms{}",
                c.id,
                c.status.as_str(),
                c.duration_ms,
                b.as_millis(),
                if d > b { "  OVER" } else { "" }
            );
        }
    }
    let ok = over.is_empty() && took <= total_bound;
    println!(
        "hanging  total {:.3} s for {} cases ({} failed, {} warned); bound from the stated timeouts {:.3} s: {}",
        took.as_secs_f64(),
        r.cases.len(),
        r.summary.failed,
        r.summary.warned,
        total_bound.as_secs_f64(),
        if ok { "bounded" } else { "NOT BOUNDED" }
    );
    ok
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let hang_scale = args
        .iter()
        .position(|a| a == "--hang-scale")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.1);
    // The echo example packed and installed, as the daemon would run it
    // (its development directory points at ../../target and is not
    // self-contained).
    let echo = InstalledCopy::new(
        &root().join("../examples/echo"),
        &root().join("../target/debug/echo"),
    );
    let mut ok = match &echo {
        Ok(installed) => correct(
            "examples/echo",
            installed.dir().to_path_buf(),
            "build the example first: cargo build -p kaged-example-echo",
        ),
        Err(e) => {
            eprintln!("cannot pack examples/echo (build it first: cargo build -p kaged-example-echo): {e}");
            false
        }
    };
    // The fixtures staged as the tests stage them: caged, a plugin sees
    // only its own directory, so `_lib` is copied into it.
    let staged = tempfile::tempdir().map(|d| {
        let fixtures = root().join("tests/fixtures/plugins");
        let done = kaged_host_core::testing::stage_plugin_tree(&fixtures, "_lib", d.path());
        (d, done)
    });
    ok &= match &staged {
        Ok((d, Ok(()))) => correct(
            "conforming (Python)",
            d.path().join("conforming"),
            "needs python3",
        ),
        Ok((_, Err(e))) => {
            eprintln!("cannot stage the fixtures: {e}");
            false
        }
        Err(e) => {
            eprintln!("cannot stage the fixtures: {e}");
            false
        }
    };
    ok &= wrong_but_prompt();
    ok &= hanging(hang_scale);
    std::process::exit(if ok { 0 } else { 1 });
}

//! How long the whole suite takes on real shapes of plugin, at time scale
//! 1, with `--jobs 1` and with the default (the available parallelism),
//! side by side with the lower bound: the plugin's start-up time × the
//! fresh sessions the run made ÷ the cores. The shapes and their budgets:
//!
//! - `examples/echo` (conforming, Rust; packed as `plugin install` copies
//!   it): under 1 s;
//! - `conforming` (the suite's Python fixture): under 3 s;
//! - `wrong-but-prompt` (answers every probe at once, wrongly where it
//!   can): under 2 s, and each failing case under the run's smallest
//!   timeout and not ended by one (every verdict from the answer);
//! - `ignores-shutdown` (the same wrong answers, and it ignores `shutdown`):
//!   within its shutdown budget + 2 s;
//! - `hangs-everywhere` (answers `initialize`, then nothing; ignores
//!   shutdown, EOF and SIGTERM): under 60 s.
//!
//! Both runs of a shape must give the same verdicts.
//!
//! ```sh
//! cargo build -p kaged-example-echo
//! cargo bench -p kaged-conformance --bench suite              # every shape (~2 min)
//! cargo bench -p kaged-conformance --bench suite -- --quick   # without hangs-everywhere
//! cargo bench -p kaged-conformance --bench suite --profile dev  # on the test build
//! ```
//!
//! On this kit's 2-core machine (dev profile, a CI build beside it):
//!
//! ```text
//! shape (time scale 1)    --jobs 1    --jobs 2 lower bound                                          budget
//! examples/echo            0.540 s     0.487 s     0.169 s ( 31 sessions ×   10.9 ms ÷ 2)      1.0 s  ok
//! conforming               1.820 s     1.355 s     0.469 s ( 39 sessions ×   24.1 ms ÷ 2)      3.0 s  ok
//! wrong-but-prompt         1.108 s     0.589 s     0.520 s ( 28 sessions ×   37.1 ms ÷ 2)      2.0 s  ok
//! ignores-shutdown         5.967 s     5.677 s     0.630 s ( 28 sessions ×   45.0 ms ÷ 2)      7.0 s  ok
//! hangs-everywhere        39.434 s    38.211 s     0.410 s ( 34 sessions ×   24.1 ms ÷ 2)     60.0 s  ok
//! ```
//!
//! Before lanes and the shutdown barrier: ignores-shutdown 45.8 s,
//! hangs-everywhere 583.8 s, echo (development directory) about 1.1 s.
//!
//! Exits 1 when a budget is exceeded or the verdicts differ.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kaged_conformance::report::{EndedBy, Report, Status};
use kaged_conformance::testing::InstalledCopy;
use kaged_conformance::{run_suite, Options};
use kaged_host_core::{CageMode, HostConfig, HostSim, TimeScale};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

fn options(jobs: Option<usize>) -> Options {
    Options {
        time_scale: TimeScale::FULL,
        cage: CageMode::Off,
        jobs: jobs.and_then(NonZeroUsize::new),
        ..Options::default()
    }
}

/// The median time from spawn to an answered handshake, of 5 launches.
fn startup(dir: &Path) -> Option<Duration> {
    let rt = tokio::runtime::Runtime::new().ok()?;
    let mut took: Vec<Duration> = (0..5)
        .filter_map(|_| {
            rt.block_on(async {
                let host = HostSim::new(HostConfig::default().with_cage(CageMode::Off));
                let start = Instant::now();
                let s = host.launch(dir).await.ok()?;
                let t = start.elapsed();
                s.kill("bench: start-up measured").await;
                Some(t)
            })
        })
        .collect();
    took.sort();
    took.get(took.len() / 2).copied()
}

fn timed(dir: &Path, jobs: Option<usize>) -> Option<(Report, Duration)> {
    let start = Instant::now();
    match run_suite(dir, &options(jobs)) {
        Ok(r) => Some((r, start.elapsed())),
        Err(e) => {
            eprintln!("cannot run the suite against {}: {e}", dir.display());
            None
        }
    }
}

/// A shape's budget: a fixed one, or the shutdown budget + 2 s.
enum Budget {
    Fixed(Duration),
    ShutdownPlus2,
}

/// Run one shape twice; print its row; whether it kept its budget with
/// the same verdicts.
fn shape(name: &str, dir: &Path, budget: Budget, check: fn(&Report) -> bool) -> bool {
    let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    let Some(start) = startup(dir) else {
        println!("{name:<20} cannot be started");
        return false;
    };
    let (Some((one, t1)), Some((n, tn))) = (timed(dir, Some(1)), timed(dir, None)) else {
        return false;
    };
    let sessions = n
        .cases
        .iter()
        .flat_map(|c| &c.audit_events)
        .filter(|e| *e == "plugin.spawned")
        .count();
    let bound = start * sessions as u32 / cores as u32;
    let budget = match budget {
        Budget::Fixed(d) => d,
        Budget::ShutdownPlus2 => {
            n.timeouts.map_or(Duration::ZERO, |t| ms(t.shutdown_ms)) + Duration::from_secs(2)
        }
    };
    let verdicts = |r: &Report| -> Vec<(String, Status)> {
        r.cases.iter().map(|c| (c.id.clone(), c.status)).collect()
    };
    let same = verdicts(&one) == verdicts(&n);
    let ok = tn < budget && same && check(&n);
    println!(
        "{name:<20} {:>9.3} s {:>9.3} s {:>9.3} s ({:>3} sessions × {:>6.1} ms ÷ {cores}) {:>8.1} s  {}",
        t1.as_secs_f64(),
        tn.as_secs_f64(),
        bound.as_secs_f64(),
        sessions,
        start.as_secs_f64() * 1000.0,
        budget.as_secs_f64(),
        if !same {
            "VERDICTS DIFFER"
        } else if ok {
            "ok"
        } else {
            "EXCEEDED"
        }
    );
    ok
}

/// Every case that fails or warns did so at once, from the answer.
fn from_answers(r: &Report) -> bool {
    let Some(t) = r.timeouts else {
        return false;
    };
    let smallest = [t.initialize_ms, t.request_ms, t.hook_ms, t.ping_ms]
        .into_iter()
        .min()
        .map_or(Duration::ZERO, ms);
    let late: Vec<_> = r
        .cases
        .iter()
        .filter(|c| matches!(c.status, Status::Fail | Status::Warn))
        .filter(|c| ms(c.duration_ms) >= smallest || c.ended_by == Some(EndedBy::Timeout))
        .collect();
    for c in &late {
        println!(
            "  late case {:<48} {:>6} ms, ended by {}",
            c.id,
            c.duration_ms,
            c.ended_by.map_or("?", |e| e.as_str())
        );
    }
    r.summary.failed > 0 && late.is_empty()
}

fn conforms(r: &Report) -> bool {
    r.summary.failed == 0 && r.summary.warned == 0
}

fn fails(r: &Report) -> bool {
    r.summary.failed > 0
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    println!(
        "{:<20} {:>11} {:>11} {:>11} {:<36} {:>10}",
        "shape (time scale 1)",
        "--jobs 1",
        format!("--jobs {cores}"),
        "lower bound",
        "",
        "budget"
    );
    // The echo example packed and installed, as the daemon would run it
    // (its development directory points at ../../target and is not
    // self-contained).
    let echo = InstalledCopy::new(
        &root().join("../examples/echo"),
        &root().join("../target/debug/echo"),
    );
    let mut ok = match &echo {
        Ok(installed) => shape(
            "examples/echo",
            installed.dir(),
            Budget::Fixed(Duration::from_secs(1)),
            conforms,
        ),
        Err(e) => {
            eprintln!("cannot pack examples/echo (build it first: cargo build -p kaged-example-echo): {e}");
            false
        }
    };
    // The fixtures staged as the tests stage them: a plugin sees only its
    // own directory, so `_lib` is copied into it.
    let staged = tempfile::tempdir().map(|d| {
        let fixtures = root().join("tests/fixtures/plugins");
        let done = kaged_host_core::testing::stage_plugin_tree(&fixtures, "_lib", d.path());
        (d, done)
    });
    let d = match &staged {
        Ok((d, Ok(()))) => d.path().to_path_buf(),
        Ok((_, Err(e))) => {
            eprintln!("cannot stage the fixtures: {e}");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("cannot stage the fixtures: {e}");
            std::process::exit(1);
        }
    };
    ok &= shape(
        "conforming",
        &d.join("conforming"),
        Budget::Fixed(Duration::from_secs(3)),
        conforms,
    );
    ok &= shape(
        "wrong-but-prompt",
        &d.join("wrong-but-prompt"),
        Budget::Fixed(Duration::from_secs(2)),
        from_answers,
    );
    ok &= shape(
        "ignores-shutdown",
        &d.join("ignores-shutdown"),
        Budget::ShutdownPlus2,
        fails,
    );
    if !quick {
        ok &= shape(
            "hangs-everywhere",
            &d.join("hangs-everywhere"),
            Budget::Fixed(Duration::from_secs(60)),
            fails,
        );
    }
    std::process::exit(if ok { 0 } else { 1 });
}

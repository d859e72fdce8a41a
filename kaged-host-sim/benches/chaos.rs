//! The chaos suite over many seeds (issue 19): every seed's plan, time and
//! the host's RSS after it; at the end the largest RSS, the slowest seed
//! and a replay command for each failing seed. Exit status 1 when a seed
//! failed.
//!
//! ```sh
//! cargo bench -p kaged-host-sim --bench chaos -- --seeds 500 [--from 1] [--cage off|require] [--quiet]
//! ```
//!
//! Caged (`require`) by default where bwrap cages, else uncaged. On a
//! terminal a progress line on stderr counts the seeds (not with `--quiet`,
//! which also prints only the failing seeds' lines).

use std::time::Duration;

use kaged_host_core::progress::Progress;
use kaged_host_core::CageMode;
use kaged_test_support::chaos::{replay_command, run_seed, ChaosOptions, MAX_RSS_KIB, SUITE_SCALE};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let count: u64 = arg(&args, "--seeds")
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let from: u64 = arg(&args, "--from")
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let quiet = args.iter().any(|a| a == "--quiet");
    let cage = match arg(&args, "--cage").as_deref() {
        Some("off") => CageMode::Off,
        Some("require") => CageMode::Require,
        _ => match kaged_host_core::cage::availability().await {
            Ok(_) => CageMode::Require,
            Err(_) => CageMode::Off,
        },
    };
    let opts = ChaosOptions::suite(cage);
    println!(
        "chaos: seeds {from}..{}, {}, time scale {SUITE_SCALE}, RSS bound {MAX_RSS_KIB} KiB",
        from + count - 1,
        if cage == CageMode::Off {
            "UNCAGED (process groups only)"
        } else {
            "caged (bwrap)"
        }
    );
    let (mut max_rss, mut slowest, mut failed) =
        (0u64, (Duration::ZERO, 0u64, String::new()), Vec::new());
    let started = std::time::Instant::now();
    let progress = Progress::stderr("chaos", "seeds", Some(count), quiet);
    for seed in from..from + count {
        progress.set_message(format!("seed {seed}"));
        let out = run_seed(&opts, seed).await;
        progress.inc(1);
        max_rss = max_rss.max(out.host_rss_kib);
        if out.elapsed > slowest.0 {
            slowest = (out.elapsed, seed, out.plan.describe());
        }
        if !quiet || !out.failures.is_empty() {
            progress.suspend(|| println!("{}", out.line()));
        }
        if !out.failures.is_empty() {
            failed.push(seed);
        }
    }
    progress.finish();
    println!(
        "{count} seeds in {:?}: {} failed; max host RSS {max_rss} KiB; slowest seed {} ({:?}: {})",
        started.elapsed(),
        failed.len(),
        slowest.1,
        slowest.0,
        slowest.2
    );
    for seed in &failed {
        println!("replay: {}", replay_command(*seed, cage != CageMode::Off));
    }
    if failed.is_empty() {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::from(1)
    }
}

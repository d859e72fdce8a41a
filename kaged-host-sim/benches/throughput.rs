//! Throughput of the SDK against a raw baseline, through the whole host.
//!
//! Drives the echo example (SDK) and the raw baseline (std + serde_json,
//! one line in, one line out) through `kaged-host-sim` over real pipes and
//! prints calls per second, one at a time and pipelined, with the ratio
//! SDK / raw, and the echo plugin's resident memory.
//!
//! ```sh
//! cargo build --release -p kaged-example-echo -p kaged-example-raw-baseline
//! cargo bench -p kaged-host-sim --bench throughput
//! ```
//!
//! `KAGED_BENCH_CALLS` sets the number of calls per measurement (default
//! 5000), `KAGED_BENCH_ROUNDS` the rounds (default 5): the SDK and the
//! baseline alternate within each round and the medians are printed, so
//! load from elsewhere on the machine hits both alike.

use std::path::{Path, PathBuf};
use std::time::Instant;

use kaged_host_sim::host::{HostConfig, HostSim};
use kaged_host_sim::session::PluginSession;
use kaged_host_sim::testing::StagedPlugin;
use kaged_plugin_sdk::protocol::PluginCallContext;
use serde_json::json;

/// Calls in flight at once in the pipelined measurement.
const WINDOW: usize = 64;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn release_bin(name: &str) -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    // target/release/deps/throughput-HASH -> target/release/NAME
    let dir = exe.parent().and_then(Path::parent).ok_or("no target dir")?;
    let bin = dir.join(name);
    if bin.is_file() {
        Ok(bin)
    } else {
        Err(format!(
            "{} not found: run `cargo build --release -p kaged-example-echo -p kaged-example-raw-baseline` first",
            bin.display()
        ))
    }
}

async fn one_at_a_time(s: &PluginSession, n: usize) -> f64 {
    let ctx = PluginCallContext::agent("bench", "primary", "ses_bench", "req_bench");
    let start = Instant::now();
    for i in 0..n {
        let r = s
            .call(
                "echo.say",
                Some(json!({"text": format!("call {i}")})),
                Some(ctx.clone()),
            )
            .await;
        if let Err(e) = r {
            eprintln!("call failed: {e}");
            std::process::exit(1);
        }
    }
    n as f64 / start.elapsed().as_secs_f64()
}

async fn pipelined(s: &PluginSession, n: usize) -> f64 {
    let ctx = PluginCallContext::agent("bench", "primary", "ses_bench", "req_bench");
    let start = Instant::now();
    let mut done = 0;
    while done < n {
        let batch = WINDOW.min(n - done);
        let calls = (0..batch).map(|i| {
            s.call(
                "echo.say",
                Some(json!({"text": format!("call {i}")})),
                Some(ctx.clone()),
            )
        });
        for r in futures_util::future::join_all(calls).await {
            if let Err(e) = r {
                eprintln!("call failed: {e}");
                std::process::exit(1);
            }
        }
        done += batch;
    }
    n as f64 / start.elapsed().as_secs_f64()
}

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

struct Measure {
    seq: f64,
    pipe: f64,
    rss_kib: Option<u64>,
}

/// A launched plugin, kept running across rounds.
struct Bench {
    _staged: StagedPlugin,
    session: PluginSession,
}

async fn launch(plugin_dir: &str, bin: &str, n: usize) -> Result<Bench, String> {
    let staged = StagedPlugin::new(&workspace().join(plugin_dir), release_bin(bin)?)
        .map_err(|e| e.to_string())?;
    let host = HostSim::new(HostConfig::default());
    let session = host
        .launch(staged.dir())
        .await
        .map_err(|e| format!("{e}"))?;
    // Warm up.
    one_at_a_time(&session, n / 10 + 1).await;
    pipelined(&session, n / 10 + 1).await;
    Ok(Bench {
        _staged: staged,
        session,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `rounds` rounds, the SDK and the baseline alternating within each
/// round so that load from elsewhere hits both alike; medians per mode.
async fn measure_all(n: usize, rounds: usize) -> Result<(Measure, Measure), String> {
    let sdk = launch("examples/echo", "echo", n).await?;
    let raw = launch("examples/raw-baseline", "raw-baseline", n).await?;
    let (mut s_seq, mut s_pipe, mut r_seq, mut r_pipe) = (vec![], vec![], vec![], vec![]);
    for _ in 0..rounds {
        s_seq.push(one_at_a_time(&sdk.session, n).await);
        r_seq.push(one_at_a_time(&raw.session, n).await);
        s_pipe.push(pipelined(&sdk.session, n).await);
        r_pipe.push(pipelined(&raw.session, n).await);
    }
    let m = |seq, pipe, b: &Bench| Measure {
        seq: median(seq),
        pipe: median(pipe),
        rss_kib: b.session.pid().and_then(rss_kib),
    };
    let out = (m(s_seq, s_pipe, &sdk), m(r_seq, r_pipe, &raw));
    sdk.session.shutdown().await;
    raw.session.shutdown().await;
    Ok(out)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        // `cargo bench -- --list` / `cargo test --benches` probe: nothing to list.
        return;
    }
    let env = |k: &str, d: usize| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let n = env("KAGED_BENCH_CALLS", 5000);
    let rounds = env("KAGED_BENCH_ROUNDS", 5).max(1);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let (sdk, raw) = match rt.block_on(measure_all(n, rounds)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    println!("kaged plugin throughput, {n} echo.say calls per measurement, median of {rounds} interleaved rounds, through kaged-host-sim over real pipes");
    println!(
        "{:<26} {:>14} {:>14} {:>8}",
        "", "SDK (echo)", "raw baseline", "ratio"
    );
    println!(
        "{:<26} {:>14.0} {:>14.0} {:>7.0}%",
        "one at a time (calls/s)",
        sdk.seq,
        raw.seq,
        100.0 * sdk.seq / raw.seq
    );
    println!(
        "{:<26} {:>14.0} {:>14.0} {:>7.0}%",
        format!("pipelined x{WINDOW} (calls/s)"),
        sdk.pipe,
        raw.pipe,
        100.0 * sdk.pipe / raw.pipe
    );
    match (sdk.rss_kib, raw.rss_kib) {
        (Some(s), Some(r)) => println!(
            "{:<26} {:>11.1} MiB {:>10.1} MiB   (goal: SDK under 10 MiB)",
            "resident memory",
            s as f64 / 1024.0,
            r as f64 / 1024.0
        ),
        _ => println!("resident memory: unavailable (no /proc)"),
    }
    println!("goal: SDK at 80% or more of the raw baseline's throughput");
}

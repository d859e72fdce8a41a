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
//! Each measurement runs in three placements (see `placement.rs`): `split`
//! (the host's threads on one CPU, the plugin on another), `shared` (both on
//! one CPU) and `free` (unpinned). The goal is judged on the pinned two;
//! `free` is printed for information, since there the kernel's placement,
//! not the code, decides the ratio.
//!
//! Environment: `KAGED_BENCH_CALLS` (calls per measurement, default 5000),
//! `KAGED_BENCH_ROUNDS` (default 5; the SDK and the baseline alternate
//! within each round, and which goes first alternates between rounds; the
//! medians are printed) and `KAGED_BENCH_LAYOUTS` (comma-separated, default
//! `split,shared,free`).

#[path = "throughput/placement.rs"]
mod placement;

use std::path::{Path, PathBuf};
use std::time::Instant;

use kaged_host_sim::bench::{process_usage, tree_usage};
use kaged_host_sim::testing::StagedPlugin;
use kaged_host_sim::{HostConfig, HostSim, PluginSession};
use kaged_plugin_protocol::PluginCallContext;
use placement::Layout;
use serde_json::json;

/// Calls in flight at once in the pipelined measurement.
const WINDOW: usize = 64;

/// The goal: the SDK's throughput as a share of the baseline's.
const GOAL: f64 = 0.80;

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

/// The plugin's on-CPU time (every thread of its process tree).
fn plugin_cpu(s: &PluginSession) -> Option<std::time::Duration> {
    s.pid().and_then(tree_usage).map(|u| u.cpu)
}

/// Calls per second and the plugin's CPU per call (µs) of `n` calls.
type Measured = (f64, Option<f64>);

fn measured(
    s: &PluginSession,
    n: usize,
    start: Instant,
    cpu0: Option<std::time::Duration>,
) -> Measured {
    let rate = n as f64 / start.elapsed().as_secs_f64();
    let cpu = match (cpu0, plugin_cpu(s)) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a).as_secs_f64() * 1e6 / n as f64),
        _ => None,
    };
    (rate, cpu)
}

async fn one_at_a_time(s: &PluginSession, n: usize) -> Result<Measured, String> {
    let ctx = PluginCallContext::agent("bench", "primary", "ses_bench", "req_bench");
    let cpu0 = plugin_cpu(s);
    let start = Instant::now();
    for i in 0..n {
        s.call(
            "echo.say",
            Some(json!({"text": format!("call {i}")})),
            Some(ctx.clone()),
        )
        .await
        .map_err(|e| format!("call failed: {e}"))?;
    }
    Ok(measured(s, n, start, cpu0))
}

async fn pipelined(s: &PluginSession, n: usize) -> Result<Measured, String> {
    let ctx = PluginCallContext::agent("bench", "primary", "ses_bench", "req_bench");
    let cpu0 = plugin_cpu(s);
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
            r.map_err(|e| format!("call failed: {e}"))?;
        }
        done += batch;
    }
    Ok(measured(s, n, start, cpu0))
}

/// A launched plugin, kept running across rounds and layouts.
struct Bench {
    _staged: StagedPlugin,
    session: PluginSession,
}

async fn launch(plugin_dir: &str, bin: &str) -> Result<Bench, String> {
    let staged = StagedPlugin::new(&workspace().join(plugin_dir), release_bin(bin)?)
        .map_err(|e| e.to_string())?;
    let host = HostSim::new(HostConfig::default());
    let session = host
        .launch(staged.dir())
        .await
        .map_err(|e| format!("{e}"))?;
    Ok(Bench {
        _staged: staged,
        session,
    })
}

/// Medians of one layout's rounds.
struct Row {
    layout: Layout,
    mode: String,
    sdk: f64,
    raw: f64,
    /// The lowest and highest per-round ratio.
    spread: (f64, f64),
    /// The plugins' median CPU per call, µs: SDK, raw.
    cpu: (Option<f64>, Option<f64>),
}

fn median_cpu(v: &[Measured]) -> Option<f64> {
    let cpu: Option<Vec<f64>> = v.iter().map(|m| m.1).collect();
    cpu.filter(|c| !c.is_empty()).map(median)
}

impl Row {
    fn new(layout: Layout, mode: String, sdk_m: Vec<Measured>, raw_m: Vec<Measured>) -> Row {
        let cpu = (median_cpu(&sdk_m), median_cpu(&raw_m));
        let sdk: Vec<f64> = sdk_m.iter().map(|m| m.0).collect();
        let raw: Vec<f64> = raw_m.iter().map(|m| m.0).collect();
        let ratios: Vec<f64> = sdk.iter().zip(&raw).map(|(s, r)| s / r).collect();
        let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ratios.iter().copied().fold(0.0, f64::max);
        Row {
            layout,
            mode,
            sdk: median(sdk),
            raw: median(raw),
            spread: (lo, hi),
            cpu,
        }
    }

    fn ratio(&self) -> f64 {
        self.sdk / self.raw
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Pin the host and both plugins for `layout`; false when it cannot apply.
fn place(layout: Layout, allowed: &[usize], plugins: &[&Bench]) -> Result<bool, String> {
    let Some((host, plugin)) = layout.cpus(allowed) else {
        return Ok(false);
    };
    placement::pin(None, &host)?;
    for b in plugins {
        let pid = b.session.pid().ok_or("a plugin has no pid")?;
        placement::pin(Some(pid), &plugin)?;
    }
    Ok(true)
}

/// One layout: a warm-up, then `rounds` rounds with the SDK and the
/// baseline alternating, the first of each round alternating too.
async fn measure(
    layout: Layout,
    sdk: &Bench,
    raw: &Bench,
    n: usize,
    rounds: usize,
) -> Result<[Row; 2], String> {
    for b in [sdk, raw] {
        one_at_a_time(&b.session, n / 10 + 1).await?;
        pipelined(&b.session, n / 10 + 1).await?;
    }
    let (mut s_seq, mut s_pipe, mut r_seq, mut r_pipe) = (vec![], vec![], vec![], vec![]);
    for round in 0..rounds {
        let sdk_first = round % 2 == 0;
        let order: [(&Bench, bool); 2] = if sdk_first {
            [(sdk, true), (raw, false)]
        } else {
            [(raw, false), (sdk, true)]
        };
        for (b, is_sdk) in order {
            let v = one_at_a_time(&b.session, n).await?;
            if is_sdk {
                s_seq.push(v)
            } else {
                r_seq.push(v)
            }
        }
        for (b, is_sdk) in order {
            let v = pipelined(&b.session, n).await?;
            if is_sdk {
                s_pipe.push(v)
            } else {
                r_pipe.push(v)
            }
        }
    }
    Ok([
        Row::new(layout, "one at a time".into(), s_seq, r_seq),
        Row::new(layout, format!("pipelined x{WINDOW}"), s_pipe, r_pipe),
    ])
}

#[derive(Clone)]
struct Settings {
    n: usize,
    rounds: usize,
    layouts: Vec<Layout>,
}

fn settings() -> Result<Settings, String> {
    let num = |k: &str, d: usize| match std::env::var(k) {
        Err(_) => Ok(d),
        Ok(v) => v
            .parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("{k}={v:?} is not a positive whole number")),
    };
    let layouts = match std::env::var("KAGED_BENCH_LAYOUTS") {
        Err(_) => Layout::ALL.to_vec(),
        Ok(v) => v
            .split(',')
            .map(|s| {
                Layout::parse(s).ok_or_else(|| {
                    format!(
                        "KAGED_BENCH_LAYOUTS: unknown layout {s:?} (known: split, shared, free)"
                    )
                })
            })
            .collect::<Result<_, _>>()?,
    };
    Ok(Settings {
        n: num("KAGED_BENCH_CALLS", 5000)?,
        rounds: num("KAGED_BENCH_ROUNDS", 5)?,
        layouts,
    })
}

struct Outcome {
    rows: Vec<Row>,
    skipped: Vec<Layout>,
    rss_kib: (Option<u64>, Option<u64>),
}

async fn run_all(cfg: Settings) -> Result<Outcome, String> {
    let allowed =
        placement::allowed_cpus().map_err(|e| format!("reading the CPU affinity: {e}"))?;
    let sdk = launch("examples/echo", "echo").await?;
    let raw = launch("examples/raw-baseline", "raw-baseline").await?;
    let (mut rows, mut skipped) = (vec![], vec![]);
    for &layout in &cfg.layouts {
        if place(layout, &allowed, &[&sdk, &raw])? {
            rows.extend(measure(layout, &sdk, &raw, cfg.n, cfg.rounds).await?);
        } else {
            skipped.push(layout);
        }
    }
    // Leave the process unpinned, as it started.
    place(Layout::Free, &allowed, &[&sdk, &raw])?;
    // The plugin process itself (caged, the child of bwrap's init).
    let rss = |b: &Bench| {
        b.session
            .plugin_pid()
            .and_then(process_usage)
            .map(|u| u.rss_kib)
    };
    let rss_kib = (rss(&sdk), rss(&raw));
    sdk.session.shutdown().await;
    raw.session.shutdown().await;
    Ok(Outcome {
        rows,
        skipped,
        rss_kib,
    })
}

fn report(cfg: &Settings, out: &Outcome) {
    println!(
        "kaged plugin throughput: {} echo.say calls per measurement through kaged-host-sim over real pipes, median of {} rounds",
        cfg.n, cfg.rounds
    );
    for l in &cfg.layouts {
        println!("  {:<7} {}", l.name(), l.describe());
    }
    println!(
        "\n{:<7} {:<16} {:>12} {:>13} {:>7}   {:<15} plugin CPU per call (SDK / raw)",
        "layout", "mode", "SDK (echo)", "raw baseline", "ratio", "per-round range"
    );
    let us = |c: Option<f64>| c.map_or_else(|| "?".to_string(), |c| format!("{c:.1} µs"));
    for r in &out.rows {
        println!(
            "{:<7} {:<16} {:>10.0}/s {:>11.0}/s {:>6.0}%   {:<15} {} / {}",
            r.layout.name(),
            r.mode,
            r.sdk,
            r.raw,
            100.0 * r.ratio(),
            format!("{:.0}%..{:.0}%", 100.0 * r.spread.0, 100.0 * r.spread.1),
            us(r.cpu.0),
            us(r.cpu.1)
        );
    }
    for l in &out.skipped {
        println!(
            "{:<7} skipped: needs more CPUs than this process may use",
            l.name()
        );
    }
    match out.rss_kib {
        (Some(s), Some(r)) => println!(
            "\nresident memory: SDK (echo) {:.1} MiB, raw baseline {:.1} MiB (goal: SDK under 10 MiB: {})",
            s as f64 / 1024.0,
            r as f64 / 1024.0,
            if s < 10 * 1024 { "met" } else { "NOT met" }
        ),
        _ => println!("\nresident memory: unavailable (no /proc)"),
    }
    let judged: Vec<&Row> = out.rows.iter().filter(|r| r.layout.judged()).collect();
    let misses: Vec<String> = judged
        .iter()
        .filter(|r| r.ratio() < GOAL)
        .map(|r| format!("{} {}", r.layout.name(), r.mode))
        .collect();
    let verdict = match (judged.is_empty(), misses.is_empty()) {
        (true, _) => "not judged (no pinned layout was measured)".to_string(),
        (false, true) => "met on every pinned layout".to_string(),
        (false, false) => format!("NOT met: {}", misses.join(", ")),
    };
    println!(
        "throughput goal: SDK at {:.0}% or more of the raw baseline on the pinned layouts: {verdict}",
        100.0 * GOAL
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        // `cargo bench -- --list` / `cargo test --benches` probe: nothing to list.
        return;
    }
    let cfg = match settings() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the tokio runtime: {e}");
            std::process::exit(2);
        }
    };
    // Calls are made from a task on the runtime's workers, as a daemon
    // makes them, not from the thread blocked in `block_on`.
    let job = cfg.clone();
    let outcome = rt.block_on(async move {
        tokio::spawn(run_all(job))
            .await
            .map_err(|e| format!("the bench task failed: {e}"))?
    });
    match outcome {
        Ok(out) => report(&cfg, &out),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}

//! Throughput, calibrated: four host ↔ plugin pairs over real pipes, so
//! that each figure says whose cost it is (`throughput/pairs.rs`). The
//! hosts are `kaged-host-sim` and a reference host without a runtime or a
//! parser (`throughput/raw_host.rs`); the plugins are the echo example (SDK)
//! and the raw baseline (std + serde_json, one line in, one line out). It
//! prints calls per second of each pair, one at a time and pipelined, the
//! ratios between them (the host-sim's share of the reference host against
//! the same plugin; the SDK's share of the raw plugin under each host), the
//! host-sim's own cost per call in µs, and the echo plugin's resident
//! memory.
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

#[path = "throughput/pairs.rs"]
mod pairs;
#[path = "throughput/placement.rs"]
mod placement;
#[path = "throughput/raw_host.rs"]
mod raw_host;

use std::path::{Path, PathBuf};

use kaged_host_core::probe::process_usage;
use kaged_host_core::testing::StagedPlugin;
use kaged_host_core::{CageMode, HostConfig, HostSim, PluginHandle};
use pairs::{Measured, Pair, Plugins, WINDOW};
use placement::Layout;
use raw_host::RawHost;

/// The goal: the SDK's throughput as a share of the baseline's (both
/// under the host-sim).
const GOAL: f64 = 0.80;

/// The goal for the host itself: `kaged-host-sim` ↔ raw plugin as a share
/// of the reference host ↔ raw plugin, judged on the `shared` layout.
const HOST_GOAL: f64 = 0.60;

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

/// The staged plugins and the four pairs' processes.
struct Bench {
    _staged: [StagedPlugin; 2],
    plugins: Plugins,
}

/// Stage the echo example and the raw baseline with their release
/// binaries, start each under the host-sim and under the reference host.
/// Uncaged everywhere: the table compares hosts and plugins, not the cage
/// (`benches/cage.rs` measures that).
async fn launch() -> Result<Bench, String> {
    let stage = |dir: &str, bin: &str| -> Result<StagedPlugin, String> {
        StagedPlugin::new(&workspace().join(dir), release_bin(bin)?).map_err(|e| e.to_string())
    };
    let sdk = stage("examples/echo", "echo")?;
    let raw = stage("examples/raw-baseline", "raw-baseline")?;
    let host = HostSim::new(HostConfig::default().with_cage(CageMode::Off));
    let plugins = Plugins {
        sim_raw: host.launch(raw.dir()).await.map_err(|e| e.to_string())?,
        sim_sdk: host.launch(sdk.dir()).await.map_err(|e| e.to_string())?,
        raw_raw: RawHost::spawn(raw.dir())?,
        raw_sdk: RawHost::spawn(sdk.dir())?,
    };
    Ok(Bench {
        _staged: [sdk, raw],
        plugins,
    })
}

/// Medians of one layout's rounds, for one mode.
struct Row {
    layout: Layout,
    mode: String,
    /// Per pair (in `Pair::ALL` order), every round's measurement.
    rounds: [Vec<Measured>; 4],
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

impl Row {
    fn rate(&self, p: Pair) -> f64 {
        median(self.rounds[p.index()].iter().map(|m| m.0).collect())
    }

    /// Median and range over the rounds of `a / b`.
    fn ratio(&self, a: Pair, b: Pair) -> (f64, f64, f64) {
        let r: Vec<f64> = self.rounds[a.index()]
            .iter()
            .zip(&self.rounds[b.index()])
            .map(|(x, y)| x.0 / y.0)
            .collect();
        let lo = r.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = r.iter().copied().fold(0.0, f64::max);
        (median(r), lo, hi)
    }

    /// The plugin's median CPU per call under the host-sim, µs.
    fn cpu(&self, p: Pair) -> Option<f64> {
        let v: Option<Vec<f64>> = self.rounds[p.index()].iter().map(|m| m.1).collect();
        v.filter(|c| !c.is_empty()).map(median)
    }

    /// The host-sim's own cost per call, µs: its time per call against the
    /// raw plugin less the reference host's.
    fn host_cost_us(&self) -> f64 {
        1e6 / self.rate(Pair::SimRaw) - 1e6 / self.rate(Pair::RawRaw)
    }
}

/// Pin the host and every plugin for `layout`; false when it cannot apply.
fn place(layout: Layout, allowed: &[usize], pids: &[Option<u32>]) -> Result<bool, String> {
    let Some((host, plugin)) = layout.cpus(allowed) else {
        return Ok(false);
    };
    placement::pin(None, &host)?;
    for pid in pids {
        placement::pin(Some(pid.ok_or("a plugin has no pid")?), &plugin)?;
    }
    Ok(true)
}

/// One layout: a warm-up, then `rounds` rounds of the four pairs, the
/// order rotating between rounds.
async fn measure(
    layout: Layout,
    b: &mut Bench,
    n: usize,
    rounds: usize,
) -> Result<[Row; 2], String> {
    for pair in Pair::ALL {
        for pipelined in [false, true] {
            pairs::measure(&mut b.plugins, pair, pipelined, n / 10 + 1).await?;
        }
    }
    let mut seq: [Vec<Measured>; 4] = Default::default();
    let mut pipe: [Vec<Measured>; 4] = Default::default();
    for round in 0..rounds {
        let order: Vec<Pair> = (0..4).map(|i| Pair::ALL[(i + round) % 4]).collect();
        for &pair in &order {
            seq[pair.index()].push(pairs::measure(&mut b.plugins, pair, false, n).await?);
        }
        for &pair in &order {
            pipe[pair.index()].push(pairs::measure(&mut b.plugins, pair, true, n).await?);
        }
    }
    Ok([
        Row {
            layout,
            mode: "one at a time".into(),
            rounds: seq,
        },
        Row {
            layout,
            mode: format!("pipelined x{WINDOW}"),
            rounds: pipe,
        },
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
    let mut b = launch().await?;
    let pids = b.plugins.pids();
    let (mut rows, mut skipped) = (vec![], vec![]);
    for &layout in &cfg.layouts {
        if place(layout, &allowed, &pids)? {
            rows.extend(measure(layout, &mut b, cfg.n, cfg.rounds).await?);
        } else {
            skipped.push(layout);
        }
    }
    // Leave the process unpinned, as it started.
    place(Layout::Free, &allowed, &pids)?;
    let rss = |s: &PluginHandle| s.plugin_pid().and_then(process_usage).map(|u| u.rss_kib);
    let rss_kib = (rss(&b.plugins.sim_sdk), rss(&b.plugins.sim_raw));
    let Plugins {
        sim_raw,
        sim_sdk,
        raw_raw,
        raw_sdk,
    } = b.plugins;
    sim_raw.shutdown().await;
    sim_sdk.shutdown().await;
    tokio::task::block_in_place(|| {
        raw_raw.shutdown();
        raw_sdk.shutdown();
    });
    Ok(Outcome {
        rows,
        skipped,
        rss_kib,
    })
}

fn pct((m, lo, hi): (f64, f64, f64)) -> String {
    format!("{:.0}% ({:.0}..{:.0}%)", 100.0 * m, 100.0 * lo, 100.0 * hi)
}

fn report(cfg: &Settings, out: &Outcome) {
    println!(
        "kaged plugin throughput: {} echo.say calls per measurement over real pipes, uncaged, median of {} rounds",
        cfg.n, cfg.rounds
    );
    println!("  hosts:   raw = a blocking one-thread loop without a runtime or parser (the reference); sim = kaged-host-sim");
    println!("  plugins: raw = the raw baseline (std + serde_json); SDK = the echo example");
    for l in &cfg.layouts {
        println!("  {:<7} {}", l.name(), l.describe());
    }
    let heads: Vec<String> = Pair::ALL
        .iter()
        .map(|p| format!("{:>9}", p.name()))
        .collect();
    println!("\n{:<7} {:<15} {}", "layout", "mode", heads.join(" "));
    for r in &out.rows {
        let rates: Vec<String> = Pair::ALL
            .iter()
            .map(|p| format!("{:>7.0}/s", r.rate(*p)))
            .collect();
        println!("{:<7} {:<15} {}", r.layout.name(), r.mode, rates.join(" "));
    }
    println!(
        "\n{:<7} {:<15} {:<19} {:<19} {:<19} {:>10}   plugin CPU/call under sim (SDK / raw)",
        "layout",
        "mode",
        "host: sim/raw host",
        "SDK: SDK/raw (raw)",
        "SDK: SDK/raw (sim)",
        "host µs/call"
    );
    let us = |c: Option<f64>| c.map_or_else(|| "?".to_string(), |c| format!("{c:.1} µs"));
    for r in &out.rows {
        println!(
            "{:<7} {:<15} {:<19} {:<19} {:<19} {:>10.1}   {} / {}",
            r.layout.name(),
            r.mode,
            pct(r.ratio(Pair::SimRaw, Pair::RawRaw)),
            pct(r.ratio(Pair::RawSdk, Pair::RawRaw)),
            pct(r.ratio(Pair::SimSdk, Pair::SimRaw)),
            r.host_cost_us(),
            us(r.cpu(Pair::SimSdk)),
            us(r.cpu(Pair::SimRaw)),
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
    println!(
        "SDK goal: SDK at {:.0}% or more of the raw baseline (under the host-sim) on the pinned layouts: {}",
        100.0 * GOAL,
        verdict(&out.rows, |l| l.judged(), (Pair::SimSdk, Pair::SimRaw), GOAL)
    );
    println!(
        "host goal: kaged-host-sim ↔ raw at {:.0}% or more of the reference host ↔ raw on the shared layout: {}",
        100.0 * HOST_GOAL,
        verdict(&out.rows, |l| l == Layout::Shared, (Pair::SimRaw, Pair::RawRaw), HOST_GOAL)
    );
}

/// A goal's verdict over the rows of the layouts `judged` picks: `(a, b)`
/// must reach `goal` (median of rounds) in each.
fn verdict(
    rows: &[Row],
    judged: impl Fn(Layout) -> bool,
    (a, b): (Pair, Pair),
    goal: f64,
) -> String {
    let rows: Vec<&Row> = rows.iter().filter(|r| judged(r.layout)).collect();
    let misses: Vec<String> = rows
        .iter()
        .filter(|r| r.ratio(a, b).0 < goal)
        .map(|r| format!("{} {}", r.layout.name(), r.mode))
        .collect();
    match (rows.is_empty(), misses.is_empty()) {
        (true, _) => "not judged (no such layout was measured)".to_string(),
        (false, true) => "met".to_string(),
        (false, false) => format!("NOT met: {}", misses.join(", ")),
    }
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

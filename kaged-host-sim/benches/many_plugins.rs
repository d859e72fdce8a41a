//! Many plugins under one host: N supervised plugins (N = 1, 10, 50) of two
//! kinds, the echo example (Rust, SDK) and a Python stdlib plugin, started
//! through the supervisor path as the daemon starts them.
//!
//! ```sh
//! cargo build --release -p kaged-example-echo
//! cargo bench -p kaged-host-sim --bench many_plugins
//! ```
//!
//! Prints, per kind and N: the wall time until every plugin is `running`;
//! the plugin-side start-up (spawn → `initialize` answered, from the audit
//! log: process start and interpreter load the host cannot control), as
//! median and maximum; the host's own RSS; the host's CPU per health-check
//! round (every plugin pinged once; the interval is shortened to 250 ms for
//! the measurement); and the latency of `ping` calls spread over all N
//! plugins while the health checks run. Plugins run caged when bwrap works
//! here (`--cage auto`), as the daemon runs them.
//!
//! Environment: `KAGED_BENCH_PLUGINS` (comma-separated N, default
//! `1,10,50`), `KAGED_BENCH_KINDS` (`echo,python`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use kaged_host_core::probe::{process_usage, TreeUsage};
use kaged_host_core::testing::StagedPlugin;
use kaged_host_core::{
    AuditEvent, AuditLog, HostConfig, HostSim, PluginState, Supervisor, Timeouts,
};

/// The health-check interval while the host's CPU per round is measured.
const HEALTH_INTERVAL: Duration = Duration::from_millis(250);
/// How long the health checks run for that measurement.
const HEALTH_WINDOW: Duration = Duration::from_secs(2);
/// `ping` calls spread over the plugins for the latency measurement.
const PINGS: usize = 500;

const PYTHON_PLUGIN: &str = r#"#!/usr/bin/env python3
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    method, id_ = msg.get("method"), msg.get("id")
    if method == "shutdown":
        sys.exit(0)
    if id_ is None or method is None:
        continue
    if method == "initialize":
        result = {"name": "pystd", "version": "1.0.0", "api_version": 1, "methods": [],
                  "notifications": [], "capabilities_used": []}
    elif method == "ping":
        result = {"status": "ok"}
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": "Method not found"}}) + "\n")
        sys.stdout.flush()
        continue
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id_, "result": result}) + "\n")
    sys.stdout.flush()
"#;

const PYTHON_MANIFEST: &str = "name: pystd\nversion: 1.0.0\nkaged_api: 1\n\
    description: A Python stdlib plugin for the many-plugins bench.\n\
    command: [./plugin.py]\ncapabilities: []\nshutdown_timeout_sec: 2\n";

fn health_every_250ms(t: Timeouts) -> Timeouts {
    Timeouts {
        health_interval: HEALTH_INTERVAL,
        ..t
    }
}

fn release_bin(name: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?.parent()?.join(name);
    bin.is_file().then_some(bin)
}

/// This process (the host), not its plugins.
fn host_usage() -> TreeUsage {
    process_usage(std::process::id()).unwrap_or_default()
}

fn pct(sorted: &[Duration], q: f64) -> Duration {
    sorted
        .get(((sorted.len() as f64 * q).ceil() as usize).saturating_sub(1))
        .copied()
        .unwrap_or_default()
}

/// Spawn → initialized of each plugin, from its own audit log (the
/// plugins share one name, so one log could not pair them), sorted.
fn startups(audits: &[AuditLog]) -> Vec<Duration> {
    let first = |a: &AuditLog, event| a.of(event).first().map(|r| r.ts);
    let mut out: Vec<Duration> = audits
        .iter()
        .filter_map(|a| {
            let (spawned, init) = (
                first(a, AuditEvent::Spawned)?,
                first(a, AuditEvent::Initialized)?,
            );
            init.duration_since(spawned).ok()
        })
        .collect();
    out.sort();
    out
}

async fn measure(kind: &str, dir: &Path, n: usize) {
    let audits: Vec<AuditLog> = (0..n).map(|_| AuditLog::memory()).collect();
    let sups: Vec<Supervisor> = audits
        .iter()
        .map(|audit| {
            let host = HostSim::new(
                HostConfig::default()
                    .with_audit(audit.clone())
                    .with_adjust_timeouts(Some(health_every_250ms)),
            );
            Supervisor::new(host, dir)
        })
        .collect();
    let rss_before = host_usage().rss_kib;
    let t0 = Instant::now();
    let started = join_all(sups.iter().map(Supervisor::start)).await;
    if let Some(Err(e)) = started.into_iter().find(Result::is_err) {
        println!("{kind:>6} N={n:<3} cannot start: {e}");
        return;
    }
    for s in &sups {
        let mut rx = s.subscribe();
        let _ = tokio::time::timeout(
            Duration::from_secs(60),
            rx.wait_for(|st| matches!(st, PluginState::Running | PluginState::Failed)),
        )
        .await;
    }
    let all_up = t0.elapsed();
    let running = sups
        .iter()
        .filter(|s| s.state() == PluginState::Running)
        .count();
    let ups = startups(&audits);
    let rss = host_usage().rss_kib;
    // Host CPU per health-check round.
    let cpu0 = host_usage().cpu;
    tokio::time::sleep(HEALTH_WINDOW).await;
    let rounds = (HEALTH_WINDOW.as_secs_f64() / HEALTH_INTERVAL.as_secs_f64()).max(1.0);
    let cpu_round = (host_usage().cpu.saturating_sub(cpu0)).as_secs_f64() * 1e6 / rounds;
    // Ping latency over all N while the health checks run.
    let sessions: Vec<_> = sups.iter().filter_map(Supervisor::current).collect();
    let mut lat = Vec::with_capacity(PINGS);
    for i in 0..PINGS {
        if let Some(s) = sessions.get(i % sessions.len().max(1)) {
            let t = Instant::now();
            let _ = s.call("ping", None, None).await;
            lat.push(t.elapsed());
        }
    }
    lat.sort();
    join_all(sups.iter().map(Supervisor::stop)).await;
    println!(
        "{kind:>6} N={n:<3} running {running:>2}/{n:<2}  all running in {:>7.1} ms  plugin start-up median {:>6.1} ms max {:>6.1} ms  host RSS {:>6} KiB (+{} KiB)  host CPU/health round {:>7.0} µs  ping p50 {:>5} µs p99 {:>6} µs",
        all_up.as_secs_f64() * 1e3,
        pct(&ups, 0.5).as_secs_f64() * 1e3,
        ups.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
        rss,
        rss.saturating_sub(rss_before),
        cpu_round,
        pct(&lat, 0.5).as_micros(),
        pct(&lat, 0.99).as_micros(),
    );
}

fn main() {
    let ns: Vec<usize> = std::env::var("KAGED_BENCH_PLUGINS")
        .unwrap_or_else(|_| "1,10,50".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let kinds = std::env::var("KAGED_BENCH_KINDS").unwrap_or_else(|_| "echo,python".into());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let tmp = tempfile::tempdir().expect("tempdir");
    let py = tmp.path().join("pystd");
    std::fs::create_dir_all(&py).expect("mkdir");
    std::fs::write(py.join("kaged-plugin.yaml"), PYTHON_MANIFEST).expect("manifest");
    std::fs::write(py.join("plugin.py"), PYTHON_PLUGIN).expect("plugin");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(py.join("plugin.py"), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
    }
    let echo = release_bin("echo").and_then(|bin| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/echo");
        StagedPlugin::new(&src, bin).ok()
    });
    println!("many plugins under one host (supervisor path, cage auto; health every 250 ms while measured)");
    rt.block_on(async {
        for kind in kinds.split(',') {
            let dir = match kind.trim() {
                "echo" => match &echo {
                    Some(s) => s.dir().to_path_buf(),
                    None => {
                        println!("  echo: skipped: run `cargo build --release -p kaged-example-echo` first");
                        continue;
                    }
                },
                "python" => py.clone(),
                other => {
                    println!("  {other}: unknown kind (echo, python)");
                    continue;
                }
            };
            for &n in &ns {
                measure(kind.trim(), &dir, n).await;
            }
        }
    });
}

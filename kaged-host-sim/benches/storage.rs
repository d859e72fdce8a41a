//! The cost of brokered storage (plugin-host.md § "Plugin-scoped storage").
//!
//! 1. A storage round trip through the whole stack — host calls a plugin
//!    method, the plugin (the SDK runtime, served in-process over a pipe)
//!    sends `kaged.storage.query`, the host's `BrokerHandler` rewrites,
//!    authorizes and runs it, the answer goes back to the plugin and the
//!    plugin answers the host — next to the same statement on rusqlite
//!    directly, printed as a ratio; the broker alone (`StorageBroker::handle`)
//!    in between. When `target/release/oh-my-pi` exists, also `presets.list`
//!    of the real oh-my-pi subprocess (two storage queries per call).
//! 2. The rewriting cost per statement: cold (`rewrite()`, parse + walk +
//!    reprint) and cached (`RewriteCache` hit).
//!
//! ```sh
//! cargo bench -p kaged-host-sim --bench storage
//! ```
//!
//! Each measurement runs for `KAGED_BENCH_SECS` seconds (default 0.3)
//! after a short warm-up, so the default run takes a few seconds.

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kaged_host_core::testing::StagedPlugin;
use kaged_host_core::{HostConfig, HostSim, PluginHandle};
use kaged_host_sim::ConnectPlugin;
use kaged_host_storage::{rewrite, RewriteCache, StorageClient};
use kaged_host_storage::{BrokerHandler, StorageBroker};
use kaged_plugin_protocol::StorageMethod;
use kaged_plugin_sdk::{sql_params, Call, Plugin, PluginError};
use serde_json::{json, Value};

const PLUGIN: &str = "bench";
const PREFIX: &str = "plugin_bench_";
const ROWS: i64 = 1000;
const LOOKUP: &str = "SELECT name, version FROM presets WHERE name = ?";

/// Representative statements for the rewriting cost.
const STATEMENTS: [(&str, &str); 4] = [
    ("point select", LOOKUP),
    (
        "upsert",
        "INSERT INTO presets (name, version) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET version = excluded.version",
    ),
    (
        "CTE + join",
        "WITH recent AS (SELECT name FROM history ORDER BY revision DESC LIMIT 10) \
         SELECT p.name, p.version FROM presets p JOIN recent r ON r.name = p.name WHERE p.version LIKE ?",
    ),
    (
        "trigger",
        "CREATE TRIGGER IF NOT EXISTS presets_log AFTER UPDATE ON presets BEGIN \
         INSERT INTO history (name, action) VALUES (new.name, 'updated'); END",
    ),
];

fn budget() -> Duration {
    let secs = std::env::var("KAGED_BENCH_SECS")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .unwrap_or(0.3);
    Duration::from_secs_f64(secs)
}

/// Run `f` for the budget (after a tenth of it as warm-up); mean seconds per run.
fn per_op(mut f: impl FnMut(u64)) -> f64 {
    let warm = budget() / 10;
    let start = Instant::now();
    let mut i = 0;
    while start.elapsed() < warm {
        f(i);
        i += 1;
    }
    let (start, mut n) = (Instant::now(), 0u64);
    while start.elapsed() < budget() {
        f(n);
        n += 1;
    }
    start.elapsed().as_secs_f64() / n as f64
}

/// The async version of [`per_op`].
async fn per_call<F, Fut>(f: F) -> f64
where
    F: Fn(u64) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let warm = budget() / 10;
    let start = Instant::now();
    let mut i = 0;
    while start.elapsed() < warm {
        f(i).await;
        i += 1;
    }
    let (start, mut n) = (Instant::now(), 0u64);
    while start.elapsed() < budget() {
        f(n).await;
        n += 1;
    }
    start.elapsed().as_secs_f64() / n as f64
}

fn name(i: u64) -> String {
    format!("preset-{}", (i as i64 * 7919) % ROWS)
}

fn fail(what: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("error: {what}: {e}");
    std::process::exit(2)
}

/// The benchmark plugin: `bench.get` runs [`LOOKUP`] once.
fn plugin() -> Plugin {
    Plugin::builder(PLUGIN)
        .version("1.0.0")
        .description("storage benchmark")
        .command(["./in-process"])
        .capability_used("kaged:storage:read")
        .capability_used("kaged:storage:write")
        .method("bench.get", |p: Value, c: Call| async move {
            let name = p["name"].as_str().unwrap_or_default().to_owned();
            let r = c.host.storage().query(LOOKUP, sql_params![name]).await?;
            Ok::<_, PluginError>(json!({"rows": r.rows.len()}))
        })
        .build()
        .unwrap_or_else(|e| fail("bench plugin", e))
}

fn seed(broker: &StorageBroker) {
    let client = StorageClient::new(PLUGIN, true, true);
    let run = |sql: &str, params: Value| {
        broker
            .handle(
                &client,
                StorageMethod::Exec,
                Some(json!({"sql": sql, "params": params})),
            )
            .unwrap_or_else(|e| fail("seeding", e.reason));
    };
    run(
        "CREATE TABLE presets (name TEXT PRIMARY KEY, version TEXT NOT NULL)",
        json!([]),
    );
    for i in 0..ROWS {
        run(
            "INSERT INTO presets (name, version) VALUES (?, ?)",
            json!([format!("preset-{i}"), "1.0.0"]),
        );
    }
}

async fn connect(host: &HostSim) -> PluginHandle {
    host.connect_plugin(plugin())
        .await
        .unwrap_or_else(|e| fail("connecting the bench plugin", e))
}

/// `presets.list` of the release oh-my-pi subprocess, if it is built.
async fn oh_my_pi(broker_dir: &Path) -> Option<f64> {
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?.parent()?.join("oh-my-pi");
    if !bin.is_file() {
        return None;
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/oh-my-pi");
    let staged = StagedPlugin::new(&src, &bin).ok()?;
    let broker = StorageBroker::open(&broker_dir.join("omp.sqlite3")).ok()?;
    let host =
        HostSim::new(HostConfig::default().with_storage(Arc::new(BrokerHandler::new(broker))));
    let s = host.launch(staged.dir()).await.ok()?;
    let spec = json!({"version": "1.0.0", "description": "bench"});
    s.call(
        "preset.install",
        Some(json!({"name": "web-dev", "preset": spec})),
        None,
    )
    .await
    .ok()?;
    let t = per_call(|_| async {
        if let Err(e) = s.call("presets.list", Some(json!({})), None).await {
            fail("presets.list", e);
        }
    })
    .await;
    s.shutdown().await;
    Some(t)
}

fn us(secs: f64) -> String {
    format!("{:>9.2} µs", secs * 1e6)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` probe: nothing to list.
    }
    let dir = tempfile::tempdir().unwrap_or_else(|e| fail("tempdir", e));
    let broker = StorageBroker::open(&dir.path().join("kaged.sqlite3"))
        .unwrap_or_else(|e| fail("broker", e));
    seed(&broker);
    let broker = Arc::new(broker);

    // Direct rusqlite on the same file, same table, same statement.
    let conn = rusqlite::Connection::open(dir.path().join("kaged.sqlite3"))
        .unwrap_or_else(|e| fail("open", e));
    let direct_sql = LOOKUP.replace("presets", &format!("{PREFIX}presets"));
    let direct = per_op(|i| {
        let mut stmt = conn
            .prepare_cached(&direct_sql)
            .unwrap_or_else(|e| fail("prepare", e));
        let row: Option<(String, String)> = stmt
            .query_row([name(i)], |r| Ok((r.get(0)?, r.get(1)?)))
            .ok();
        black_box(row);
    });
    let client = StorageClient::new(PLUGIN, true, true);
    let brokered = per_op(|i| {
        let params = json!({"sql": LOOKUP, "params": [name(i)]});
        let r = broker.handle(&client, StorageMethod::Query, Some(params));
        black_box(r.unwrap_or_else(|e| fail("broker query", e.reason)));
    });

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| fail("tokio runtime", e));
    let (stack, omp) = rt.block_on(async {
        let broker = StorageBroker::open(&dir.path().join("kaged.sqlite3"))
            .unwrap_or_else(|e| fail("broker", e));
        let host =
            HostSim::new(HostConfig::default().with_storage(Arc::new(BrokerHandler::new(broker))));
        let s = connect(&host).await;
        let stack = per_call(|i| {
            let s = &s;
            async move {
                match s
                    .call("bench.get", Some(json!({"name": name(i)})), None)
                    .await
                {
                    Ok(v) if v["rows"] == 1 => {}
                    other => fail("bench.get", format!("{other:?}")),
                }
            }
        })
        .await;
        s.shutdown().await;
        (stack, oh_my_pi(dir.path()).await)
    });

    println!("brokered storage: `{LOOKUP}` on a {ROWS}-row table (primary-key lookup)");
    println!("{:<52} {:>12}  {:>8}", "", "per call", "vs direct");
    println!(
        "{:<52} {}  {:>8}",
        "rusqlite directly (prepare_cached)",
        us(direct),
        "1.0x"
    );
    println!(
        "{:<52} {}  {:>7.1}x",
        "StorageBroker::handle (rewrite cache, authorizer)",
        us(brokered),
        brokered / direct
    );
    println!(
        "{:<52} {}  {:>7.1}x",
        "whole stack: host -> SDK plugin -> broker -> answer",
        us(stack),
        stack / direct
    );
    match omp {
        Some(t) => println!(
            "{:<52} {}  {:>7.1}x",
            "oh-my-pi subprocess presets.list (2 queries)",
            us(t),
            t / direct
        ),
        None => println!(
            "oh-my-pi subprocess: skipped (cargo build --release -p kaged-example-oh-my-pi)"
        ),
    }

    println!();
    println!("rewriting cost per statement");
    println!("{:<16} {:>12} {:>12}", "", "cold", "cached");
    let cache = RewriteCache::new(1024);
    for (label, sql) in STATEMENTS {
        if let Err(e) = rewrite(PREFIX, sql) {
            fail(label, format!("{e:?}"));
        }
        let cold = per_op(|_| {
            black_box(rewrite(black_box(PREFIX), black_box(sql)).ok());
        });
        let cached = per_op(|_| {
            black_box(cache.get_or_rewrite(PREFIX, sql).ok());
        });
        println!("{label:<16} {} {}", us(cold), us(cached));
    }
    println!(
        "(budget {:?} per measurement; KAGED_BENCH_SECS to change)",
        budget()
    );
}

//! The four host ↔ plugin pairs of the calibrated table, and measuring one.
//!
//! | pair | what it is |
//! |---|---|
//! | raw ↔ raw | the reference host and the raw baseline plugin: the limit |
//! | raw ↔ SDK | the reference host and the echo example: the SDK's own cost |
//! | sim ↔ raw | `kaged-host-sim` and the raw baseline: the host's own cost |
//! | sim ↔ SDK | `kaged-host-sim` and the echo example: what a user measures |

use std::time::Instant;

use kaged_host_core::probe::tree_usage;
use kaged_host_core::PluginHandle;
use kaged_plugin_protocol::PluginCallContext;
use serde_json::json;

use super::raw_host::RawHost;

/// Calls in flight at once in the pipelined measurement.
pub const WINDOW: usize = 64;

/// A host ↔ plugin pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pair {
    RawRaw,
    RawSdk,
    SimRaw,
    SimSdk,
}

impl Pair {
    /// Every pair, in the table's order.
    pub const ALL: [Pair; 4] = [Pair::RawRaw, Pair::RawSdk, Pair::SimRaw, Pair::SimSdk];

    /// The column heading.
    pub fn name(self) -> &'static str {
        match self {
            Pair::RawRaw => "raw↔raw",
            Pair::RawSdk => "raw↔SDK",
            Pair::SimRaw => "sim↔raw",
            Pair::SimSdk => "sim↔SDK",
        }
    }

    /// Its index in [`Pair::ALL`].
    pub fn index(self) -> usize {
        Pair::ALL.iter().position(|p| *p == self).unwrap_or(0)
    }
}

/// One measurement: calls per second and, for the host-sim pairs, the
/// plugin's CPU per call (µs).
pub type Measured = (f64, Option<f64>);

/// The running plugins: two under the host-sim, two under the reference
/// host (each pair has its own process, so no pair warms another's).
pub struct Plugins {
    pub sim_raw: PluginHandle,
    pub sim_sdk: PluginHandle,
    pub raw_raw: RawHost,
    pub raw_sdk: RawHost,
}

impl Plugins {
    /// Every plugin process's pid.
    pub fn pids(&self) -> Vec<Option<u32>> {
        vec![
            self.sim_raw.pid(),
            self.sim_sdk.pid(),
            Some(self.raw_raw.pid()),
            Some(self.raw_sdk.pid()),
        ]
    }
}

fn plugin_cpu(s: &PluginHandle) -> Option<std::time::Duration> {
    s.pid().and_then(tree_usage).map(|u| u.cpu)
}

fn measured(
    s: &PluginHandle,
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

fn ctx() -> PluginCallContext {
    PluginCallContext::agent("bench", "primary", "ses_bench", "req_bench")
}

async fn sim_one_at_a_time(s: &PluginHandle, n: usize) -> Result<Measured, String> {
    let ctx = ctx();
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

async fn sim_pipelined(s: &PluginHandle, n: usize) -> Result<Measured, String> {
    let ctx = ctx();
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

/// Measure `pair`, one at a time or pipelined, `n` calls. The reference
/// host blocks its thread, as it would in C: it runs on a blocking-pool
/// thread (pinned with the rest of the process).
pub async fn measure(
    plugins: &mut Plugins,
    pair: Pair,
    pipelined: bool,
    n: usize,
) -> Result<Measured, String> {
    let raw = |host: &mut RawHost| -> Result<Measured, String> {
        let rate = if pipelined {
            host.pipelined(n, WINDOW)?
        } else {
            host.one_at_a_time(n)?
        };
        Ok((rate, None))
    };
    match (pair, pipelined) {
        (Pair::SimRaw, false) => sim_one_at_a_time(&plugins.sim_raw, n).await,
        (Pair::SimRaw, true) => sim_pipelined(&plugins.sim_raw, n).await,
        (Pair::SimSdk, false) => sim_one_at_a_time(&plugins.sim_sdk, n).await,
        (Pair::SimSdk, true) => sim_pipelined(&plugins.sim_sdk, n).await,
        (Pair::RawRaw, _) => tokio::task::block_in_place(|| raw(&mut plugins.raw_raw)),
        (Pair::RawSdk, _) => tokio::task::block_in_place(|| raw(&mut plugins.raw_sdk)),
    }
}

//! Benchmarking any plugin (`kaged-host-sim bench DIR`): calls per second
//! one at a time and pipelined, latency percentiles, and the plugin's CPU
//! per call and resident memory, read from `/proc` for its whole process
//! tree (the cage included). A plugin author's regression check, not a
//! test: nothing here asserts a speed.
//!
//! ```no_run
//! # async fn demo(session: &kaged_host_core::PluginHandle) {
//! use kaged_host_sim::bench::{bench, BenchOptions};
//! let report = bench(session, &BenchOptions::default()).await;
//! println!("{}", report.to_json());
//! # }
//! ```

pub mod broker;
pub mod reference;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::stream::{self, StreamExt};
use kaged_plugin_protocol::PluginCallContext;
use serde::Serialize;
use serde_json::Value;

use kaged_host_core::probe::tree_usage;
use kaged_host_core::progress::Progress;
use kaged_host_core::PluginHandle;

use broker::BrokerStats;

/// What to call, how often.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// The method (default `ping`, which every plugin answers).
    pub method: String,
    /// Its params.
    pub params: Option<Value>,
    /// Its call context (a tool needs an agent's).
    pub context: Option<PluginCallContext>,
    /// Calls per phase (default 2000).
    pub calls: usize,
    /// Calls in flight in the pipelined phase (default 16).
    pub concurrency: usize,
    /// Calls made first and not measured (default 100).
    pub warmup: usize,
    /// The host's request handler's counts, when it is timed
    /// ([`broker::TimedHandler`]): each phase then says how much of a call
    /// was the storage broker's.
    pub broker: Option<Arc<BrokerStats>>,
    /// Counts each call made (hidden by default; the command line draws
    /// it on a terminal).
    pub progress: Progress,
}

impl Default for BenchOptions {
    fn default() -> BenchOptions {
        BenchOptions {
            method: "ping".into(),
            params: None,
            context: None,
            calls: 2000,
            concurrency: 16,
            warmup: 100,
            broker: None,
            progress: Progress::hidden(),
        }
    }
}

/// One phase's numbers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Phase {
    /// Calls in flight at once.
    pub concurrency: usize,
    /// Calls made.
    pub calls: usize,
    /// Calls answered with an error (or not answered).
    pub errors: usize,
    /// Wall time of the phase, in seconds.
    pub seconds: f64,
    /// Calls answered without error, per second (failed calls do not
    /// count).
    pub calls_per_sec: f64,
    /// Latency percentiles and maximum, in microseconds.
    pub p50_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// Maximum.
    pub max_us: u64,
    /// The plugin's CPU time (every thread of its process tree on CPU,
    /// user and system) per call, in microseconds; `None` without `/proc`.
    pub plugin_cpu_us_per_call: Option<f64>,
    /// The plugin's requests to the host (storage) per call, when the
    /// host's handler was timed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_requests_per_call: Option<f64>,
    /// Microseconds per call the host spent answering them (the storage
    /// broker's SQLite): the host's time, not the plugin's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub broker_us_per_call: Option<f64>,
}

/// The result of a bench.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchReport {
    /// The plugin.
    pub plugin: String,
    /// The method called.
    pub method: String,
    /// Whether the plugin ran in bwrap.
    pub caged: bool,
    /// Calls one after the other.
    pub one_at_a_time: Phase,
    /// Calls `concurrency` at a time.
    pub pipelined: Phase,
    /// The plugin's resident memory after the bench, in KiB (whole
    /// process tree); `None` without `/proc`.
    pub plugin_rss_kib: Option<u64>,
    /// The host's own cost, measured against the reference plugin
    /// ([`reference`](mod@reference)) under the same host and cage; `None` when not
    /// calibrated.
    pub host: Option<HostCost>,
}

/// The host's own cost per call, and the plugin's share of each call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostCost {
    /// Calls per second against the reference plugin, one at a time.
    pub reference_calls_per_sec: f64,
    /// The same, pipelined.
    pub reference_pipelined_calls_per_sec: f64,
    /// Microseconds of each call (one at a time) that are the host's and
    /// the pipes': the reference plugin's time per call.
    pub host_us_per_call: f64,
    /// Microseconds of each call (one at a time) the host spent answering
    /// the plugin's storage requests (0 when it made none).
    pub broker_us_per_call: f64,
    /// Microseconds of each call that are the plugin's: its time per call
    /// less the host's and the broker's. Below 0 when the plugin answers
    /// faster than the reference within the noise of the measure (shown as
    /// it is).
    pub plugin_us_per_call: f64,
}

impl HostCost {
    /// Compare the reference plugin's phases with the measured plugin's.
    pub fn new(reference: &BenchReport, plugin: &BenchReport) -> HostCost {
        let per_call = |r: f64| if r > 0.0 { 1e6 / r } else { 0.0 };
        let host = per_call(reference.one_at_a_time.calls_per_sec);
        let broker = plugin.one_at_a_time.broker_us_per_call.unwrap_or(0.0);
        HostCost {
            reference_calls_per_sec: reference.one_at_a_time.calls_per_sec,
            reference_pipelined_calls_per_sec: reference.pipelined.calls_per_sec,
            host_us_per_call: host,
            broker_us_per_call: broker,
            plugin_us_per_call: per_call(plugin.one_at_a_time.calls_per_sec) - host - broker,
        }
    }
}

impl BenchReport {
    /// The report as one JSON object (`--json`).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The human lines of `kaged-host-sim bench`.
    pub fn render(&self) -> String {
        let phase = |name: &str, p: &Phase| {
            let cpu = p
                .plugin_cpu_us_per_call
                .map_or_else(String::new, |c| format!(", plugin CPU {c:.1} µs/call"));
            let errors = if p.errors > 0 {
                format!(", {} ERRORS", p.errors)
            } else {
                String::new()
            };
            format!(
                "  {name}: {:.0} calls/s, p50 {} µs, p99 {} µs, max {} µs{cpu}{errors}\n",
                p.calls_per_sec, p.p50_us, p.p99_us, p.max_us
            )
        };
        let mut out = format!(
            "bench {}: {} × {} per phase\n",
            self.plugin, self.method, self.one_at_a_time.calls
        );
        out.push_str(&phase("one at a time", &self.one_at_a_time));
        out.push_str(&phase(
            &format!("pipelined ({} in flight)", self.pipelined.concurrency),
            &self.pipelined,
        ));
        if let Some(rss) = self.plugin_rss_kib {
            out.push_str(&format!("  plugin RSS: {rss} KiB\n"));
        }
        let p = &self.one_at_a_time;
        let broker = match (p.host_requests_per_call, p.broker_us_per_call) {
            (Some(n), Some(us)) if n > 0.0 => format!(
                "; the storage broker: {us:.1} µs per call ({n:.1} storage requests per call, the host's SQLite)"
            ),
            _ => String::new(),
        };
        match &self.host {
            Some(h) => out.push_str(&format!(
                "  host's own cost: {:.1} µs per call ({:.0} calls/s one at a time, {:.0} pipelined, against a reference plugin that answers at once, same host and cage){broker}; the plugin's share: {:.1} µs per call\n",
                h.host_us_per_call,
                h.reference_calls_per_sec,
                h.reference_pipelined_calls_per_sec,
                h.plugin_us_per_call
            )),
            None => out.push_str("  host's own cost: not calibrated\n"),
        }
        out
    }
}

async fn one(session: &PluginHandle, o: &BenchOptions) -> (Duration, bool) {
    let start = Instant::now();
    let ok = session
        .call(&o.method, o.params.clone(), o.context.clone())
        .await
        .is_ok();
    let took = start.elapsed();
    o.progress.inc(1);
    (took, ok)
}

async fn phase(session: &PluginHandle, o: &BenchOptions, concurrency: usize) -> Phase {
    let pid = session.pid();
    let before = pid.and_then(tree_usage);
    let broker_before = o.broker.as_ref().map(|b| b.snapshot());
    let start = Instant::now();
    let results: Vec<(Duration, bool)> = stream::iter(0..o.calls)
        .map(|_| one(session, o))
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    let seconds = start.elapsed().as_secs_f64();
    let after = pid.and_then(tree_usage);
    let broker = match (&o.broker, broker_before) {
        (Some(b), Some(before)) if !results.is_empty() => Some(b.snapshot().since(before)),
        _ => None,
    };
    let per = |x: f64| x / results.len().max(1) as f64;
    let mut us: Vec<u64> = results.iter().map(|(d, _)| d.as_micros() as u64).collect();
    us.sort_unstable();
    let at = |q: f64| {
        us.get(((us.len() as f64 * q).ceil() as usize).saturating_sub(1))
            .copied()
            .unwrap_or(0)
    };
    let cpu = match (before, after) {
        (Some(b), Some(a)) if !results.is_empty() => {
            Some(a.cpu.saturating_sub(b.cpu).as_secs_f64() * 1e6 / results.len() as f64)
        }
        _ => None,
    };
    let answered = results.iter().filter(|(_, ok)| *ok).count();
    Phase {
        concurrency: concurrency.max(1),
        calls: results.len(),
        errors: results.len() - answered,
        seconds,
        calls_per_sec: if seconds > 0.0 {
            answered as f64 / seconds
        } else {
            0.0
        },
        p50_us: at(0.50),
        p99_us: at(0.99),
        max_us: us.last().copied().unwrap_or(0),
        plugin_cpu_us_per_call: cpu,
        host_requests_per_call: broker.map(|b| per(b.requests as f64)),
        broker_us_per_call: broker.map(|b| per(b.busy.as_secs_f64() * 1e6)),
    }
}

/// Warm up, then call one at a time and pipelined.
pub async fn bench(session: &PluginHandle, o: &BenchOptions) -> BenchReport {
    let said = |what: &str| {
        o.progress
            .set_message(format!("{}: {what}", session.name()))
    };
    said("warm-up");
    for _ in 0..o.warmup {
        let _ = one(session, o).await;
    }
    said("one at a time");
    let one_at_a_time = phase(session, o, 1).await;
    said(&format!("pipelined, {} in flight", o.concurrency));
    let pipelined = phase(session, o, o.concurrency).await;
    BenchReport {
        plugin: session.name().to_string(),
        method: o.method.clone(),
        caged: session.caged(),
        one_at_a_time,
        pipelined,
        plugin_rss_kib: session.pid().and_then(tree_usage).map(|u| u.rss_kib),
        host: None,
    }
}

//! The memory soak: one operation called many times on one process, its
//! resident memory sampled ten times, the slope fitted by least squares.
//! A call that fails stops the soak: the plugin broke a property (it
//! exited, hung or refused a valid call), which the report says with the
//! exit status and the last stderr line.

use kaged_host_core::probe::tree_usage;
use kaged_host_core::progress::Progress;
use kaged_host_core::AuditLog;
use kaged_plugin_protocol::manifest::Manifest;
use proptest::strategy::{Strategy, ValueTree};

use super::exec::{apply, Runner};
use super::plan::Op;
use super::schema_gen::valid;
use super::Property;

/// Growth past which memory is judged unbounded: both this many KiB over
/// the soak and [`MAX_SLOPE_KIB_PER_1K`].
pub const MAX_GROWTH_KIB: u64 = 4 * 1024;
/// KiB per 1 000 calls past which memory is judged unbounded.
pub const MAX_SLOPE_KIB_PER_1K: f64 = 256.0;

/// Why the soak stopped before its last call.
#[derive(Debug, Clone, PartialEq)]
pub struct SoakStop {
    /// The property the failing call broke ([`Property::NoCrash`] for a
    /// plugin that exited or did not start).
    pub property: Property,
    /// The call (from 1) that failed; 0: the plugin did not start.
    pub call: usize,
    /// What happened, with the exit status and the last stderr line.
    pub detail: String,
}

/// What the soak measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Slope {
    /// The operation repeated.
    pub op: String,
    /// Calls asked for (`--soak N`).
    pub requested: usize,
    /// Calls answered: `requested`, unless the soak stopped.
    pub calls: usize,
    /// (calls so far, RSS KiB) samples.
    pub samples: Vec<(usize, u64)>,
    /// The fitted slope, KiB per 1 000 calls (0 below two samples).
    pub kib_per_1k_calls: f64,
    /// The calls before the judged part (the first half): a runtime that
    /// warms up (V8's and a JVM's heaps grow for the first hundreds of
    /// calls, then stay flat) is judged after it.
    pub warmup: usize,
    /// Why the soak stopped early, if it did.
    pub stopped: Option<SoakStop>,
    /// The `kaged-host-sim bench` command that repeats the same call and
    /// prints the plugin's RSS: the soak's reproducer without the fuzzer.
    pub bench: String,
}

impl Slope {
    /// Whether the samples can show a slope (two at least).
    pub fn measured(&self) -> bool {
        self.samples.len() >= 2
    }

    /// Whether memory stayed bounded (over the samples taken).
    pub fn bounded(&self) -> bool {
        let judged = self.judged();
        let growth = match (judged.first(), judged.last()) {
            (Some(a), Some(b)) => b.1.saturating_sub(a.1),
            _ => 0,
        };
        growth <= MAX_GROWTH_KIB
            || self.kib_per_1k_calls <= MAX_SLOPE_KIB_PER_1K
            || self.flat_at_the_end()
    }

    /// Whether the last quarter of the calls grew RSS by less than a
    /// quarter of [`MAX_GROWTH_KIB`]: a one-time step (V8 tiering up its
    /// compiled code around call 1000) is no leak; a leak still grows.
    fn flat_at_the_end(&self) -> bool {
        let from = self.calls - self.calls / 4;
        let tail: Vec<&(usize, u64)> = self.samples.iter().filter(|s| s.0 >= from).collect();
        match (tail.first(), tail.last()) {
            (Some(a), Some(b)) if tail.len() >= 2 => b.1.saturating_sub(a.1) <= MAX_GROWTH_KIB / 4,
            _ => false,
        }
    }

    /// The samples after the warm-up (all of them when fewer than two
    /// come after it).
    pub fn judged(&self) -> &[(usize, u64)] {
        let from = self
            .samples
            .iter()
            .position(|s| s.0 >= self.warmup)
            .unwrap_or(self.samples.len());
        if self.samples.len() - from >= 2 {
            &self.samples[from..]
        } else {
            &self.samples
        }
    }
}

/// The operation to repeat: the first tool with valid arguments, else ping.
fn soak_op(manifest: &Manifest) -> Op {
    let mut gen = proptest::test_runner::TestRunner::deterministic();
    for tool in &manifest.tools {
        let schema = &tool.parameters_schema;
        if let Ok(tree) = valid(schema, 0).new_tree(&mut gen) {
            let args = tree.current();
            let ok = jsonschema::validator_for(schema).is_ok_and(|v| v.is_valid(&args));
            if ok {
                return Op::Tool {
                    method: format!("{}.{}", manifest.name, tool.name),
                    args,
                    valid: true,
                    ctx: kaged_plugin_protocol::PluginCallContext::agent(
                        "fuzz-project",
                        "primary",
                        "ses_fuzz_soak",
                        "req_fuzz_soak",
                    ),
                };
            }
        }
    }
    Op::Ping
}

fn fit(samples: &[(usize, u64)]) -> f64 {
    let n = samples.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let mx = samples.iter().map(|s| s.0 as f64).sum::<f64>() / n;
    let my = samples.iter().map(|s| s.1 as f64).sum::<f64>() / n;
    let (mut num, mut den) = (0.0, 0.0);
    for (x, y) in samples {
        num += (*x as f64 - mx) * (*y as f64 - my);
        den += (*x as f64 - mx).powi(2);
    }
    if den == 0.0 {
        0.0
    } else {
        num / den * 1000.0
    }
}

/// Repeat one operation `calls` times on one process, sampling its RSS
/// ten times; a call that fails stops it ([`Slope::stopped`]). `progress`
/// says how many calls are done.
pub async fn soak(
    runner: &Runner,
    manifest: &Manifest,
    calls: usize,
    progress: &Progress,
) -> Slope {
    let op = soak_op(manifest);
    let mut slope = Slope {
        bench: bench(runner, &op, calls),
        op: op.describe(),
        requested: calls,
        calls: 0,
        samples: Vec::new(),
        kib_per_1k_calls: 0.0,
        warmup: 0,
        stopped: None,
    };
    let audit = AuditLog::discard();
    let plugin = match runner.launch(&audit).await {
        Ok(s) => s,
        Err(e) => {
            slope.stopped = Some(SoakStop {
                property: Property::NoCrash,
                call: 0,
                detail: format!("the plugin did not start: {e}"),
            });
            return slope;
        }
    };
    let pid = plugin.pid();
    let rss = || pid.and_then(tree_usage).map(|u| u.rss_kib);
    let every = (calls / 10).max(1);
    for i in 0..calls {
        if i % every == 0 {
            slope.samples.extend(rss().map(|kib| (i, kib)));
            progress.set_message(format!("memory soak: {i} of {calls} calls"));
        }
        if let Err((property, detail)) = apply(&plugin, &op).await {
            slope.stopped = Some(SoakStop {
                property,
                call: i + 1,
                detail,
            });
            break;
        }
        slope.calls = i + 1;
    }
    if slope.stopped.is_none() {
        slope.samples.extend(rss().map(|kib| (slope.calls, kib)));
    }
    plugin.shutdown().await;
    slope.warmup = slope.calls / 2;
    slope.kib_per_1k_calls = fit(slope.judged());
    slope
}

/// The `kaged-host-sim bench` command repeating `op` `calls` times.
fn bench(runner: &Runner, op: &Op, calls: usize) -> String {
    let quote = |v: &serde_json::Value| format!("'{}'", v.to_string().replace('\'', "'\\''"));
    match op {
        Op::Tool {
            method, args, ctx, ..
        } => format!(
            "kaged-host-sim bench {} --method {method} --params {} --context {} --calls {calls}",
            runner.dir.display(),
            quote(args),
            quote(&serde_json::to_value(ctx).unwrap_or_default())
        ),
        _ => format!(
            "kaged-host-sim bench {} --calls {calls}",
            runner.dir.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slope_is_kib_per_thousand_calls() {
        let flat = [(0, 1000), (100, 1000), (200, 1000)];
        assert_eq!(fit(&flat), 0.0);
        let growing = [(0, 1000), (100, 1100), (200, 1200)];
        assert!((fit(&growing) - 1000.0).abs() < 1e-6);
    }
}

#[cfg(test)]
mod warmup_tests {
    use super::*;

    fn slope(samples: Vec<(usize, u64)>, calls: usize) -> Slope {
        let mut s = Slope {
            op: "ping".into(),
            requested: calls,
            calls,
            samples,
            kib_per_1k_calls: 0.0,
            warmup: calls / 2,
            stopped: None,
            bench: String::new(),
        };
        s.kib_per_1k_calls = fit(s.judged());
        s
    }

    #[test]
    fn a_runtime_that_warms_up_then_stays_flat_is_bounded() {
        // V8-like: +30 MiB over the first 600 calls, then flat.
        let v8: Vec<(usize, u64)> = (0..=10)
            .map(|i| {
                (
                    i * 200,
                    if i * 200 < 600 {
                        40_000 + i as u64 * 10_000
                    } else {
                        70_000
                    },
                )
            })
            .collect();
        assert!(slope(v8, 2000).bounded());
    }

    #[test]
    fn a_one_time_step_in_the_second_half_is_no_leak() {
        // Node: +5 MiB once around call 1100 (code tiering up), flat after.
        let step: Vec<(usize, u64)> = (0..=10)
            .map(|i| (i * 200, if i * 200 < 1100 { 50_000 } else { 55_000 }))
            .collect();
        assert!(slope(step, 2000).bounded());
    }

    #[test]
    fn a_leak_still_grows_after_the_warm_up() {
        let leak: Vec<(usize, u64)> = (0..=10)
            .map(|i| (i * 200, 40_000 + i as u64 * 2_000))
            .collect();
        let s = slope(leak, 2000);
        assert!(!s.bounded(), "{}", s.kib_per_1k_calls);
        assert!((s.kib_per_1k_calls - 10_000.0).abs() < 1.0);
    }
}

//! The memory soak: one operation called many times on one process, its
//! resident memory sampled ten times, the slope fitted by least squares.

use kaged_host_sim::bench::tree_usage;
use kaged_host_sim::AuditLog;
use kaged_plugin_protocol::manifest::Manifest;
use proptest::strategy::{Strategy, ValueTree};

use super::exec::{apply, Runner};
use super::plan::Op;
use super::schema_gen::valid;

/// Growth past which memory is judged unbounded: both this many KiB over
/// the soak and [`MAX_SLOPE_KIB_PER_1K`].
pub const MAX_GROWTH_KIB: u64 = 4 * 1024;
/// KiB per 1 000 calls past which memory is judged unbounded.
pub const MAX_SLOPE_KIB_PER_1K: f64 = 256.0;

/// What the soak measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Slope {
    /// The operation repeated.
    pub op: String,
    /// Calls made.
    pub calls: usize,
    /// (calls so far, RSS KiB) samples.
    pub samples: Vec<(usize, u64)>,
    /// The fitted slope, KiB per 1 000 calls.
    pub kib_per_1k_calls: f64,
    /// Why the soak stopped early (an operation failed), if it did.
    pub stopped: Option<String>,
    /// The `kaged-host-sim bench` command that repeats the same call and
    /// prints the plugin's RSS: the soak's reproducer without the fuzzer.
    pub bench: String,
}

impl Slope {
    /// Whether memory stayed bounded.
    pub fn bounded(&self) -> bool {
        let growth = match (self.samples.first(), self.samples.last()) {
            (Some(a), Some(b)) => b.1.saturating_sub(a.1),
            _ => 0,
        };
        growth <= MAX_GROWTH_KIB || self.kib_per_1k_calls <= MAX_SLOPE_KIB_PER_1K
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

/// Repeat one operation `calls` times on one process; `None` when the
/// process did not start (the sequences said why).
pub async fn soak(runner: &Runner, manifest: &Manifest, calls: usize) -> Option<Slope> {
    let audit = AuditLog::discard();
    let session = runner.launch(&audit).await.ok()?;
    let pid = session.pid()?;
    let op = soak_op(manifest);
    let every = (calls / 10).max(1);
    let mut samples = Vec::new();
    let mut stopped = None;
    for i in 0..calls {
        if i % every == 0 {
            if let Some(u) = tree_usage(pid) {
                samples.push((i, u.rss_kib));
            }
        }
        if let Err((_, detail)) = apply(&session, &op).await {
            stopped = Some(detail);
            break;
        }
    }
    if let Some(u) = tree_usage(pid) {
        samples.push((calls, u.rss_kib));
    }
    session.shutdown().await;
    let quote = |v: &serde_json::Value| format!("'{}'", v.to_string().replace('\'', "'\\''"));
    let bench = match &op {
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
    };
    Some(Slope {
        bench,
        op: op.describe(),
        calls,
        kib_per_1k_calls: fit(&samples),
        samples,
        stopped,
    })
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

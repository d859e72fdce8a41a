//! `kaged-host-sim bench DIR [--method M] [--params JSON] [--context JSON]
//! [--calls N] [--concurrency K] [--json] [--quiet]`: calls per second one at a time
//! and pipelined, latency percentiles, the plugin's CPU per call and RSS
//! (`kaged_host_sim::bench`). The first line says how the plugin runs.
//! Then the same calls go to the reference plugin (`bench::reference`:
//! this binary answering at once, under the same manifest and cage), and
//! the report says how much of each call is the host's own cost and how
//! much the plugin's: nothing is subtracted silently.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use kaged_host_core::progress::Progress;
use kaged_host_core::HostSim;
use kaged_host_sim::bench::broker::TimedHandler;
use kaged_host_sim::bench::{bench, reference, BenchOptions, BenchReport, HostCost};
use kaged_plugin_protocol::PluginCallContext;
use serde_json::Value;

use super::call::parse_json;
use super::{one_line, CliError};

/// What `bench` was asked.
pub struct BenchArgs<'a> {
    /// The method.
    pub method: &'a str,
    /// Its params, as JSON text.
    pub params: Option<&'a str>,
    /// Its context, as JSON text.
    pub context: Option<&'a str>,
    /// Calls per phase.
    pub calls: usize,
    /// Calls in flight in the pipelined phase.
    pub concurrency: usize,
    /// One JSON object on stdout.
    pub json: bool,
    /// No progress line (it is drawn on standard error only when that is
    /// a terminal).
    pub quiet: bool,
}

pub(super) async fn run(
    host: &HostSim,
    dir: &Path,
    a: &BenchArgs<'_>,
) -> Result<ExitCode, CliError> {
    if a.calls == 0 || a.concurrency == 0 {
        return Err(CliError::Usage(
            "--calls and --concurrency must be at least 1".into(),
        ));
    }
    let params: Option<Value> = a.params.map(|p| parse_json("--params", p)).transpose()?;
    let context: Option<PluginCallContext> =
        a.context.map(|c| parse_json("--context", c)).transpose()?;
    // The host's answers to the plugin's storage requests, timed: that
    // time is the host's, reported apart from the plugin's share.
    let timed = TimedHandler::new(host.config().handler.clone());
    let broker = timed.stats();
    let host = &HostSim::new(host.config().clone().with_handler(Arc::new(timed)));
    let plugin = host.launch(dir).await.map_err(|e| {
        CliError::Failed(one_line(
            &format!("cannot start the plugin in {}", dir.display()),
            &e,
        ))
    })?;
    eprintln!("{}", super::caging::line(&plugin, None));
    if let Some(sent) = plugin.first_config().filter(|s| s.refused.is_some()) {
        eprintln!("{}", super::script::first_config_line(&sent));
    }
    // One call first: a method that fails is said at once, not 2000 times.
    if let Err(e) = plugin.call(a.method, params.clone(), context.clone()).await {
        plugin.shutdown().await;
        return Err(CliError::Failed(one_line(
            &format!("call {}", a.method),
            &e,
        )));
    }
    let opts = BenchOptions {
        method: a.method.to_string(),
        params,
        context,
        calls: a.calls,
        concurrency: a.concurrency,
        broker: Some(broker),
        ..BenchOptions::default()
    };
    // The plugin's calls, then the reference plugin's (the calibration).
    let per_plugin = (opts.warmup + 2 * opts.calls) as u64;
    let opts = BenchOptions {
        progress: Progress::stderr(
            "kaged-host-sim bench",
            "calls",
            Some(2 * per_plugin),
            a.quiet,
        ),
        ..opts
    };
    let mut report = bench(&plugin, &opts).await;
    plugin.shutdown().await;
    report.host = calibrate(host, dir, &opts)
        .await
        .map(|r| HostCost::new(&r, &report));
    opts.progress.finish();
    if a.json {
        kaged_host_core::outln!("{}", report.to_json());
    } else {
        kaged_host_core::out!("{}", report.render());
    }
    let errors = report.one_at_a_time.errors + report.pipelined.errors;
    Ok(if errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The same calls against the reference plugin: its report, or `None`
/// (with a warning saying why) when it cannot be run.
async fn calibrate(host: &HostSim, dir: &Path, opts: &BenchOptions) -> Option<BenchReport> {
    let place = tempfile::tempdir().ok()?;
    let reference_dir = match reference::stage(dir, place.path()) {
        Ok(d) => d,
        Err(e) => {
            tracing::warn!(
                "the host's own cost is not calibrated: cannot stage the reference plugin: {e}"
            );
            return None;
        }
    };
    let plugin = match host.launch(&reference_dir).await {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(
                "the host's own cost is not calibrated: the reference plugin did not start: {e}"
            );
            return None;
        }
    };
    let reference = bench(&plugin, opts).await;
    plugin.shutdown().await;
    let failed = reference.one_at_a_time.errors + reference.pipelined.errors;
    if failed > 0 {
        tracing::warn!(
            "the host's own cost is not calibrated: {failed} calls to the reference plugin failed"
        );
        return None;
    }
    drop(place);
    Some(reference)
}

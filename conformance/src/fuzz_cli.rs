//! `kaged-conformance fuzz PLUGIN_DIR [--duration 60s | --cases N | --calls N]
//! [--seed S] [--replay] [--time-scale F] [--cage MODE] [--soak N]
//! [--shrink-runs N] [--shrink-budget D] [--out DIR] [--format F]
//! [--output FILE] [--report FORMAT=FILE]... [--quiet]`
//! ([`crate::fuzz`]).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use kaged_host_core::progress::Progress;
use kaged_host_core::time::TimeScale;
use kaged_host_core::CageMode;

use crate::cli_error::CliError;
use crate::fuzz::{fuzz, fuzz_report, FuzzOptions, FuzzOutcome};
use crate::report::render_human;
use crate::report_format::{render, Format};

/// `fuzz` options.
#[derive(Debug, clap::Args)]
pub struct FuzzArgs {
    /// The plugin directory (holding kaged-plugin.yaml).
    pub plugin_dir: PathBuf,
    /// Generate sequences for this long (`60s`, `2m`); the default when
    /// neither --cases nor --calls is given is 60s. A count gives the same
    /// run on a busy machine as on an idle one: prefer it in CI.
    #[arg(long, value_parser = humantime::parse_duration)]
    pub duration: Option<Duration>,
    /// Stop after this many sequences (whichever bound comes first).
    #[arg(long, value_name = "N")]
    pub cases: Option<u64>,
    /// Stop once this many operations ran (whichever bound comes first).
    #[arg(long, value_name = "N")]
    pub calls: Option<u64>,
    /// The seed (default: from the clock, printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Replay a failure: with --seed (and --cases), the same sequences,
    /// stopping at the first failure, without the memory soak.
    #[arg(long, requires = "seed")]
    pub replay: bool,
    /// Multiply every timeout by F (0 < F <= 1).
    #[arg(long, value_name = "F", default_value_t = TimeScale::default())]
    pub time_scale: TimeScale,
    /// Run the plugin caged: auto, require or off.
    #[arg(long, value_name = "MODE", default_value = "auto")]
    pub cage: CageMode,
    /// Calls of the memory soak (0: none).
    #[arg(long, value_name = "N", default_value_t = 2000)]
    pub soak: usize,
    /// Runs of candidate sequences shrinking a failure may make.
    #[arg(long, value_name = "N", default_value_t = 500)]
    pub shrink_runs: usize,
    /// The longest shrinking a failure may take besides (a failure by
    /// timeout costs a timeout per run). Shrinking is bounded by
    /// --shrink-runs, so a seed shrinks alike on a busy and an idle
    /// machine; this wall-clock cap is a safeguard, and the report says
    /// when it stopped shrinking early.
    #[arg(long, value_parser = humantime::parse_duration, default_value = "10m")]
    pub shrink_budget: Duration,
    /// Write the shrunk failure there: `replay.yaml` (a YAML
    /// `kaged-host-sim session` script) and `replay.txt` (the commands); a
    /// memory growth as `memory.txt` (the `kaged-host-sim bench` command
    /// that shows it).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Write the report to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write the report in FORMAT to FILE (repeatable).
    #[arg(long, value_name = "FORMAT=FILE", value_parser = crate::report_format::parse_report)]
    pub report: Vec<(Format, PathBuf)>,
    /// No progress line. (The progress line is drawn on standard error
    /// only when it is a terminal: sequences and operations run, the time
    /// so far, then shrinking or the memory soak.)
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// How long a run goes when no bound is given.
const DEFAULT_DURATION: Duration = Duration::from_secs(60);

fn io(what: String) -> impl FnOnce(std::io::Error) -> CliError {
    move |source| CliError::Io { what, source }
}

/// The one-line command replaying `outcome`'s failure.
pub fn replay_command(dir: &Path, outcome: &FuzzOutcome, scale: TimeScale) -> String {
    let cases = outcome.failure.as_ref().map_or(outcome.cases, |f| f.case);
    format!(
        "kaged-conformance fuzz {} --seed {} --cases {cases} --time-scale {scale} --replay",
        dir.display(),
        outcome.seed
    )
}

/// Run `fuzz` and report; the exit status (0, or 1 on a MUST failure).
pub fn fuzz_cmd(a: &FuzzArgs) -> Result<i32, CliError> {
    let seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let counted = a.cases.is_some() || a.calls.is_some();
    let opts = FuzzOptions {
        // A replay reaches its sequence whatever the clock says.
        duration: match a.duration {
            _ if counted && a.replay => None,
            Some(d) => Some(d),
            None if counted => None,
            None => Some(DEFAULT_DURATION),
        },
        max_cases: a.cases,
        max_calls: a.calls,
        seed,
        time_scale: a.time_scale,
        cage: a.cage,
        soak_calls: if a.replay { 0 } else { a.soak },
        shrink_runs: a.shrink_runs,
        shrink_budget: a.shrink_budget,
        progress: Progress::stderr("kaged-conformance fuzz", "sequences", a.cases, a.quiet),
        ..FuzzOptions::default()
    };
    let bounds: Vec<String> = [
        a.cases.map(|n| format!("{n} sequence(s)")),
        a.calls.map(|n| format!("{n} operation(s)")),
        opts.duration
            .map(|d| humantime::format_duration(d).to_string()),
    ]
    .into_iter()
    .flatten()
    .collect();
    eprintln!(
        "kaged-conformance fuzz: {} with seed {seed} for {} at most",
        a.plugin_dir.display(),
        bounds.join(" or ")
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(io("cannot start the runtime".into()))?;
    let outcome = rt.block_on(fuzz(&a.plugin_dir, &opts));
    opts.progress.finish();
    let outcome = outcome?;
    let replay = replay_command(&a.plugin_dir, &outcome, a.time_scale);
    if let (Some(f), Some(out)) = (&outcome.failure, &a.out) {
        std::fs::create_dir_all(out).map_err(io(format!("cannot create {}", out.display())))?;
        let script = out.join("replay.yaml");
        std::fs::write(&script, f.script()?)
            .map_err(io(format!("cannot write {}", script.display())))?;
        let text = format!(
            "{replay}\nkaged-host-sim session {} --script {}\n",
            a.plugin_dir.display(),
            script.display()
        );
        std::fs::write(out.join("replay.txt"), text).map_err(io(format!(
            "cannot write {}",
            out.join("replay.txt").display()
        )))?;
    }
    if let (Some(slope), Some(out)) = (outcome.slope.as_ref().filter(|s| !s.bounded()), &a.out) {
        std::fs::create_dir_all(out).map_err(io(format!("cannot create {}", out.display())))?;
        let path = out.join("memory.txt");
        std::fs::write(&path, format!("{}\n", slope.bench))
            .map_err(io(format!("cannot write {}", path.display())))?;
    }
    let report = fuzz_report(
        &outcome,
        &a.plugin_dir.display().to_string(),
        a.time_scale.factor(),
        &replay,
    );
    let write = |path: &PathBuf, text: &str| {
        std::fs::write(path, text).map_err(|source| CliError::Output {
            path: path.clone(),
            source,
        })
    };
    match (a.format, &a.output) {
        (Format::Human, None) => {
            let tty = std::io::stdout().is_terminal();
            kaged_host_core::out!("{}", render_human(&report, tty, true));
        }
        (f, None) => kaged_host_core::out!("{}", render(f, &report)),
        (f, Some(p)) => write(p, &render(f, &report))?,
    }
    for (f, p) in &a.report {
        write(p, &render(*f, &report))?;
    }
    eprintln!(
        "kaged-conformance fuzz: {} sequence(s), {} operation(s){} in {:.1?}{}",
        outcome.cases,
        outcome.ops,
        match &outcome.slope {
            Some(s) => format!(", a soak of {} call(s)", s.calls),
            None => String::new(),
        },
        outcome.elapsed,
        if outcome.failure.is_some() {
            format!("; replay: {replay}")
        } else {
            String::new()
        }
    );
    Ok(report.exit_code(false))
}

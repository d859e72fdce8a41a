//! `kaged-conformance fuzz PLUGIN_DIR [--duration 60s | --cases N | --calls N]
//! [--seed S] [--replay] [--time-scale F] [--cage MODE] [--soak N]
//! [--shrink-runs N] [--shrink-budget D] [--out DIR] [--format F]
//! [--output FILE] [--report FORMAT=FILE]... [--policy FILE] [--quiet]`
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
    /// Calls of the memory soak (0: none; default 2000).
    #[arg(long, value_name = "N")]
    pub soak: Option<usize>,
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
    /// Certify the run under a certifier's policy (see `run --policy`):
    /// it fuzzes at the policy's depth (`fuzz: {cases, soak}`; --cases and
    /// --soak may only go deeper, --duration and --calls are refused), its
    /// time scale and cage, and the report's first line says certified or
    /// not; the exit status is 0 only when certified.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// No progress line. (The progress line is drawn on standard error
    /// only when it is a terminal: sequences and operations run, the time
    /// so far, then shrinking or the memory soak.)
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// What a policy makes of the run's bounds: the sequences, the soak and
/// the time scale, or why the flags conflict with it.
fn policy_bounds(
    a: &FuzzArgs,
    policy: &crate::policy::Policy,
) -> Result<(u64, usize, TimeScale), CliError> {
    let refused = |m: String| Err(CliError::Refused(m));
    let Some(depth) = policy.fuzz else {
        return refused(format!(
            "the policy {} sets no fuzz depth: add `fuzz: {{cases: N}}` to it",
            policy.id.name
        ));
    };
    if a.replay || a.duration.is_some() || a.calls.is_some() {
        return refused(
            "--replay, --duration and --calls do not go with --policy: the policy counts sequences (`fuzz: {cases}`)"
                .into(),
        );
    }
    let cases = match a.cases {
        Some(n) if n < depth.cases => {
            return refused(format!(
                "--cases {n} is shallower than the policy's {}: drop the flag, the policy sets it",
                depth.cases
            ))
        }
        Some(n) => n,
        None => depth.cases,
    };
    let soak = match a.soak {
        Some(n) if n < depth.soak => {
            return refused(format!(
                "--soak {n} is shallower than the policy's {}: drop the flag, the policy sets it",
                depth.soak
            ))
        }
        Some(n) => n,
        None => depth.soak,
    };
    let scale = policy
        .time_scale_over(a.time_scale)
        .map_err(CliError::Refused)?;
    Ok((cases, soak, scale))
}

/// Calls of the memory soak when `--soak` is not given.
const DEFAULT_SOAK: usize = 2000;

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
    let policy = a
        .policy
        .as_deref()
        .map(crate::policy::Policy::load)
        .transpose()?;
    let (cases, soak, time_scale) = match &policy {
        Some(p) => {
            let (c, s, t) = policy_bounds(a, p)?;
            (Some(c), s, t)
        }
        None => (a.cases, a.soak.unwrap_or(DEFAULT_SOAK), a.time_scale),
    };
    let counted = cases.is_some() || a.calls.is_some();
    let opts = FuzzOptions {
        // A replay reaches its sequence whatever the clock says.
        duration: match a.duration {
            _ if counted && a.replay => None,
            Some(d) => Some(d),
            None if counted => None,
            None => Some(DEFAULT_DURATION),
        },
        max_cases: cases,
        max_calls: a.calls,
        seed,
        time_scale,
        cage: a.cage,
        soak_calls: if a.replay { 0 } else { soak },
        shrink_runs: a.shrink_runs,
        shrink_budget: a.shrink_budget,
        progress: Progress::stderr("kaged-conformance fuzz", "sequences", cases, a.quiet),
        ..FuzzOptions::default()
    };
    let bounds: Vec<String> = [
        cases.map(|n| format!("{n} sequence(s)")),
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
    let replay = replay_command(&a.plugin_dir, &outcome, time_scale);
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
    let mut report = fuzz_report(
        &outcome,
        &a.plugin_dir.display().to_string(),
        time_scale.factor(),
        &replay,
    );
    if let Some(p) = &policy {
        report.certification = Some(p.certify(&report, &Default::default()));
    }
    if report.cage != Some(kaged_host_core::CageKind::Bwrap) {
        if let Some(line) = report.cage_line() {
            eprintln!("kaged-conformance fuzz: warning: {line}");
        }
    }
    let write = |path: &PathBuf, text: &str| crate::cli_error::write_output(path, text);
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

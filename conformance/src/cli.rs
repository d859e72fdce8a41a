//! The command line (ADDENDUM §11): `kaged-conformance run PLUGIN_DIR ...`,
//! `kaged-conformance list`, and `kaged-conformance judge DIR` (a stored
//! run judged offline). [`main_with_args`] returns the exit
//! status: 0 when no MUST case fails, 1 when one does, 2 when the suite
//! could not run at all.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand, ValueEnum};
use kaged_host_core::TimeScale;

pub use crate::cli_error::CliError;
use crate::list;
use crate::policy::{Policy, RunInputs};
use crate::report::{render_case_line, render_human, Report};
pub use crate::report_format::{parse_report, render, Format};
use crate::runner::{judge_dir, run_suite_streaming, Options};
use crate::selection::{Baseline, Pattern, Selection};
use kaged_host_core::progress::Progress;
use kaged_plugin_protocol::error_chain::chain as error_chain;

/// `kaged-conformance`: certify a kaged plugin against the plugin-host spec.
#[derive(Debug, Parser)]
#[command(name = "kaged-conformance", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the suite against a plugin directory.
    Run(Box<RunArgs>),
    /// Print the case catalogue.
    List(ListArgs),
    /// Judge a stored run (`run --transcript-dir DIR`) again, offline:
    /// the cases the recording decides get their verdict, the others are
    /// skipped.
    Judge(JudgeArgs),
    /// Property-based testing from the manifest: generated tool calls,
    /// configs and pings, every step checked, a failure shrunk to a
    /// `kaged-host-sim session` script.
    Fuzz(Box<crate::fuzz_cli::FuzzArgs>),
    /// Check a statement `run --attest` wrote against a plugin directory:
    /// exit 0 when the directory is the subject and the outcome was
    /// "certified" (under --policy), 1 when not, 2 when unusable.
    Verify(VerifyArgs),
    /// Check a certifier's policy and print it as JSON, every default
    /// filled in (exit 2 when it is not a policy this kit reads).
    Policy(PolicyArgs),
    /// Set a plugin up for CI: a GitHub workflow and a GitLab job (caged,
    /// with the baseline and the golden check), a starter session script,
    /// its golden transcript and the baseline, written into DIR and run
    /// once.
    Init(crate::init::InitArgs),
    /// A registry file (plugins, versions, sources, policies) as a CI
    /// matrix: `--format github` (the JSON `strategy.matrix` takes),
    /// `gitlab` (a child pipeline with `parallel:matrix`); `--workflow
    /// FILE` writes a GitHub workflow that certifies every plugin in its
    /// own job and merges the reports.
    Matrix(crate::registry::cli::MatrixArgs),
    /// Many JSON reports (`run --report json=FILE`) as one registry page:
    /// `index.html`, `index.md`, `index.json` and shields.io badges in
    /// `--out DIR`, regressions since `--previous INDEX` first.
    Merge(crate::registry::cli::MergeArgs),
}

/// `judge` options.
#[derive(Debug, clap::Args)]
pub struct JudgeArgs {
    /// The directory `run --transcript-dir` wrote.
    pub transcript_dir: PathBuf,
    /// Which cases, and how they are reported.
    #[command(flatten)]
    pub report: ReportArgs,
}

/// Which cases count and how the report is written: the options `run`
/// and `judge` share.
#[derive(Debug, Clone, clap::Args)]
pub struct ReportArgs {
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Write the report to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write the report in FORMAT to FILE (repeatable: JUnit,
    /// Markdown and HTML from one run).
    #[arg(long, value_name = "FORMAT=FILE", value_parser = parse_report)]
    pub report: Vec<(Format, PathBuf)>,
    /// Only the cases matching PATTERN (`*` matches anything; repeatable).
    #[arg(long, value_name = "PATTERN")]
    pub only: Vec<String>,
    /// Skip the cases matching PATTERN (repeatable).
    #[arg(long, value_name = "PATTERN")]
    pub skip: Vec<String>,
    /// SHOULD failures fail the run too.
    #[arg(long)]
    pub strict: bool,
    /// A baseline of case ids (or patterns) expected to fail, one per line.
    #[arg(long, value_name = "FILE")]
    pub known_failing: Option<PathBuf>,
}

impl ReportArgs {
    /// `--only` / `--skip`, and the `--known-failing` baseline, loaded.
    fn selection(&self) -> Result<(Selection, Option<Baseline>), CliError> {
        let baseline = self
            .known_failing
            .as_deref()
            .map(Baseline::load)
            .transpose()?;
        let selection = Selection {
            only: self.only.iter().map(Pattern::new).collect(),
            skip: self.skip.iter().map(Pattern::new).collect(),
        };
        Ok((selection, baseline))
    }
}

/// `run` options.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The plugin directory (holding kaged-plugin.yaml).
    pub plugin_dir: PathBuf,
    /// How the suite runs and reports.
    #[command(flatten)]
    pub suite: SuiteArgs,
}

/// How the suite runs and reports: every `run` option but the plugin
/// directory (`cargo kaged test` takes the same).
#[derive(Debug, Clone, clap::Args)]
pub struct SuiteArgs {
    /// Which cases, and how they are reported.
    #[command(flatten)]
    pub report: ReportArgs,
    /// Multiply every spec timeout by F (0 < F <= 1).
    #[arg(long, value_name = "F", default_value = "1")]
    pub time_scale: TimeScale,
    /// Write the ids of the cases that fail or warn to FILE, in the
    /// --known-failing format (a baseline to start from).
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    /// Write one wire transcript (JSON Lines) per case to DIR.
    #[arg(long, value_name = "DIR")]
    pub transcript_dir: Option<PathBuf>,
    /// The form of those transcripts: `raw` (every record as it happened)
    /// or `normal` (deterministic run after run: docs/protocol.md §
    /// Normal-form transcripts).
    #[arg(
        long,
        value_name = "FORM",
        default_value = "raw",
        requires = "transcript_dir"
    )]
    pub transcript_form: kaged_host_core::normal::TranscriptForm,
    /// The storage broker's SQLite database (created if needed; a
    /// temporary database, removed after the run, by default).
    #[arg(long, value_name = "PATH")]
    pub storage_db: Option<PathBuf>,
    /// Run every spawn caged in bwrap (ADDENDUM §13): `auto` cages when
    /// bwrap works here and otherwise runs uncaged with a warning (the
    /// report says `"cage": "unavailable"`); `require` exits 2 when it
    /// cannot cage; `off` runs uncaged (`"cage": "off"`).
    #[arg(long, value_name = "MODE", default_value = "auto")]
    pub cage: kaged_host_core::CageMode,
    /// The operator's config root that `config:/` grants resolve under
    /// (default: a temporary directory, removed after the run).
    #[arg(long, value_name = "DIR")]
    pub config_root: Option<PathBuf>,
    /// The conformance profile: per custom method, example params, schemas
    /// and params to refuse (default: kaged-conformance.yaml beside the
    /// manifest, if there is one; docs/conformance.md § Conformance
    /// profiles).
    #[arg(long, value_name = "FILE")]
    pub conformance_profile: Option<PathBuf>,
    /// Stop after N failed cases: the cases after them are reported
    /// `skip` ("not run: --max-failures N reached"), for a CI that wants
    /// the first failures fast.
    /// With it, session cases run one at a time, in table order.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_failures: Option<u64>,
    /// How many cases work on their own plugin processes at once (default:
    /// the available parallelism, which respects CPU quotas). A case whose
    /// plugin sits idle waiting on a budget gives its place up. Verdicts,
    /// the report and its order never depend on N.
    #[arg(long, value_name = "N")]
    pub jobs: Option<std::num::NonZeroUsize>,
    /// No progress line. (The progress line is drawn on standard error
    /// only when it is a terminal: the count of cases judged, the time so
    /// far and the last verdict.)
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Judge the run under a certifier's policy (docs/conformance.md §
    /// Certifying under a policy): the report's first line says certified
    /// or not and why, and the exit status is 0 only when certified.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Write an in-toto Statement (v1) of this run to FILE: its subject is
    /// the plugin's installed copy by tree digest, its predicate the kit,
    /// policy, cage, host facts and every verdict (docs/conformance.md §
    /// Attestations). `verify` checks it.
    #[arg(long, value_name = "FILE")]
    pub attest: Option<PathBuf>,
}

/// `verify` options.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// The statement `run --attest` wrote.
    pub statement: PathBuf,
    /// The plugin directory to check against its subject.
    pub plugin_dir: PathBuf,
    /// Require that it was certified under this policy (same digest).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
}

/// `policy` options.
#[derive(Debug, clap::Args)]
pub struct PolicyArgs {
    /// The policy file.
    pub file: PathBuf,
}

/// `list` options.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Human)]
    pub format: ListFormat,
}

/// Catalogue formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    /// One line per case.
    Human,
    /// A JSON array.
    Json,
    /// The markdown table of docs/conformance.md.
    Markdown,
}

/// Parse `args` (program name first) and run; returns the exit status.
pub fn main_with_args<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                    2
                } else {
                    0
                };
            }
            let text = e.render().to_string();
            let line = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid arguments");
            eprintln!("kaged-conformance: {}", line.trim_start_matches("error: "));
            return 2;
        }
    };
    match cli.command {
        Command::List(a) => {
            let text = match a.format {
                ListFormat::Human => list::render_text(),
                ListFormat::Json => format!("{}\n", list::render_json()),
                ListFormat::Markdown => list::render_markdown(),
            };
            kaged_host_core::out!("{text}");
            0
        }
        Command::Judge(a) => status(judge(&a)),
        Command::Fuzz(a) => status(crate::fuzz_cli::fuzz_cmd(&a)),
        Command::Init(a) => status(crate::init::init_cmd(&a)),
        Command::Matrix(a) => status(crate::registry::cli::matrix_cmd(&a)),
        Command::Merge(a) => status(crate::registry::cli::merge_cmd(&a)),
        Command::Verify(a) => verify_cmd(&a),
        Command::Policy(a) => status(Policy::load(&a.file).map_err(CliError::from).map(|p| {
            kaged_host_core::outln!("{}", p.to_json());
            0
        })),
        Command::Run(a) => status(run_dir(&a.plugin_dir, &a.suite)),
    }
}

/// A command's exit status: its own, or 2 with the reason on stderr in
/// one line, cause chain included.
fn status(result: Result<i32, CliError>) -> i32 {
    result.unwrap_or_else(|e| {
        eprintln!("kaged-conformance: error: {}", error_chain(&e));
        2
    })
}

/// Run the suite against the plugin in `plugin_dir` as `a` says, print
/// or write the report, and return the exit status (0 or 1; an `Err` is
/// exit status 2).
pub fn run_dir(plugin_dir: &Path, a: &SuiteArgs) -> Result<i32, CliError> {
    let (selection, baseline) = a.report.selection()?;
    let policy = a.policy.as_deref().map(Policy::load).transpose()?;
    let time_scale = match &policy {
        Some(p) => p.time_scale_over(a.time_scale).map_err(CliError::Refused)?,
        None => a.time_scale,
    };
    let narrowed = !selection.only.is_empty() || !selection.skip.is_empty();
    let options = Options {
        ignore_plugin_profile: policy.as_ref().is_some_and(|p| !p.plugin_profile),
        time_scale,
        selection,
        baseline,
        transcript_dir: a.transcript_dir.clone(),
        transcript_form: a.transcript_form,
        storage_db: a.storage_db.clone(),
        adjust_timeouts: None,
        cage: a.cage,
        config_root: a.config_root.clone(),
        profile: a.conformance_profile.clone(),
        max_failures: a
            .max_failures
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        jobs: a.jobs,
    };
    let stdout = std::io::stdout();
    let tty = stdout.is_terminal();
    let stream = a.report.format == Format::Human;
    let progress = Progress::stderr("kaged-conformance", "cases judged", None, a.quiet);
    let mut n = 0usize;
    let mut folded = crate::report::Folded::default();
    let mut on_case = |c: &crate::report::CaseResult| {
        progress.inc(1);
        progress.set_message(format!("{}: {}", c.id, c.status.as_str()));
        if !stream {
            return;
        }
        // What --only/--skip left out, and what could not run for another
        // case's failure, is counted, not listed.
        if folded.take(c) {
            return;
        }
        n += 1;
        let line = render_case_line(c, tty);
        progress.suspend(|| {
            if tty {
                kaged_host_core::outln!("\x1b[2m[{n:>3}]\x1b[0m {line}");
            } else {
                kaged_host_core::outln!("{line}");
            }
        });
    };
    let report = run_suite_streaming(plugin_dir, &options, &mut on_case);
    progress.finish();
    for line in folded.lines() {
        kaged_host_core::outln!("{line}");
    }
    let mut report = report?;
    if let Some(policy) = &policy {
        let own_profile = plugin_dir.join(crate::profile::PROFILE_FILE);
        let profile = match (&options.profile, options.ignore_plugin_profile) {
            // The certifier's own profile, or none: nothing of the plugin's.
            (Some(_), _) | (None, true) => None,
            (None, false) => own_profile
                .is_file()
                .then(|| own_profile.display().to_string()),
        };
        let inputs = RunInputs {
            baseline: options.baseline.as_ref(),
            plugin_profile: profile.as_deref(),
            narrowed,
        };
        report.certification = Some(policy.certify(&report, &inputs));
    }
    if report.cage != Some(kaged_host_core::CageKind::Bwrap) {
        if let Some(line) = report.cage_line() {
            eprintln!("kaged-conformance: warning: {line}");
        }
    }
    emit(&a.report, &report, tty)?;
    if let Some(path) = &a.attest {
        let statement = crate::attest::statement(plugin_dir, &report)?;
        let text = serde_json::to_string_pretty(&statement).unwrap_or_default();
        crate::cli_error::write_output(path, &format!("{text}\n"))?;
    }
    if let Some(path) = &a.write_baseline {
        let plugin = format!("{} {}", report.plugin.name, report.plugin.version);
        let text = Baseline::render(
            &plugin,
            "kaged-conformance run --write-baseline",
            report.failing_ids(),
        );
        crate::cli_error::write_output(path, &text)?;
    }
    Ok(report.exit_code(a.report.strict))
}

/// `judge`: judge the stored run, print or write the report, and return
/// the exit status (0 or 1; an `Err` is exit status 2).
fn judge(a: &JudgeArgs) -> Result<i32, CliError> {
    let (selection, baseline) = a.report.selection()?;
    let options = Options {
        selection,
        baseline,
        ..Options::default()
    };
    let report = judge_dir(&a.transcript_dir, &options)?;
    emit(&a.report, &report, std::io::stdout().is_terminal())?;
    Ok(report.exit_code(a.report.strict))
}

/// Print the report in `--format`, or write it to `--output`; then write
/// every `--report FORMAT=FILE`.
fn emit(a: &ReportArgs, report: &Report, tty: bool) -> Result<(), CliError> {
    let (format, output) = (a.format, a.output.as_ref());
    let write_file = |path: &PathBuf, text: &str| crate::cli_error::write_output(path, text);
    match format {
        Format::Human => {
            kaged_host_core::out!("{}", render_human(report, tty, false));
            if let Some(p) = output {
                write_file(p, &render(Format::Human, report))?;
            }
        }
        other => {
            let text = render(other, report);
            match output {
                Some(p) => write_file(p, &text)?,
                None => kaged_host_core::out!("{text}"),
            }
        }
    }
    for (format, path) in &a.report {
        write_file(path, &render(*format, report))?;
    }
    Ok(())
}

/// `verify`: one line saying whether the statement certifies the
/// directory; the exit status of [`crate::attest::VerifyError::exit_code`].
fn verify_cmd(a: &VerifyArgs) -> i32 {
    let policy = match a.policy.as_deref().map(Policy::load).transpose() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("kaged-conformance: error: {}", error_chain(&e));
            return 2;
        }
    };
    match crate::attest::verify(&a.statement, &a.plugin_dir, policy.as_ref()) {
        Ok(v) => {
            kaged_host_core::outln!(
                "verified: {} is {} (sha256 {}), certified under policy {} (sha256 {})",
                a.plugin_dir.display(),
                v.subject,
                v.digest,
                v.policy.0,
                v.policy.1
            );
            0
        }
        Err(e) => {
            eprintln!("kaged-conformance: not verified: {}", error_chain(&e));
            e.exit_code()
        }
    }
}

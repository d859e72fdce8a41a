//! `kaged-conformance fuzz`: property-based testing of any plugin from its
//! manifest (issue 20), as Schemathesis does for HTTP APIs. A seeded
//! generator (`plan.rs`) makes sequences of tool calls (arguments from
//! `parameters_schema`, valid and broken, reaching the schema's edges),
//! custom methods (params from the conformance profile's `params_schema`,
//! else `{}`), `config.update` (configs from `config_schema`, valid
//! and broken), hooks, pings and several of these at once; each sequence
//! runs on a fresh plugin process and every [`Property`] is checked after
//! every operation (`exec.rs`). A property no operation exercised is
//! skipped with the reason ([`Coverage`]). A failing sequence is shrunk
//! (`shrink.rs`: proptest's value trees, then inside the operations) to a
//! minimal one, written as a YAML `kaged-host-sim session` script that
//! replays it without the fuzzer (`replay.rs`). A soak at the end calls one
//! operation many times on one process and reports its memory slope.
//! Every bound is a count (`--cases`, `--calls`, the shrink's runs) or,
//! for people at a terminal, a time (`--duration`).

mod coverage;
mod exec;
mod judge;
mod knobs;
mod plan;
mod properties;
mod reduce;
mod replay;
mod report;
mod schema_gen;
mod shrink;
mod soak;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kaged_host_core::time::TimeScale;
use kaged_host_core::{CageKind, CageMode, FirstConfig};
use kaged_plugin_protocol::manifest::Manifest;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use kaged_host_core::progress::Progress;

pub use coverage::Coverage;
pub use exec::Broken;
pub use plan::Op;
pub use properties::Property;
pub use report::fuzz_report;
pub use soak::{Slope, SoakStop};

/// How a fuzz run goes. The run stops at the first bound reached:
/// `duration`, `max_cases` or `max_calls` (with none of them, at the
/// first failure only).
#[derive(Debug, Clone)]
pub struct FuzzOptions {
    /// Stop generating after this long (`None`: the counts alone bound
    /// the run, the same on a busy machine as on an idle one).
    pub duration: Option<Duration>,
    /// Stop after this many sequences.
    pub max_cases: Option<u64>,
    /// Stop once this many operations ran.
    pub max_calls: Option<u64>,
    /// The seed: the same seed makes the same sequences.
    pub seed: u64,
    /// The time scale of every answer's budget (start and exit keep
    /// their spec budgets).
    pub time_scale: TimeScale,
    /// The cage mode.
    pub cage: CageMode,
    /// Operations per sequence, at most.
    pub max_ops: usize,
    /// Calls of the memory soak (0: none).
    pub soak_calls: usize,
    /// Runs of candidate sequences shrinking may make.
    pub shrink_runs: usize,
    /// The longest shrinking may take besides (a failure by timeout costs
    /// a timeout per run).
    pub shrink_budget: Duration,
    /// Where the run says how far it has got (hidden by default; the
    /// command line draws it on a terminal).
    pub progress: Progress,
}

impl Default for FuzzOptions {
    fn default() -> FuzzOptions {
        FuzzOptions {
            duration: Some(Duration::from_secs(60)),
            max_cases: None,
            max_calls: None,
            seed: 0,
            time_scale: TimeScale::default(),
            cage: CageMode::Auto,
            max_ops: 12,
            soak_calls: 2_000,
            shrink_runs: 500,
            shrink_budget: Duration::from_secs(600),
            progress: Progress::hidden(),
        }
    }
}

/// A failing sequence, shrunk.
#[derive(Debug, Clone)]
pub struct Counterexample {
    /// The minimal sequence.
    pub ops: Vec<Op>,
    /// What it breaks.
    pub broken: Broken,
    /// The sequence number (from 1) that first failed.
    pub case: u64,
    /// Operations in the sequence before shrinking.
    pub original_len: usize,
    /// Candidate sequences run while shrinking.
    pub shrink_runs: usize,
    /// The wall-clock cap (`--shrink-budget`) that stopped shrinking before
    /// its runs were spent, if it did: the sequence may not be minimal.
    pub shrink_cut_short: Option<Duration>,
    /// The first `config.update` every sequence's process was sent.
    pub first_config: FirstConfig,
}

impl Counterexample {
    /// The `kaged-host-sim session` script that replays it: YAML, with a
    /// comment saying what it breaks.
    pub fn script(&self) -> Result<String, FuzzError> {
        let comment = format!(
            "kaged-conformance fuzz: {} broken after step {} (sequence {}, shrunk from {} to {} operation(s))\n{}",
            self.broken.property.id(),
            self.broken.step,
            self.case,
            self.original_len,
            self.ops.len(),
            self.broken.detail
        );
        replay::to_yaml(&self.ops, &self.first_config, &comment).map_err(FuzzError::Replay)
    }
}

/// What a fuzz run found.
#[derive(Debug, Clone)]
pub struct FuzzOutcome {
    /// The plugin's manifest name and version.
    pub plugin: (String, String),
    /// The seed used.
    pub seed: u64,
    /// Sequences run (before any shrinking).
    pub cases: u64,
    /// Operations that ran in those sequences (a failing sequence's up to
    /// the one that broke; a batch counts once).
    pub ops: u64,
    /// What those operations exercised.
    pub coverage: Coverage,
    /// The first failure, shrunk.
    pub failure: Option<Counterexample>,
    /// The memory soak.
    pub slope: Option<Slope>,
    /// How long it took.
    pub elapsed: Duration,
    /// How the plugin ran: in bwrap, or uncaged (`--cage off`, or no
    /// working bwrap under `--cage auto`).
    pub cage: CageKind,
    /// Why it ran uncaged.
    pub cage_reason: Option<String>,
    /// The cage every sequence's process got, in brief.
    pub cage_policy: Option<kaged_host_core::cage::CageSummary>,
}

/// Why the fuzzer could not run.
#[derive(Debug, thiserror::Error)]
pub enum FuzzError {
    /// The manifest does not load.
    #[error("cannot load the manifest of {}", dir.display())]
    Manifest {
        /// The plugin directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: kaged_plugin_protocol::manifest::ManifestError,
    },
    /// The generator could not make a value.
    #[error("the generator failed: {0}")]
    Generator(String),
    /// A temporary directory could not be made.
    #[error("cannot make a temporary config root")]
    Temp(#[source] std::io::Error),
    /// The replay script could not be written as YAML.
    #[error("cannot write the replay script")]
    Replay(#[source] serde_saphyr::SerializeError),
    /// The conformance profile beside the manifest does not check.
    #[error("the conformance profile is invalid")]
    Profile(#[source] crate::profile::InvalidProfile),
    /// `--cage require` without a working bwrap.
    #[error("--cage require, but the cage is unavailable here: {0}")]
    CageUnavailable(String),
}

fn rng(seed: u64) -> TestRunner {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    )
}

/// Fuzz the plugin in `dir`; see the module docs.
pub async fn fuzz(dir: &Path, opts: &FuzzOptions) -> Result<FuzzOutcome, FuzzError> {
    let manifest = Manifest::load_dir(dir).map_err(|source| FuzzError::Manifest {
        dir: dir.to_path_buf(),
        source,
    })?;
    let (cage, cage_reason) = match opts.cage {
        CageMode::Off => (CageKind::Off, Some("--cage off".to_string())),
        mode => match kaged_host_core::cage::availability().await {
            Ok(_) => (CageKind::Bwrap, None),
            Err(reason) if mode == CageMode::Require => {
                return Err(FuzzError::CageUnavailable(reason))
            }
            Err(reason) => (CageKind::Unavailable, Some(reason)),
        },
    };
    let config_root = tempfile::tempdir().map_err(FuzzError::Temp)?;
    let cage_policy = match cage {
        CageKind::Bwrap => {
            crate::runner::RunCage::compile(cage, None, &manifest, dir, config_root.path())
                .summary()
        }
        _ => None,
    };
    let runner = exec::Runner {
        dir: dir.to_path_buf(),
        scale: opts.time_scale,
        cage: opts.cage,
        config_root: config_root.path().to_path_buf(),
        // What the daemon sends first, as `run` sends it.
        first_config: crate::schema_args::daemon_first_config(&manifest),
        applied: Default::default(),
    };
    let params = match crate::profile::load(&dir.join(crate::profile::PROFILE_FILE), &manifest) {
        crate::profile::Loaded::Absent => Default::default(),
        crate::profile::Loaded::Invalid(e) => return Err(FuzzError::Profile(e)),
        crate::profile::Loaded::Valid(p) => p.params_schemas(),
    };
    let strategy = plan::sequences(&manifest, &params, opts.max_ops.max(1));
    let mut gen = rng(opts.seed);
    let start = Instant::now();
    let (mut cases, mut ops) = (0u64, 0u64);
    let mut coverage = Coverage::new(&manifest);
    let mut failure = None;
    while opts.duration.is_none_or(|d| start.elapsed() < d)
        && opts.max_cases.is_none_or(|m| cases < m)
        && opts.max_calls.is_none_or(|m| ops < m)
    {
        let mut tree = strategy
            .new_tree(&mut gen)
            .map_err(|e| FuzzError::Generator(e.to_string()))?;
        let seq = tree.current();
        cases += 1;
        let broken = runner.run(&seq).await;
        let ran = broken.as_ref().map_or(seq.len(), |b| b.step.min(seq.len()));
        ops += ran as u64;
        coverage.add(&seq[..ran]);
        opts.progress.inc(1);
        opts.progress.set_message(format!("{ops} operations"));
        if let Some(broken) = broken {
            opts.progress
                .set_message(format!("sequence {cases} failed: shrinking it"));
            let original_len = seq.len();
            let budget = shrink::Budget {
                runs: opts.shrink_runs,
                deadline: Instant::now() + opts.shrink_budget,
            };
            let judges = judge::Judges::of(&manifest);
            let shrunk = shrink::shrink(&runner, &judges, &mut tree, seq, broken, budget).await;
            failure = Some(Counterexample {
                ops: shrunk.ops,
                broken: shrunk.broken,
                case: cases,
                original_len,
                shrink_runs: shrunk.runs,
                shrink_cut_short: shrunk.cut_short.then_some(opts.shrink_budget),
                first_config: runner.first_config.clone(),
            });
            break;
        }
    }
    let slope = if failure.is_none() && opts.soak_calls > 0 {
        Some(soak::soak(&runner, &manifest, opts.soak_calls, &opts.progress).await)
    } else {
        None
    };
    Ok(FuzzOutcome {
        plugin: (manifest.name.clone(), manifest.version.clone()),
        seed: opts.seed,
        cases,
        ops,
        coverage,
        failure,
        slope,
        elapsed: start.elapsed(),
        cage,
        cage_reason,
        // As the spawns got it, else as compiled.
        cage_policy: runner.applied.get().cloned().or(cage_policy),
    })
}

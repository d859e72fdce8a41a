//! `kaged-conformance fuzz`: property-based testing of any plugin from its
//! manifest (issue 20), as Schemathesis does for HTTP APIs. A seeded
//! generator ([`plan`]) makes sequences of tool calls (arguments from
//! `parameters_schema`, valid and broken), custom methods (params from the
//! conformance profile's `params_schema`, else `{}`), `config.update`
//! (configs from `config_schema`, valid and broken), pings and several of
//! these at once; each sequence runs on a fresh plugin process and every
//! [`Property`] is checked after every operation ([`exec`]). A failing
//! sequence is shrunk (proptest's value trees) to a minimal one, written as
//! a `kaged-host-sim session` script that replays it without the fuzzer.
//! A soak at the end calls one operation many times on one process and
//! reports its memory slope.

mod exec;
mod knobs;
mod plan;
mod properties;
mod report;
mod schema_gen;
mod soak;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kaged_host_sim::time::TimeScale;
use kaged_host_sim::CageMode;
use kaged_plugin_protocol::manifest::Manifest;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

pub use exec::Broken;
pub use plan::Op;
pub use properties::Property;
pub use report::fuzz_report;
pub use soak::Slope;

/// How a fuzz run goes.
#[derive(Debug, Clone)]
pub struct FuzzOptions {
    /// Stop generating after this long.
    pub duration: Duration,
    /// Stop after this many sequences (whichever comes first).
    pub max_cases: Option<u64>,
    /// Stop once this many operations ran (whichever comes first).
    pub max_calls: Option<u64>,
    /// The seed: the same seed makes the same sequences.
    pub seed: u64,
    /// The time scale of every process.
    pub time_scale: TimeScale,
    /// The cage mode.
    pub cage: CageMode,
    /// Operations per sequence, at most.
    pub max_ops: usize,
    /// Calls of the memory soak (0: none).
    pub soak_calls: usize,
    /// The longest shrinking may take (a failure by timeout costs a
    /// timeout per try).
    pub shrink_budget: Duration,
}

impl Default for FuzzOptions {
    fn default() -> FuzzOptions {
        FuzzOptions {
            duration: Duration::from_secs(60),
            max_cases: None,
            max_calls: None,
            seed: 0,
            time_scale: TimeScale::default(),
            cage: CageMode::Auto,
            max_ops: 12,
            soak_calls: 2_000,
            shrink_budget: Duration::from_secs(60),
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
}

impl Counterexample {
    /// The `kaged-host-sim session` script that replays it (JSON, which
    /// is YAML).
    pub fn script(&self) -> String {
        let steps: Vec<serde_json::Value> = self.ops.iter().map(Op::script_step).collect();
        serde_json::to_string_pretty(&serde_json::json!({ "steps": steps })).unwrap_or_default()
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
    /// Operations run in those sequences.
    pub ops: u64,
    /// The first failure, shrunk.
    pub failure: Option<Counterexample>,
    /// The memory soak.
    pub slope: Option<Slope>,
    /// How long it took.
    pub elapsed: Duration,
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
    /// The conformance profile beside the manifest does not check.
    #[error("the conformance profile is invalid")]
    Profile(#[source] crate::profile::InvalidProfile),
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
    let config_root = tempfile::tempdir().map_err(FuzzError::Temp)?;
    let runner = exec::Runner {
        dir: dir.to_path_buf(),
        scale: opts.time_scale,
        cage: opts.cage,
        config_root: config_root.path().to_path_buf(),
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
    let mut failure = None;
    while start.elapsed() < opts.duration
        && opts.max_cases.is_none_or(|m| cases < m)
        && opts.max_calls.is_none_or(|m| ops < m)
    {
        let mut tree = strategy
            .new_tree(&mut gen)
            .map_err(|e| FuzzError::Generator(e.to_string()))?;
        let seq = tree.current();
        cases += 1;
        ops += seq.len() as u64;
        if let Some(broken) = runner.run(&seq).await {
            let original_len = seq.len();
            let deadline = Instant::now() + opts.shrink_budget;
            let (ops, broken) = shrink(&runner, &mut tree, seq, broken, deadline).await;
            failure = Some(Counterexample {
                ops,
                broken,
                case: cases,
                original_len,
            });
            break;
        }
    }
    let slope = if failure.is_none() && opts.soak_calls > 0 {
        soak::soak(&runner, &manifest, opts.soak_calls).await
    } else {
        None
    };
    Ok(FuzzOutcome {
        plugin: (manifest.name.clone(), manifest.version.clone()),
        seed: opts.seed,
        cases,
        ops,
        failure,
        slope,
        elapsed: start.elapsed(),
    })
}

/// The simplest sequence the tree reaches that still breaks the same
/// property (at most 200 runs, until `deadline`).
async fn shrink(
    runner: &exec::Runner,
    tree: &mut impl ValueTree<Value = Vec<Op>>,
    seq: Vec<Op>,
    broken: Broken,
    deadline: Instant,
) -> (Vec<Op>, Broken) {
    let mut best = (seq, broken);
    let mut runs = 0;
    let mut still_fails = true;
    while runs < 200 && Instant::now() < deadline {
        let moved = if still_fails {
            tree.simplify()
        } else {
            tree.complicate()
        };
        if !moved {
            break;
        }
        runs += 1;
        let candidate = tree.current();
        match runner.run(&candidate).await {
            Some(b) if b.property == best.1.property => {
                best = (candidate, b);
                still_fails = true;
            }
            _ => still_fails = false,
        }
    }
    best
}

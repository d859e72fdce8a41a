//! The fail-proof table's types: a [`Proof`] is a fixture and every case
//! it breaks ([`Broken`]: the case, its target, the status it must get and
//! an audit event it must list). `tests/fail_proofs.rs` holds the table
//! and runs each row; [`Proof::prove`] runs the fixture and asserts that
//! exactly those cases fail or warn.

use std::collections::BTreeMap;

use kaged_conformance::catalogue::KindFor;
use kaged_conformance::catalogue::{
    CaseDef, PROTOCOL_BATCH_REJECTED, PROTOCOL_NOT_INITIALIZED, PROTOCOL_PARSE_ERROR,
    SYSTEM_PROJECTS_ACTIVATED, SYSTEM_PROJECTS_DEACTIVATED,
};
use kaged_conformance::report::{render_human, Report, Status};
use kaged_conformance::runner::{judge_dir, judged_offline, NEEDS_THE_PLUGIN};
use kaged_conformance::{run_suite, Options};
use kaged_host_core::time::Timeouts;
use kaged_host_core::CageMode;

use super::{broken, host_fixture, options_at, own_fixture, SCALE};

/// One case a fixture breaks.
#[derive(Debug, Clone, Copy)]
pub struct Broken {
    /// The case.
    pub case: CaseDef,
    /// The method, tool or hook it breaks for (`id[target]`).
    pub on: Option<&'static str>,
    /// The status it must get: fail (MUST) or warn (SHOULD).
    pub status: Status,
    /// An audit event the case must list.
    pub event: Option<&'static str>,
}

/// `case` must fail.
pub const fn fail(case: CaseDef) -> Broken {
    Broken {
        case,
        on: None,
        status: Status::Fail,
        event: None,
    }
}

/// `case` must warn.
pub const fn warn(case: CaseDef) -> Broken {
    Broken {
        status: Status::Warn,
        ..fail(case)
    }
}

impl Broken {
    /// Broken for `target` (a method, tool or hook).
    pub const fn on(self, target: &'static str) -> Broken {
        Broken {
            on: Some(target),
            ..self
        }
    }

    /// Listing the audit event `event`.
    pub const fn audit(self, event: &'static str) -> Broken {
        Broken {
            event: Some(event),
            ..self
        }
    }

    /// The case id in the report.
    pub fn id(&self) -> String {
        match self.on {
            Some(t) => self.case.instance_id(t),
            None => self.case.id.to_string(),
        }
    }
}

/// What the host-sim fixtures' shared helper (`_lib/kproto.py`) gets wrong
/// for every fixture built on it: it ignores malformed JSON and batches,
/// answers calls before `initialized` and answers `projects.*` with
/// -32601 (the system methods are MUST, ADDENDUM §15). It answers
/// `config.update`, which every daemon sends right after `initialized`.
pub const KPROTO_GAPS: &[Broken] = &[
    warn(PROTOCOL_NOT_INITIALIZED),
    fail(PROTOCOL_BATCH_REJECTED),
    fail(PROTOCOL_PARSE_ERROR),
    fail(SYSTEM_PROJECTS_ACTIVATED),
    fail(SYSTEM_PROJECTS_DEACTIVATED),
];

/// Where a fixture's plugin is.
#[derive(Debug, Clone, Copy)]
pub enum Plugin {
    /// `conformance/tests/fixtures/plugins/NAME` (its manifest is named
    /// NAME too).
    Own(&'static str),
    /// `kaged-host-sim/tests/fixtures/plugins/NAME`.
    Host(&'static str),
    /// A directory holding only this `kaged-plugin.yaml`.
    Manifest(&'static str),
}

/// A fixture run: the plugin, the time scale, the gaps it shares.
#[derive(Debug, Clone, Copy)]
pub struct Fixture {
    /// The plugin.
    pub plugin: Plugin,
    /// The run's time scale.
    pub scale: f64,
    /// Cases it breaks by its shared helper ([`KPROTO_GAPS`]).
    pub gaps: &'static [Broken],
    /// Which waits keep their spec budget.
    pub budgets: Budgets,
    /// How it runs: `auto` (the default), `require` (what it proves needs
    /// the cage) or `off` (what it proves is what happens uncaged).
    pub cage: CageMode,
    /// Run again with `--jobs 1` beside the `--jobs 4` run and compare the
    /// reports ([`Fixture::jobs_compared`]).
    pub compare_jobs: bool,
}

/// Which of a run's waits keep their spec budget while the rest is scaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budgets {
    /// Process start (`initialize`), exit (`shutdown`), `ping` and the hooks: the
    /// default ([`super::spec_budgets`], as [`options_at`]); no verdict hangs
    /// on how fast the machine is.
    StartupAndExit,
    /// Process start, `ping` and the hooks: for a fixture that ignores `shutdown`,
    /// whose every exit waits out the (scaled) shutdown ladder.
    StartupAndPing,
    /// Only process start: for a fixture that answers nothing after
    /// `initialize`, whose every wait (ping's too) must elapse.
    StartupOnly,
    /// Process start and exit, `ping` and the hooks scaled: for a fixture
    /// whose ping or hook must miss its budget.
    WaitsScaled,
    /// As [`Budgets::StartupAndExit`], but the first `config.update`
    /// scaled: for a fixture that hangs on it, whose wait must elapse.
    ConfigScaled,
    /// Only exit (`shutdown` and the SIGTERM grace): for a fixture that
    /// never answers `initialize` (that timeout must elapse), so that how
    /// each of its sessions ends (on EOF, or by SIGTERM) never depends on
    /// how busy the machine is.
    ExitOnly,
}

impl Budgets {
    /// `Options::adjust_timeouts` for these budgets.
    pub fn adjust(self) -> Option<fn(Timeouts) -> Timeouts> {
        match self {
            Budgets::StartupAndExit => Some(super::spec_budgets),
            Budgets::ConfigScaled => Some(spec_but_first_config),
            Budgets::WaitsScaled => Some(Timeouts::with_spec_startup_and_exit),
            Budgets::StartupAndPing => Some(spec_startup_and_ping),
            Budgets::StartupOnly => Some(spec_startup),
            Budgets::ExitOnly => Some(spec_exit),
        }
    }
}

/// `shutdown` and the SIGTERM grace at their spec budgets, everything else
/// (`initialize` and the first `config.update` too) scaled.
fn spec_exit(t: Timeouts) -> Timeouts {
    Timeouts {
        initialize: t.initialize,
        first_config: t.first_config,
        ..t.with_spec_startup_and_exit()
    }
}

/// [`super::spec_budgets`] with the first `config.update` scaled.
fn spec_but_first_config(t: Timeouts) -> Timeouts {
    Timeouts {
        first_config: t.first_config,
        ..super::spec_budgets(t)
    }
}

/// `initialize`, `ping` and the hooks at their spec budgets, everything
/// else scaled.
fn spec_startup_and_ping(t: Timeouts) -> Timeouts {
    let spec = super::spec_budgets(t);
    Timeouts {
        ping: spec.ping,
        hook: spec.hook,
        ..spec_startup(t)
    }
}

/// `initialize` and the first `config.update` at their spec budgets,
/// everything else scaled.
fn spec_startup(t: Timeouts) -> Timeouts {
    let spec = t.with_spec_startup_and_exit();
    Timeouts {
        initialize: spec.initialize,
        first_config: spec.first_config,
        ..t
    }
}

/// One of the suite's own fixtures.
pub const fn own(name: &'static str) -> Fixture {
    Fixture {
        plugin: Plugin::Own(name),
        scale: SCALE,
        gaps: &[],
        budgets: Budgets::StartupAndExit,
        cage: CageMode::Auto,
        compare_jobs: false,
    }
}

/// One of the host-sim's fixtures.
pub const fn host(name: &'static str) -> Fixture {
    Fixture {
        plugin: Plugin::Host(name),
        ..own(name)
    }
}

/// A plugin directory with only this manifest.
pub const fn manifest(yaml: &'static str) -> Fixture {
    Fixture {
        plugin: Plugin::Manifest(yaml),
        ..own(yaml)
    }
}

impl Fixture {
    /// Run at time scale `scale`.
    pub const fn scale(self, scale: f64) -> Fixture {
        Fixture { scale, ..self }
    }

    /// Keep only these waits at their spec budget ([`Budgets`]).
    pub const fn budgets(self, budgets: Budgets) -> Fixture {
        Fixture { budgets, ..self }
    }

    /// Run with `--cage require` (see [`Proof::runnable`]).
    pub const fn caged(self) -> Fixture {
        Fixture {
            cage: CageMode::Require,
            ..self
        }
    }

    /// Run with `--cage off`: what it proves is what an uncaged host sees.
    pub const fn uncaged(self) -> Fixture {
        Fixture {
            cage: CageMode::Off,
            ..self
        }
    }

    /// Also run with `--jobs 1` and compare the reports: verdicts never
    /// depend on how many lanes work at once. A run is mostly the plugin's
    /// CPU (a spawn per session), so the comparison is made for the shapes
    /// where lanes could matter (budgets waited out, hangs, crashes, shared
    /// lanes, the shutdown barrier, root links, lanes' own config roots),
    /// not for every row.
    pub const fn jobs_compared(self) -> Fixture {
        Fixture {
            compare_jobs: true,
            ..self
        }
    }

    /// Built on `_lib/kproto.py`: it also breaks [`KPROTO_GAPS`].
    pub const fn kproto(self) -> Fixture {
        Fixture {
            gaps: KPROTO_GAPS,
            ..self
        }
    }
}

/// A row of the fail-proof table.
#[derive(Debug, Clone, Copy)]
pub struct Proof {
    /// The test that runs it.
    pub test: &'static str,
    /// The fixture.
    pub fixture: Fixture,
    /// The cases it breaks, besides its gaps.
    pub broken: &'static [Broken],
}

impl Proof {
    /// Every case the fixture breaks: its gaps, then its own.
    pub fn expected(&self) -> impl Iterator<Item = &Broken> {
        self.fixture.gaps.iter().chain(self.broken)
    }

    /// Whether the proof can run here: a caged proof needs bwrap working
    /// (under `CI=true` its absence is a failure; elsewhere the proof is
    /// skipped, saying why on stderr).
    pub fn runnable(&self) -> bool {
        if !matches!(self.fixture.cage, CageMode::Require) {
            return true;
        }
        kaged_host_core::testing::cage_available_for_blocking(self.test)
    }

    /// Run the fixture; assert that exactly the expected cases fail or
    /// warn, each listing its audit event (and that an own fixture's
    /// report names it); the report, for further checks.
    pub fn prove(&self) -> Report {
        let tmp = tempfile::tempdir().expect("tempdir");
        let stored = tmp.path().join("stored-run");
        let options = Options {
            adjust_timeouts: self.fixture.budgets.adjust(),
            cage: self.fixture.cage,
            transcript_dir: Some(stored.clone()),
            jobs: std::num::NonZeroUsize::new(4),
            ..options_at(self.fixture.scale)
        };
        let dir = match self.fixture.plugin {
            Plugin::Own(name) => own_fixture(name),
            Plugin::Host(name) => host_fixture(name),
            Plugin::Manifest(yaml) => {
                std::fs::write(tmp.path().join("kaged-plugin.yaml"), yaml).expect("write");
                tmp.path().to_path_buf()
            }
        };
        if !self.fixture.compare_jobs {
            let r = run_suite(&dir, &options).expect("the suite runs");
            judge_agrees(&r, &stored);
            return self.verdicts_hold(r);
        }
        // Verdicts never depend on --jobs: one lane at a time gives the
        // same report (timing aside). The two runs go at once (each its own
        // plugin processes).
        let one = Options {
            jobs: std::num::NonZeroUsize::new(1),
            transcript_dir: None,
            ..options.clone()
        };
        let (r, sequential) = std::thread::scope(|s| {
            let sequential = s.spawn(|| run_suite(&dir, &one));
            let r = run_suite(&dir, &options).expect("the suite runs");
            let sequential = sequential
                .join()
                .expect("the --jobs 1 run does not panic")
                .expect("the suite runs with --jobs 1");
            (r, sequential)
        });
        judge_agrees(&r, &stored);
        let (a, b) = (timing_aside(&sequential), timing_aside(&r));
        let mut case = "";
        let mut differ: Vec<String> = Vec::new();
        for (x, y) in a.lines().zip(b.lines()) {
            if let Some(id) = x.trim().strip_prefix("\"id\": ") {
                case = id;
            }
            if x != y {
                differ.push(format!("{case}:\n  --jobs 1: {x}\n  --jobs 4: {y}"));
            }
        }
        assert!(
            differ.is_empty() && a.lines().count() == b.lines().count(),
            "--jobs 1 and --jobs 4 disagree:\n{}",
            differ.join("\n")
        );
        self.verdicts_hold(r)
    }

    /// Exactly the expected cases of `r` fail or warn, each with a failure
    /// kind, what ended it and its audit event; `r`, for further checks.
    fn verdicts_hold(&self, r: Report) -> Report {
        if let Plugin::Own(name) = self.fixture.plugin {
            assert_eq!(r.plugin.name, name);
        }
        let want: BTreeMap<String, Status> = self.expected().map(|b| (b.id(), b.status)).collect();
        assert_eq!(broken(&r), want, "\n{}", render_human(&r, false, true));
        for b in self.expected() {
            // Every broken case says why (a failure kind) and what ended it.
            let c = r.case(&b.id());
            assert!(
                c.kind
                    .is_some_and(|k| k.def().for_status == KindFor::Failure),
                "{} has no failure kind: {:?}",
                b.id(),
                c.kind
            );
            assert!(
                c.ended_by.is_some(),
                "{} says nothing of what ended it",
                b.id()
            );
            if let Some(event) = b.event {
                let c = r.case(&b.id());
                assert!(
                    c.audit_events.iter().any(|e| e == event),
                    "{} lacks audit event {event}: {:?}",
                    b.id(),
                    c.audit_events
                );
            }
        }
        r
    }
}

/// The report's JSON with what measures time masked: every `duration_ms`
/// and every duration written in a detail (`3 ms`, `1.5s`, `250µs`), what
/// is new in every run (temporary directories, process ids, which calls a
/// busy plugin dropped), the order of
/// a case's audit events, and a passing `ping_during_slow_call`'s count.
pub fn timing_aside(r: &Report) -> String {
    let durations = regex::Regex::new(r"\d+(\.\d+)? ?(ms|µs|ns|s)\b").expect("a valid pattern");
    // Each run has its own temporary directories and processes.
    let per_run = regex::Regex::new(
        r"kaged-conformance-config-\w+|/tmp/\.tmp\w+|process\(es\) \[[\d, ]+\]|group \d+|\(ids \[[\d, ]+\]\)|\d+ unanswered",
    )
    .expect("a valid pattern");
    let mut v: serde_json::Value = serde_json::from_str(&r.to_json()).expect("report JSON");
    if let Some(cases) = v["cases"].as_array_mut() {
        for c in cases {
            c["duration_ms"] = serde_json::Value::Null;
            // Events of concurrent work (a storage request the plugin does
            // not wait for, the method's answer) come in either order.
            if let Some(events) = c["audit_events"].as_array_mut() {
                events.sort_by_key(|e| e.as_str().map(str::to_string));
            }
            // A passing ping_during_slow_call says how many calls were still
            // in flight when ping was answered, and what came last (a stray
            // the plugin sends unprompted may come before or after): a
            // measurement.
            if c["id"] == "protocol.ping_during_slow_call" && c["status"] == "pass" {
                c["detail"] = "<measured>".into();
                c["ended_by"] = "<measured>".into();
            }
            if let Some(d) = c["detail"].as_str() {
                let d = durations.replace_all(d, "<duration>");
                c["detail"] = per_run.replace_all(&d, "<per-run>").into_owned().into();
            }
        }
    }
    serde_json::to_string_pretty(&v).expect("JSON")
}

/// `kaged-conformance judge` on the run's stored transcripts reaches the
/// run's verdict (status, kind, finding, audit events) on every case it
/// judges, and judges every observation case the run reported. The
/// finding is the detail without the root's fix: which case is the root
/// can differ, since the judge cannot judge the cases that need the plugin.
pub fn judge_agrees(run: &Report, stored: &std::path::Path) {
    let judged = judge_dir(stored, &Options::default()).expect("the stored run is judged");
    assert_eq!(judged.plugin, run.plugin);
    assert_eq!(judged.cage, run.cage);
    let finding = |d: &str| {
        d.split("\nfix: add this line under")
            .next()
            .unwrap_or(d)
            .to_string()
    };
    let mut agreed = std::collections::BTreeSet::new();
    for j in &judged.cases {
        if j.status == Status::Skip && j.detail == NEEDS_THE_PLUGIN {
            continue;
        }
        let Some(c) = run.cases.iter().find(|c| c.id == j.id) else {
            panic!("judge reported {} which the run did not", j.id);
        };
        assert_eq!(
            (j.status, j.kind, finding(&j.detail), &j.audit_events),
            (c.status, c.kind, finding(&c.detail), &c.audit_events),
            "judge disagrees with the run on {}",
            j.id
        );
        agreed.insert(j.id.as_str());
    }
    let offline: Vec<&str> = judged_offline().iter().map(|c| c.id).collect();
    let observed: std::collections::BTreeSet<&str> = run
        .cases
        .iter()
        .filter(|c| {
            offline
                .iter()
                .any(|o| c.id == *o || c.id.starts_with(&format!("{o}[")))
        })
        .map(|c| c.id.as_str())
        .collect();
    let missing: Vec<&&str> = observed.difference(&agreed).collect();
    assert!(
        missing.is_empty(),
        "the run observed {missing:?}, which the judge did not judge"
    );
}

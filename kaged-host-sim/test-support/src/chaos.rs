//! The chaos suite (issue 19): a hostile plugin, driven by a seed that
//! picks and mixes misbehaviours from one catalogue ([`Misbehaviour`]),
//! run against the host; after each seed the host's invariants are
//! checked ([`run_seed`]): it never hangs past its timeouts plus a margin,
//! its RSS stays under a bound, the plugin ends dead and audited with a
//! reason, no process of the plugin survives, the audit log parses.
//!
//! The plugin is `tests/fixtures/chaos` (stdlib Python): it reads the plan
//! (`chaos.json`, written beside a copy of it) and interprets each step by
//! the catalogue's name. `cargo test -p kaged-host-sim --test chaos` runs a
//! fixed seed set; `cargo bench -p kaged-host-sim --bench chaos -- --seeds
//! N` runs many and prints the largest RSS and the slowest seed.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use kaged_host_core::audit::{AuditEvent, AuditLog, AuditRecord};
use kaged_host_core::transcript::Transcript;
use kaged_host_core::{CageMode, HostConfig, HostSim, TimeScale, Timeouts};
use kaged_host_storage::BrokerHandler;

/// When a step happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Before the plugin reads `initialize`.
    BeforeInitialize,
    /// Right after `initialized`, unprompted.
    AfterInitialized,
    /// While answering a `chaos.go` call.
    OnCall,
}

impl When {
    /// The name the plugin reads.
    pub const fn as_str(self) -> &'static str {
        match self {
            When::BeforeInitialize => "before_initialize",
            When::AfterInitialized => "after_initialized",
            When::OnCall => "on_call",
        }
    }
}

macro_rules! misbehaviours {
    ($($(#[doc = $doc:literal])* $variant:ident => $name:literal, contained_uncaged: $uncaged:literal, judged_by: $judged:expr;)*) => {
        /// One misbehaviour of the catalogue; its name is the function the
        /// chaos plugin runs.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Misbehaviour {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Misbehaviour {
            /// Every misbehaviour, in catalogue order.
            pub const ALL: &'static [Misbehaviour] = &[$(Misbehaviour::$variant,)*];

            /// The plugin's name for it.
            pub const fn as_str(self) -> &'static str {
                match self { $(Misbehaviour::$variant => $name,)* }
            }

            /// Whether process groups alone contain what it leaves behind
            /// (a `setsid` grandchild leaves the group: only the cage's pid
            /// namespace contains it).
            pub const fn contained_uncaged(self) -> bool {
                match self { $(Misbehaviour::$variant => $uncaged,)* }
            }

            /// The conformance case a plugin doing it (at that time, on
            /// every occasion) must fail (or warn, for a SHOULD case);
            /// `None` for what the protocol allows (partial lines, stderr
            /// floods, storms the host bounds) or what the cage contains.
            pub const fn judged_by(self) -> Option<(When, &'static str)> {
                match self { $(Misbehaviour::$variant => $judged,)* }
            }
        }
    };
}

misbehaviours! {
    /// A valid line written in three writes, with pauses.
    PartialLines => "partial_lines", contained_uncaged: true, judged_by: None;
    /// A valid line split across writes at random points.
    SplitWrites => "split_writes", contained_uncaged: true, judged_by: None;
    /// A 5 MiB line.
    GiantLine => "giant_line", contained_uncaged: true, judged_by: Some((When::OnCall, "protocol.no_oversize_lines"));
    /// 64 MiB without a newline, then silence.
    EndlessLine => "endless_line", contained_uncaged: true, judged_by: Some((When::OnCall, "protocol.no_oversize_lines"));
    /// A line that is not UTF-8.
    InvalidUtf8 => "invalid_utf8", contained_uncaged: true, judged_by: Some((When::AfterInitialized, "handshake.no_stdout_noise"));
    /// JSON nested up to 100 000 levels deep.
    DeepJson => "deep_json", contained_uncaged: true, judged_by: Some((When::AfterInitialized, "handshake.no_stdout_noise"));
    /// An answer with the wrong id.
    WrongId => "wrong_id", contained_uncaged: true, judged_by: Some((When::OnCall, "protocol.no_unknown_response_ids"));
    /// An answer to a request never sent.
    ResponseToNothing => "response_to_nothing", contained_uncaged: true, judged_by: Some((When::AfterInitialized, "protocol.no_unknown_response_ids"));
    /// Up to 1000 notifications at once.
    NotificationStorm => "notification_storm", contained_uncaged: true, judged_by: Some((When::AfterInitialized, "notifications.no_flood"));
    /// Up to 300 storage requests at once.
    StorageStorm => "storage_storm", contained_uncaged: true, judged_by: None;
    /// Closes its stdout and lives on.
    CloseStdout => "close_stdout", contained_uncaged: true, judged_by: Some((When::AfterInitialized, "config.update_accepted"));
    /// Stops reading its stdin and lives on.
    IgnoreStdin => "ignore_stdin", contained_uncaged: true, judged_by: Some((When::AfterInitialized, "config.update_accepted"));
    /// SIGSTOPs itself.
    SigstopSelf => "sigstop_self", contained_uncaged: true, judged_by: Some((When::AfterInitialized, "config.update_accepted"));
    /// Forks a child that sleeps forever.
    ForkChild => "fork_child", contained_uncaged: true, judged_by: Some((When::AfterInitialized, "lifecycle.no_orphans"));
    /// A `setsid` grandchild that sleeps forever, outside the process group.
    SetsidGrandchild => "setsid_grandchild", contained_uncaged: false, judged_by: None;
    /// Exits at once, with a random code.
    ExitNow => "exit_now", contained_uncaged: true, judged_by: Some((When::OnCall, "methods.answers[chaos.go]"));
    /// Sleeps past every timeout.
    SleepPastTimeouts => "sleep_past_timeouts", contained_uncaged: true, judged_by: Some((When::OnCall, "methods.answers[chaos.go]"));
    /// A line that is not JSON.
    StdoutNoise => "stdout_noise", contained_uncaged: true, judged_by: Some((When::OnCall, "handshake.no_stdout_noise"));
    /// 2000 stderr lines.
    StderrFlood => "stderr_flood", contained_uncaged: true, judged_by: None;
}

/// A seed's plan: the steps the plugin takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The seed.
    pub seed: u64,
    /// (misbehaviour, when), in order.
    pub steps: Vec<(Misbehaviour, When)>,
}

/// SplitMix64: a tiny deterministic generator (the plan must be the same
/// for a seed on every machine; nothing here needs more).
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

impl Plan {
    /// The plan of `seed`: one to four steps; uncaged, only misbehaviours
    /// process groups contain.
    pub fn from_seed(seed: u64, caged: bool) -> Plan {
        let mut rng = Mix(seed);
        let pool: Vec<Misbehaviour> = Misbehaviour::ALL
            .iter()
            .copied()
            .filter(|m| caged || m.contained_uncaged())
            .collect();
        // Weighted 1:2:3: anything before `initialize` ends the plugin at
        // once, so most steps come later.
        let whens = [
            When::BeforeInitialize,
            When::AfterInitialized,
            When::AfterInitialized,
            When::OnCall,
            When::OnCall,
            When::OnCall,
        ];
        let n = 1 + rng.below(4);
        let steps = (0..n)
            .map(|_| (pool[rng.below(pool.len())], whens[rng.below(whens.len())]))
            .collect();
        Plan { seed, steps }
    }

    /// `chaos.json`.
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "seed": self.seed,
            "steps": self.steps.iter().map(|(m, w)| json!({"what": m.as_str(), "when": w.as_str()})).collect::<Vec<_>>(),
        })
    }

    /// `giant_line@on_call, exit_now@before_initialize`.
    pub fn describe(&self) -> String {
        self.steps
            .iter()
            .map(|(m, w)| format!("{}@{}", m.as_str(), w.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// How the chaos runs.
#[derive(Debug, Clone)]
pub struct ChaosOptions {
    /// `tests/fixtures/chaos`.
    pub fixture: PathBuf,
    /// The time scale of every seed.
    pub scale: TimeScale,
    /// Caged (`Require`) or not (`Off`).
    pub cage: CageMode,
    /// The host RSS a seed may leave the process at, in KiB.
    pub max_rss_kib: u64,
}

/// The host's RSS bound after any seed, in KiB.
pub const MAX_RSS_KIB: u64 = 256 * 1024;

/// The time scale of every seed of the suite.
pub const SUITE_SCALE: f64 = 0.05;

impl ChaosOptions {
    /// The suite's options in `cage` (the test and the bench): this crate's
    /// chaos fixture, [`SUITE_SCALE`], [`MAX_RSS_KIB`].
    pub fn suite(cage: CageMode) -> ChaosOptions {
        ChaosOptions {
            fixture: Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/chaos"),
            scale: TimeScale::new(SUITE_SCALE).unwrap_or_default(),
            cage,
            max_rss_kib: MAX_RSS_KIB,
        }
    }
}

/// What one seed did, and what broke.
#[derive(Debug, Clone)]
pub struct SeedOutcome {
    /// The plan.
    pub plan: Plan,
    /// From launch to the last check.
    pub elapsed: Duration,
    /// The host's RSS after the seed, in KiB.
    pub host_rss_kib: u64,
    /// The audit events of the seed.
    pub events: Vec<&'static str>,
    /// Broken invariants (empty: the seed passed).
    pub failures: Vec<String>,
}

impl SeedOutcome {
    /// `seed N: <plan> in <time>, host RSS <n> KiB, ok` (or the failures).
    pub fn line(&self) -> String {
        format!(
            "seed {}: {} in {:?}, host RSS {} KiB, {}",
            self.plan.seed,
            self.plan.describe(),
            self.elapsed,
            self.host_rss_kib,
            if self.failures.is_empty() {
                "ok".to_string()
            } else {
                format!("FAILED: {}", self.failures.join("; "))
            }
        )
    }
}

/// The longest a seed may take: every wait of the host's ladder (handshake,
/// two calls, health checks, shutdown) plus a margin for a busy machine.
pub fn seed_limit(scale: TimeScale) -> Duration {
    let t = Timeouts::defaults(scale);
    t.initialize
        + t.request * 2
        + t.ping * 4
        + t.shutdown
        + t.sigterm_grace * 2
        + Duration::from_secs(20)
}

/// Run one seed; see the module docs for the invariants.
pub async fn run_seed(opts: &ChaosOptions, seed: u64) -> SeedOutcome {
    let plan = Plan::from_seed(seed, opts.cage != CageMode::Off);
    let start = Instant::now();
    let mut failures = Vec::new();
    let stage = match stage(&opts.fixture, &plan) {
        Ok(s) => s,
        Err(e) => {
            failures.push(format!("cannot stage the plugin: {e}"));
            return outcome(plan, start, Vec::new(), failures);
        }
    };
    let audit = AuditLog::memory();
    let handler = match BrokerHandler::temp() {
        Ok(h) => h,
        Err(e) => {
            failures.push(format!("no storage broker: {e}"));
            return outcome(plan, start, Vec::new(), failures);
        }
    };
    let host = HostSim::new(
        HostConfig::default()
            .with_time_scale(opts.scale)
            .with_audit(audit.clone())
            .with_transcript(Transcript::discard())
            .with_storage(std::sync::Arc::new(handler))
            .with_cage(opts.cage),
    );
    let limit = seed_limit(opts.scale);
    let drive = async {
        // A launch that fails is judged by the checks below like any end.
        if let Ok(session) = host.launch(stage.path()).await {
            let session = std::sync::Arc::new(session);
            let _health = session.start_health_checks();
            for _ in 0..2 {
                let _ = session.call("chaos.go", None, None).await;
            }
            session.shutdown().await;
        }
    };
    if tokio::time::timeout(limit, drive).await.is_err() {
        failures.push(format!("the host hung: the seed took over {limit:?}"));
    }
    let records = audit.events();
    check_audit(&records, &mut failures);
    // The host sets KAGED_PLUGIN_DIR to the resolved directory: the marker
    // must name it the same way, or no survivor could ever match.
    let dir = std::fs::canonicalize(stage.path()).unwrap_or_else(|_| stage.path().to_path_buf());
    let marker = format!("KAGED_PLUGIN_DIR={}", dir.display());
    let survivors = wait_gone(&marker, Duration::from_secs(5)).await;
    if !survivors.is_empty() {
        failures.push(format!("processes of the plugin survived: {survivors:?}"));
        for pid in survivors {
            if let Some(p) = rustix::process::Pid::from_raw(pid as i32) {
                let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
            }
        }
    }
    let mut out = outcome(
        plan,
        start,
        records.iter().map(|r| r.event.as_str()).collect(),
        failures,
    );
    if out.host_rss_kib > opts.max_rss_kib {
        out.failures.push(format!(
            "host RSS {} KiB over the bound of {} KiB",
            out.host_rss_kib, opts.max_rss_kib
        ));
    }
    out
}

fn outcome(
    plan: Plan,
    start: Instant,
    events: Vec<&'static str>,
    failures: Vec<String>,
) -> SeedOutcome {
    SeedOutcome {
        plan,
        elapsed: start.elapsed(),
        host_rss_kib: self_rss_kib(),
        events,
        failures,
    }
}

/// A copy of the chaos plugin (`fixture`) with `plan` beside it, as
/// `chaos.json`.
pub fn stage(fixture: &Path, plan: &Plan) -> std::io::Result<tempfile::TempDir> {
    let dir = tempfile::Builder::new().prefix("kaged-chaos-").tempdir()?;
    for entry in std::fs::read_dir(fixture)? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            std::fs::copy(entry.path(), dir.path().join(entry.file_name()))?;
        }
    }
    std::fs::write(dir.path().join("chaos.json"), plan.to_json().to_string())?;
    Ok(dir)
}

/// The plugin ended, and said how: one ending event, and every record reads
/// back from its JSON line.
fn check_audit(records: &[AuditRecord], failures: &mut Vec<String>) {
    use AuditEvent as E;
    let ended = records.iter().any(|r| {
        matches!(
            r.event,
            E::Exited | E::Stopped | E::Killed | E::Crashed | E::Failed
        )
    });
    if !ended {
        failures.push("the plugin's end was not audited".into());
    }
    for r in records {
        let line = r.to_json();
        match AuditRecord::from_json(&line) {
            Ok(back) if back.event == r.event => {}
            Ok(back) => failures.push(format!("{} read back as {}", r.event, back.event)),
            Err(e) => failures.push(format!("audit line {line} does not parse: {e}")),
        }
    }
}

/// The processes whose environment holds `marker`, once those still
/// ending have ended (at most `limit`).
async fn wait_gone(marker: &str, limit: Duration) -> Vec<u32> {
    let deadline = Instant::now() + limit;
    loop {
        let left = marked(marker);
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn marked(marker: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|var| var == marker.as_bytes()))
        })
        .collect()
}

/// This process's resident set, in KiB (0 when unreadable).
pub fn self_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// The one-line command that replays `seed`.
pub fn replay_command(seed: u64, caged: bool) -> String {
    format!(
        "KAGED_CHAOS_SEEDS={seed} KAGED_CHAOS_CAGE={} cargo test -p kaged-host-sim --test chaos -- --nocapture",
        if caged { "require" } else { "off" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_always_makes_the_same_plan() {
        assert_eq!(Plan::from_seed(7, true), Plan::from_seed(7, true));
        assert_ne!(Plan::from_seed(7, true), Plan::from_seed(8, true));
        for seed in 0..200 {
            let p = Plan::from_seed(seed, false);
            assert!((1..=4).contains(&p.steps.len()));
            assert!(
                p.steps.iter().all(|(m, _)| m.contained_uncaged()),
                "{}",
                p.describe()
            );
        }
    }

    #[tokio::test]
    async fn survivors_are_found_by_their_marker_and_an_unaudited_end_is_a_failure() {
        let marker = format!("KAGED_CHAOS_TEST_MARK={}", std::process::id());
        let (k, v) = marker.split_once('=').expect("k=v");
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .env(k, v)
            .spawn()
            .expect("spawn sleep");
        assert_eq!(marked(&marker), [child.id()]);
        child.kill().expect("kill");
        child.wait().expect("reap");
        assert!(wait_gone(&marker, Duration::from_secs(5)).await.is_empty());

        let log = AuditLog::memory();
        log.emit(AuditEvent::Spawned, "chaos", json!({"pid": 1}));
        let mut failures = Vec::new();
        check_audit(&log.events(), &mut failures);
        assert_eq!(failures, ["the plugin's end was not audited"]);
        assert!(self_rss_kib() > 0);
    }

    #[test]
    fn every_misbehaviour_is_a_function_of_the_chaos_plugin() {
        let script = include_str!("../../tests/fixtures/chaos/plugin.py");
        for m in Misbehaviour::ALL {
            assert!(
                script.contains(&format!("\ndef {}(call_id):", m.as_str())),
                "{}",
                m.as_str()
            );
        }
        for w in [When::BeforeInitialize, When::AfterInitialized, When::OnCall] {
            assert!(
                script.contains(&format!("\"{}\"", w.as_str())),
                "{}",
                w.as_str()
            );
        }
    }
}

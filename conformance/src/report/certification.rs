//! [`Certification`]: the outcome of a run judged under a certifier's
//! policy (`run --policy FILE`): certified or not, why, and which verdicts
//! rest on files from the plugin's own repository. The policy itself and
//! how it judges are `crate::policy`'s; this is what the report carries.

use serde::Serialize;

/// Certified or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Every requirement of the policy holds.
    Certified,
    /// At least one does not: see [`Certification::reasons`].
    NotCertified,
}

impl Outcome {
    /// `CERTIFIED` or `NOT CERTIFIED`.
    pub const fn shout(self) -> &'static str {
        match self {
            Outcome::Certified => "CERTIFIED",
            Outcome::NotCertified => "NOT CERTIFIED",
        }
    }
}

/// The policy a run was judged under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PolicyRef {
    /// Its `name` (else its file name).
    pub name: String,
    /// Its format version (`policy: 1`).
    pub version: u32,
    /// The SHA-256 of the policy file's bytes, lowercase hex.
    pub sha256: String,
}

/// Verdicts that rest on a file the plugin's repository provides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PluginInput {
    /// What the file is: `profile` (`kaged-conformance.yaml`: the params
    /// and results of examples) or `baseline` (`--known-failing`).
    pub what: String,
    /// The file.
    pub file: String,
    /// The cases whose verdict it decided.
    pub cases: Vec<String>,
}

/// The outcome under a policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Certification {
    /// Certified or not.
    pub outcome: Outcome,
    /// The policy.
    pub policy: PolicyRef,
    /// Why not (empty when certified), each a sentence naming the cases.
    pub reasons: Vec<String>,
    /// Verdicts resting on the plugin's own files.
    pub plugin_inputs: Vec<PluginInput>,
}

impl Certification {
    /// The report's first line: `CERTIFIED under policy P (sha256 …)` or
    /// `NOT CERTIFIED under policy P (sha256 …): the first reason (and N
    /// more)`, then what rests on the plugin's files.
    pub fn line(&self) -> String {
        let short = self.policy.sha256.get(..12).unwrap_or(&self.policy.sha256);
        let mut line = format!(
            "{} under policy {} v{} (sha256 {short})",
            self.outcome.shout(),
            self.policy.name,
            self.policy.version
        );
        match self.reasons.as_slice() {
            [] => {}
            [one] => line.push_str(&format!(": {one}")),
            [first, rest @ ..] => {
                line.push_str(&format!(": {first} (and {} more reason(s))", rest.len()))
            }
        }
        let inputs: Vec<String> = self
            .plugin_inputs
            .iter()
            .map(|i| {
                format!(
                    "{} case(s) on the plugin's {} {}",
                    i.cases.len(),
                    i.what,
                    i.file
                )
            })
            .collect();
        if !inputs.is_empty() {
            line.push_str(&format!(
                "; verdicts resting on the plugin's own files: {}",
                inputs.join(", ")
            ));
        }
        line
    }
}

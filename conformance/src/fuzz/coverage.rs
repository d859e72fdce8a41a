//! Which properties the run's operations exercised: a property no
//! operation exercised is not "held", it is skipped with the reason (the
//! plugin declares no config schema, no hooks, no compactor role; or no
//! generated operation happened to reach it).

use std::collections::HashMap;

use kaged_plugin_protocol::manifest::Manifest;
use kaged_plugin_protocol::{HookName, PluginRole};

use super::plan::Op;
use super::Property;

/// Properties every operation exercises: it may crash, hang or break the
/// wire whatever it is.
const EVERY_OP: [Property; 3] = [
    Property::NoCrash,
    Property::AnswersInTime,
    Property::CleanWire,
];

/// The properties `op` exercises (those the memory soak judges excluded).
pub fn exercised_by(op: &Op) -> Vec<Property> {
    let own = match op {
        Op::Together(ops) => return ops.iter().flat_map(exercised_by).collect(),
        Op::Ping | Op::Method { .. } => None,
        Op::Tool { valid: true, .. } => Some(Property::ValidArgsAccepted),
        Op::Tool { valid: false, .. } => Some(Property::InvalidArgsRejected),
        Op::Config { valid: true, .. } => Some(Property::ValidConfigAccepted),
        Op::Config { valid: false, .. } => Some(Property::InvalidConfigRejected),
        Op::Hook { params, .. } if params["role"] == "compactor" => {
            Some(Property::CompactorContract)
        }
        Op::Hook { .. } => Some(Property::HookAnswers),
    };
    EVERY_OP.into_iter().chain(own).collect()
}

/// How many operations exercised each property, and why the manifest
/// leaves some with nothing to exercise them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Coverage {
    counts: HashMap<Property, u64>,
    not_applicable: HashMap<Property, String>,
}

impl Coverage {
    /// Nothing exercised yet; the properties `manifest` gives nothing to
    /// exercise, with the reason.
    pub fn new(manifest: &Manifest) -> Coverage {
        let mut not_applicable = HashMap::new();
        if manifest.tools.is_empty() {
            for p in [Property::ValidArgsAccepted, Property::InvalidArgsRejected] {
                not_applicable.insert(p, "the plugin declares no tools".to_string());
            }
        }
        if manifest.config_schema.is_none() {
            for p in [
                Property::ValidConfigAccepted,
                Property::InvalidConfigRejected,
            ] {
                not_applicable.insert(
                    p,
                    "the plugin declares no config_schema (no config to generate)".to_string(),
                );
            }
        }
        let hooks: Vec<HookName> = manifest
            .hooks
            .iter()
            .filter_map(|h| HookName::parse(h))
            .collect();
        if hooks.is_empty() {
            not_applicable.insert(
                Property::HookAnswers,
                "the plugin subscribes to no hooks".to_string(),
            );
        }
        let compactor = manifest.effective_roles().contains(&PluginRole::Compactor);
        let why_not_compactor = match (compactor, hooks.contains(&HookName::PreCompact)) {
            (false, _) => Some("the plugin does not claim the compactor role"),
            (true, false) => {
                Some("the plugin claims the compactor role but does not subscribe to pre_compact")
            }
            (true, true) => None,
        };
        if let Some(why) = why_not_compactor {
            not_applicable.insert(Property::CompactorContract, why.to_string());
        }
        Coverage {
            counts: HashMap::new(),
            not_applicable,
        }
    }

    /// Count the operations of `ops` (those that ran).
    pub fn add(&mut self, ops: &[Op]) {
        for p in ops.iter().flat_map(exercised_by) {
            *self.counts.entry(p).or_default() += 1;
        }
    }

    /// How many operations exercised `p` (an operation sent at once with
    /// others counts on its own).
    pub fn count(&self, p: Property) -> u64 {
        self.counts.get(&p).copied().unwrap_or(0)
    }

    /// Why no operation exercised `p`, when none did: the manifest's
    /// reason, or that no generated operation reached it in `cases`
    /// sequence(s).
    pub fn unexercised(&self, p: Property, cases: u64) -> Option<String> {
        if self.count(p) > 0 {
            return None;
        }
        Some(match self.not_applicable.get(&p) {
            Some(why) => format!("not applicable: {why}"),
            None => format!(
                "no operation of the {cases} sequence(s) exercised it (a longer run may: --cases, --calls)"
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(extra: &str) -> Manifest {
        Manifest::from_yaml_str(&format!(
            "name: c\nversion: 1.0.0\nkaged_api: 1\ndescription: d\ncommand: [./c]\ncapabilities: []\n{extra}"
        ))
        .expect("a manifest")
    }

    #[test]
    fn what_a_manifest_does_not_declare_is_not_applicable_with_its_reason() {
        let c = Coverage::new(&manifest(""));
        for (p, why) in [
            (Property::ValidArgsAccepted, "no tools"),
            (Property::InvalidArgsRejected, "no tools"),
            (Property::ValidConfigAccepted, "no config_schema"),
            (Property::InvalidConfigRejected, "no config_schema"),
            (Property::HookAnswers, "no hooks"),
            (Property::CompactorContract, "compactor role"),
        ] {
            let reason = c.unexercised(p, 5).unwrap_or_default();
            assert!(
                reason.starts_with("not applicable: ") && reason.contains(why),
                "{p:?}: {reason}"
            );
        }
        let reason = c.unexercised(Property::NoCrash, 5).unwrap_or_default();
        assert!(
            reason.contains("no operation of the 5 sequence(s)"),
            "{reason}"
        );
    }

    #[test]
    fn a_compactor_without_pre_compact_is_told_so() {
        let c = Coverage::new(&manifest("roles: [compactor]\nhooks: [post_compact]\n"));
        let reason = c
            .unexercised(Property::CompactorContract, 1)
            .unwrap_or_default();
        assert!(
            reason.contains("does not subscribe to pre_compact"),
            "{reason}"
        );
        assert_eq!(
            c.unexercised(Property::HookAnswers, 1)
                .map(|r| r.starts_with("not applicable")),
            Some(false)
        );
    }

    #[test]
    fn each_operation_counts_for_what_it_exercises() {
        let mut c = Coverage::new(&manifest(""));
        c.add(&[
            Op::Ping,
            Op::Together(vec![
                Op::Config {
                    config: serde_json::json!({}),
                    valid: false,
                },
                Op::Ping,
            ]),
        ]);
        assert_eq!(c.count(Property::NoCrash), 3);
        assert_eq!(c.count(Property::InvalidConfigRejected), 1);
        assert_eq!(c.count(Property::ValidConfigAccepted), 0);
        assert_eq!(c.unexercised(Property::InvalidConfigRejected, 1), None);
        assert!(c.unexercised(Property::ValidConfigAccepted, 1).is_some());
    }
}

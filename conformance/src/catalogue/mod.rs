//! The case catalogue: every conformance case as a typed constant (its
//! stable id, level, spec section and the sentence it checks) and
//! [`CATALOGUE`], the table of them, area by area. The table is the single
//! source for `kaged-conformance list` and `docs/conformance.md`. Each
//! area file writes its cases once, in a `cases!` block, which makes the
//! constants and the area's part of the table.
//!
//! The runner names a case only through its constant
//! ([`METHODS_ANSWERS`], …), so a mistyped case is a compile error; the
//! string ids are stable public names (reports, `--only`, baselines).
//!
//! The constants are grouped by area and all re-exported here: the start
//! (`manifest.*`, `launch.*`, `cage.*`, `handshake.*`), the wire `protocol.*`, the
//! calls a host makes (`methods.*`, `hooks.*`, `compaction.*`, `config.*`)
//! and the plugin's behaviour over the run (`storage.*`,
//! `notifications.*`, `lifecycle.*`); the conformance profile's
//! (`profile.*`, `methods.examples`, `methods.invalid_params`) are in
//! `profile`.

/// An area's cases: each `NAME = CaseDef { .. };` becomes the public
/// constant `NAME`, and the area's `CASES` lists them in the order written
/// (its part of [`CATALOGUE`]), so a case is written in one place.
macro_rules! cases {
    ($( $(#[$doc:meta])* $name:ident = $def:expr; )*) => {
        $( $(#[$doc])* pub const $name: CaseDef = $def; )*

        /// This area's cases, in catalogue order.
        pub(super) const CASES: &[CaseDef] = &[$($name),*];
    };
}

mod behaviour;
mod calls;
mod case;
mod kind;
mod profile;
mod protocol;
mod startup;
pub use case::{CaseDef, Lane, Level, Per, TargetKind};
pub use kind::{Kind, KindDef, KindFor, KINDS};

pub use behaviour::*;
pub use calls::*;
pub use profile::*;
pub use protocol::*;
pub use startup::*;

/// The areas, in catalogue order.
const AREAS: &[&[CaseDef]] = &[
    startup::CASES,
    profile::CASES,
    protocol::CASES,
    calls::CASES,
    behaviour::CASES,
];

/// Every case, area by area (the order of `kaged-conformance list` and
/// `docs/conformance.md`; the suite reports in the order it runs them,
/// `runner::cases::CHECKS`).
pub const CATALOGUE: &[CaseDef] = &concat::<{ count(AREAS) }>(AREAS);

/// How many cases `areas` hold.
const fn count(areas: &[&[CaseDef]]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < areas.len() {
        n += areas[i].len();
        i += 1;
    }
    n
}

/// The cases of `areas` in order, as one array of `N` (their count).
const fn concat<const N: usize>(areas: &[&[CaseDef]]) -> [CaseDef; N] {
    let mut out = [MANIFEST_VALID; N];
    let (mut i, mut n) = (0, 0);
    while i < areas.len() {
        let mut j = 0;
        while j < areas[i].len() {
            out[n] = areas[i][j];
            n += 1;
            j += 1;
        }
        i += 1;
    }
    out
}

/// The catalogue entry with this id (a parameterised id `x[name]` finds `x`).
pub fn find(id: &str) -> Option<&'static CaseDef> {
    let base = id.split('[').next().unwrap_or(id);
    CATALOGUE.iter().find(|c| c.id == base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_dotted_and_sectioned() {
        let mut ids: Vec<&str> = CATALOGUE.iter().map(|c| c.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), CATALOGUE.len());
        for c in CATALOGUE {
            let (group, name) = c.id.split_once('.').expect("dotted id");
            assert!(
                !group.is_empty() && !name.is_empty() && !name.contains('.'),
                "{}",
                c.id
            );
            assert!(!c.spec.is_empty() && !c.sentence.is_empty() && !c.title.is_empty());
        }
        assert_eq!(
            find("methods.answers[presets.list]").map(|c| c.id),
            Some("methods.answers")
        );
        assert_eq!(
            METHODS_ANSWERS.instance_id("presets.list"),
            "methods.answers[presets.list]"
        );
    }

    #[test]
    fn each_row_has_a_failure_kind_one_barrier_and_lanes_shared_by_two() {
        for c in CATALOGUE {
            assert_eq!(c.kind.def().for_status, KindFor::Failure, "{}", c.id);
        }
        let barriers: Vec<&str> = CATALOGUE
            .iter()
            .filter(|c| c.lane == Lane::Barrier)
            .map(|c| c.id)
            .collect();
        assert_eq!(barriers, ["lifecycle.shutdown_exits_zero"]);
        for c in CATALOGUE {
            if let Lane::Shared(name) = c.lane {
                let n = CATALOGUE
                    .iter()
                    .filter(|d| d.lane == Lane::Shared(name))
                    .count();
                assert!(n >= 2, "lane {name:?} is shared by {} alone", c.id);
            }
        }
        assert!(CATALOGUE.iter().any(|c| c.start_gate));
    }
}

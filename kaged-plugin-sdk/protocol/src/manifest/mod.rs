//! The `kaged-plugin.yaml` manifest model, its YAML loader and its
//! deterministic YAML rendering ([`Manifest::to_yaml`]).
//!
//! Validation of the rules (name formats, capability grammar, knobs, ...)
//! lives in `kaged-host-sim`'s validator; this module only parses. Its
//! [`parse_yaml`] gives the located tree the validator works on.

mod emit;
mod model;
mod parse;
mod yaml;

pub use emit::value_to_yaml;
pub use model::*;
pub use parse::*;
pub use yaml::*;

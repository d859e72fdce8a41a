//! The `kaged-plugin.yaml` manifest model and its YAML loader.
//!
//! Validation of the rules (name formats, capability grammar, knobs, ...)
//! lives in `kaged-host-sim`'s validator; this module only parses. Its
//! [`parse_yaml`] gives the located tree the validator works on.

mod model;
mod parse;
mod yaml;

pub use model::*;
pub use parse::*;
pub use yaml::*;

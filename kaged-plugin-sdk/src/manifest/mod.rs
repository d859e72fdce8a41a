//! The `kaged-plugin.yaml` manifest model and its YAML loader.
//!
//! Validation of the rules (name formats, capability grammar, knobs, ...)
//! lives in `kaged-host-sim`'s validator; this module only parses.

mod model;
mod parse;

pub use model::*;
pub use parse::*;

//! The `kaged-plugin.yaml` manifest model, its YAML loader and its
//! deterministic YAML rendering ([`Manifest::to_yaml`]).
//!
//! Validation of the rules (name formats, capability grammar, knobs, ...)
//! lives in `kaged-host-sim`'s validator; this module only parses. Its
//! [`parse_yaml`] gives the located tree the validator works on.

mod defaults;
mod emit;
mod model;
mod parse;
mod yaml;

pub use defaults::apply_defaults;
pub use emit::value_to_yaml;
pub use model::{
    CapabilityEntry, Knob, Manifest, ToolDecl, DEFAULT_HEALTH_INTERVAL_SEC,
    DEFAULT_HOOK_TIMEOUT_SEC, DEFAULT_SHUTDOWN_TIMEOUT_SEC,
};
pub(crate) use parse::path_segments;
pub use parse::{
    locate, render_path, ManifestError, PathSegment, MANIFEST_FILE, PRINT_MANIFEST_FLAG,
};
pub use yaml::{from_yaml_str, parse_yaml, Pos, YamlNode, YamlSyntaxError, YamlValue};

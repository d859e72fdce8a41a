//! [`NewOptions`]: what `cargo kaged new` is asked to make.

use std::path::PathBuf;

/// What `cargo kaged new` makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOptions {
    /// The plugin's name: the package, the binary and the manifest's name.
    pub name: String,
    /// Subscribe to the session hooks.
    pub hooks: bool,
    /// Add a tool.
    pub tool: bool,
    /// Use brokered storage.
    pub storage: bool,
    /// Path dependencies on this checkout of the kit instead of crates.io.
    pub kit_path: Option<PathBuf>,
}

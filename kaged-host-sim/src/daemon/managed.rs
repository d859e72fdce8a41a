//! One supervised plugin of the daemon with its daemon-side config
//! ([`Managed`]).

use serde_json::{Map, Value};

use super::error::DaemonError;
use kaged_host_core::Supervisor;
use kaged_plugin_protocol::manifest::Manifest;

/// One supervised plugin and its daemon-side config.
#[derive(Debug)]
pub(crate) struct Managed {
    pub(crate) sup: Supervisor,
    pub(crate) version: String,
    /// The manifest read at start-up (`None` when it cannot be read: the
    /// supervisor then leaves the plugin `disabled`).
    pub(crate) manifest: Option<Manifest>,
    /// The project-side config written by daemon-level knob writes (sent
    /// with `config.update`); empty until the first write.
    pub(crate) config: tokio::sync::Mutex<Map<String, Value>>,
    /// The config last sent to a process (its pid), held across a send so
    /// that two contexts' configs never interleave with their calls.
    pub(crate) in_force: tokio::sync::Mutex<Option<(u32, Map<String, Value>)>>,
    /// Why it may not start at all (its grant inside another plugin's
    /// writable grant: `daemon::overlap`).
    pub(crate) refused: Option<String>,
}

impl Managed {
    /// The manifest read at start-up, or why there is none.
    pub(crate) fn manifest(&self) -> Result<&Manifest, DaemonError> {
        self.manifest
            .as_ref()
            .ok_or_else(|| DaemonError::NoManifest {
                name: self.sup.name().to_string(),
            })
    }
}

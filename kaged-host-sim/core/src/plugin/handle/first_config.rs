//! The daemon's first call after `initialized`: `config.update` with the
//! merged config (ADDENDUM §12, §15: always sent, `{}` when empty, "so a
//! plugin can rely on it"; §16: by every tool that plays the daemon).
//!
//! A plugin that refuses it keeps running on its previous (default)
//! config, as in the daemon; the refusal is logged and kept on the
//! handle ([`PluginHandle::first_config`]) for whoever judges it.

use kaged_plugin_protocol::error_chain::chain;
use kaged_plugin_protocol::manifest::Manifest;
use kaged_plugin_protocol::methods;
use serde_json::{Map, Value};

use super::{CallError, PluginHandle};

/// What the host sends with `config.update` right after `initialized`.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum FirstConfig {
    /// The defaults of `config_schema` and `system_config_schema`
    /// ([`Manifest::config_defaults`]): what the daemon sends when the
    /// operator set nothing.
    #[default]
    Defaults,
    /// The operator's config, over the defaults
    /// ([`Manifest::config_over_defaults`]).
    Given(Map<String, Value>),
    /// Nothing is sent (a session script that turns it off, a test of the
    /// bare handshake). No daemon does this.
    Off,
}

impl FirstConfig {
    /// The config sent to the plugin of `manifest` (`None`: [`FirstConfig::Off`]).
    ///
    /// ```
    /// use kaged_host_core::FirstConfig;
    /// use kaged_plugin_protocol::manifest::Manifest;
    /// let m = Manifest::from_yaml_str(concat!(
    ///     "name: x\nversion: 0.1.0\nkaged_api: 1\ndescription: d\ncommand: [./x]\ncapabilities: []\n",
    ///     "config_schema: {type: object, properties: {greeting: {type: string, default: hi}}}\n",
    /// )).unwrap();
    /// let given = serde_json::json!({"token": "t"}).as_object().cloned().unwrap();
    /// assert_eq!(FirstConfig::Given(given).for_manifest(&m).map(serde_json::Value::Object),
    ///            Some(serde_json::json!({"greeting": "hi", "token": "t"})));
    /// assert_eq!(FirstConfig::Off.for_manifest(&m), None);
    /// ```
    pub fn for_manifest(&self, manifest: &Manifest) -> Option<Map<String, Value>> {
        match self {
            FirstConfig::Defaults => Some(manifest.config_defaults()),
            FirstConfig::Given(given) => Some(manifest.config_over_defaults(given)),
            FirstConfig::Off => None,
        }
    }
}

/// The first `config.update` as it went.
#[derive(Debug, Clone, PartialEq)]
pub struct FirstConfigSent {
    /// The config sent.
    pub config: Map<String, Value>,
    /// Why the plugin did not accept it (its error, a timeout, its exit);
    /// `None`: answered with a result.
    pub refused: Option<String>,
}

impl PluginHandle {
    /// Send the first config as `first` says (nothing for
    /// [`FirstConfig::Off`]) and keep how it went. `launch` and `connect`
    /// do this after the handshake; a lenient session calls it after its
    /// own [`PluginHandle::handshake`].
    pub async fn send_first_config(&self, first: &FirstConfig) -> Option<FirstConfigSent> {
        let config = first.for_manifest(self.manifest())?;
        let answer = self
            .call_within(
                methods::CONFIG_UPDATE,
                Some(Value::Object(config.clone())),
                None,
                self.timeouts().first_config,
            )
            .await;
        let refused = answer.err().map(|e: CallError| {
            let why = chain(&e);
            tracing::warn!(plugin = %self.name(), error = %why, "the plugin refused its config after its handshake");
            why
        });
        let sent = FirstConfigSent { config, refused };
        *self.first_config.lock().unwrap_or_else(|p| p.into_inner()) = Some(sent.clone());
        Some(sent)
    }

    /// The first `config.update` and how it went; `None` before one was
    /// sent (or when none is).
    pub fn first_config(&self) -> Option<FirstConfigSent> {
        self.first_config
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

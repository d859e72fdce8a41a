//! The handlers, declared with `#[kaged_plugin]`: `pre_compact` (compactor
//! or observer), `post_compact` (observer) and the config.

use std::sync::RwLock;

use kaged_plugin_sdk::protocol::{CompactParams, ObserverResult, PluginRole};
use kaged_plugin_sdk::{kaged_plugin, log, PluginError};
use serde_json::Value;

use crate::config::Config;
use crate::summary::{compact, retain_hints};

/// The summarizing compactor.
#[derive(Debug, Default)]
pub struct SummarizingCompactor {
    config: RwLock<Config>,
}

impl SummarizingCompactor {
    /// The current config.
    pub fn config(&self) -> Config {
        self.config
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

#[kaged_plugin(
    name = "summarizing-compactor",
    roles(observer, compactor),
    manifest_base = "kaged-plugin.base.yaml"
)]
impl SummarizingCompactor {
    /// As the designated compactor: a `CompactorResult` replacing the
    /// compacted messages by one summary. As an observer: nothing to add.
    #[hook]
    async fn pre_compact(&self, p: CompactParams) -> Result<Value, PluginError> {
        if p.role != PluginRole::Compactor {
            return Ok(Value::Null);
        }
        let result = compact(&p, &self.config());
        log::info!(
            superseded = result.superseded.len(),
            kept = result.messages.len(),
            "compacted"
        );
        Ok(serde_json::to_value(result)?)
    }

    /// Ask the host to retain what the compacted user messages asked for.
    #[hook]
    async fn post_compact(&self, p: CompactParams) -> Result<Option<ObserverResult>, PluginError> {
        let hints = retain_hints(&p);
        Ok((!hints.is_empty()).then_some(ObserverResult {
            retain: Some(hints),
            inject: None,
        }))
    }

    /// Take a new config; `-32004` naming the field when out of range.
    #[config]
    async fn configure(&self, config: Config) -> Result<(), PluginError> {
        config
            .check()
            .map_err(|e| PluginError::config_invalid(format!("invalid config: {e}")))?;
        *self.config.write().unwrap_or_else(|p| p.into_inner()) = config;
        Ok(())
    }
}

//! System methods every plugin implements (`ping`, `shutdown`,
//! `config.update`, `projects.*`) and the host's `system.rate_limited`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The answer to `ping` (and to `shutdown` sent as a request).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StatusOk {
    /// Always `"ok"`.
    pub status: String,
}

impl StatusOk {
    /// `{"status": "ok"}`.
    pub fn ok() -> StatusOk {
        StatusOk {
            status: "ok".into(),
        }
    }
}

/// `config.update` params: the merged config object itself.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct ConfigUpdateParams(pub Map<String, Value>);

/// `projects.activated` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProjectActivatedParams {
    /// The project slug.
    pub project: String,
    /// The plugin's config for that project.
    #[serde(default)]
    pub config: Map<String, Value>,
}

/// `projects.deactivated` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProjectDeactivatedParams {
    /// The project slug.
    pub project: String,
}

/// `system.rate_limited` params (ADDENDUM §8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RateLimitedParams {
    /// The limit that was exceeded (100).
    pub limit_per_sec: u32,
    /// How many notifications were dropped in the window.
    pub dropped: u64,
}

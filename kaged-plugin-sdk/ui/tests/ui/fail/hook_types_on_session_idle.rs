//! A `#[hook]` on `on_session_idle` with another hook's params type and an answer
//! `on_session_idle` does not give: both are errors naming `on_session_idle`'s own types.

use kaged_plugin_sdk::protocol::{SessionStartParams, SessionStartResult};
use kaged_plugin_sdk::{kaged_plugin, PluginError};

struct P;

#[kaged_plugin(name = "p")]
impl P {
    #[hook]
    async fn on_session_idle(&self, _p: SessionStartParams) -> Result<Option<SessionStartResult>, PluginError> {
        Ok(None)
    }
}

fn main() {}

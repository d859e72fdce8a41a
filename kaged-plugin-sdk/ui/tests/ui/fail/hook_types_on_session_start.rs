//! A `#[hook]` on `on_session_start` with another hook's params type and an answer
//! `on_session_start` does not give: both are errors naming `on_session_start`'s own types.

use kaged_plugin_sdk::protocol::CompactParams;
use kaged_plugin_sdk::{kaged_plugin, PluginError};

struct P;

#[kaged_plugin(name = "p")]
impl P {
    #[hook]
    async fn on_session_start(&self, _p: CompactParams) -> Result<Option<String>, PluginError> {
        Ok(None)
    }
}

fn main() {}

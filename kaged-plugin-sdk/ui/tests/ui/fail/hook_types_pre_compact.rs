//! A `#[hook]` on `pre_compact` with another hook's params type and an answer
//! `pre_compact` does not give: both are errors naming `pre_compact`'s own types.

use kaged_plugin_sdk::protocol::SessionIdleParams;
use kaged_plugin_sdk::{kaged_plugin, PluginError};

struct P;

#[kaged_plugin(name = "p")]
impl P {
    #[hook]
    async fn pre_compact(&self, _p: SessionIdleParams) -> Result<String, PluginError> {
        Ok(String::new())
    }
}

fn main() {}

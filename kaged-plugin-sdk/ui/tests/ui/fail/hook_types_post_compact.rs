//! A `#[hook]` on `post_compact` with another hook's params type and an answer
//! `post_compact` does not give: both are errors naming `post_compact`'s own types.

use kaged_plugin_sdk::protocol::{CompactorResult, SessionStartParams};
use kaged_plugin_sdk::{kaged_plugin, PluginError};

struct P;

#[kaged_plugin(name = "p")]
impl P {
    #[hook]
    async fn post_compact(&self, _p: SessionStartParams) -> Result<CompactorResult, PluginError> {
        Ok(CompactorResult { role: kaged_plugin_sdk::protocol::PluginRole::Compactor, messages: vec![], superseded: vec![], summary: None })
    }
}

fn main() {}

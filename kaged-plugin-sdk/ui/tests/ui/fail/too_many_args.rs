use kaged_plugin_sdk::{kaged_plugin, PluginError};

struct P;

use kaged_plugin_sdk::Call;

#[kaged_plugin(name = "p")]
impl P {
    #[method("p.list")]
    async fn list(
        &self,
        _p: serde_json::Value,
        _call: Call,
        _extra: u32,
    ) -> Result<(), PluginError> {
        Ok(())
    }
}

fn main() {}

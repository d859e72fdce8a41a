use kaged_plugin_sdk::{kaged_plugin, PluginError};

struct P;

#[kaged_plugin(name = "p")]
impl P {
    #[hook]
    async fn on_start(&self) -> Result<(), PluginError> {
        Ok(())
    }

    #[hook(pre_compaction)]
    async fn compact(&self) -> Result<(), PluginError> {
        Ok(())
    }
}

fn main() {}

use kaged_plugin_sdk::{kaged_plugin, PluginError};

struct P;

#[kaged_plugin(name = "p", roles(observer, compactor))]
impl P {
    #[hook]
    async fn post_compact(&self) -> Result<(), PluginError> {
        Ok(())
    }
}

fn main() {}

use kaged_plugin_sdk::{kaged_plugin, PluginError};

struct P;

#[kaged_plugin(name = "p")]
impl P {
    /// Shout.
    #[tool]
    async fn shout(&self) -> Result<(), PluginError> {
        Ok(())
    }
}

fn main() {}

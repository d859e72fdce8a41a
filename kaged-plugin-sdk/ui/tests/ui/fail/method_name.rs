use kaged_plugin_sdk::{kaged_plugin, PluginError};

struct P;

#[kaged_plugin(name = "p")]
impl P {
    #[method("presets")]
    async fn one_segment(&self) -> Result<(), PluginError> {
        Ok(())
    }

    #[method("Presets.List")]
    async fn upper_case(&self) -> Result<(), PluginError> {
        Ok(())
    }
}

fn main() {}

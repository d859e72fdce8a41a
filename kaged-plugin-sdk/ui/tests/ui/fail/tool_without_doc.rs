use kaged_plugin_sdk::{kaged_plugin, PluginError};

struct P;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Args {}

#[kaged_plugin(name = "p")]
impl P {
    #[tool]
    async fn shout(&self, _a: Args) -> Result<(), PluginError> {
        Ok(())
    }
}

fn main() {}

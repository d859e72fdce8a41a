use kaged_plugin_sdk::{kaged_plugin, PluginError};

struct P;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Args {}

#[kaged_plugin(name = "p")]
impl P {
    #[method("p.list")]
    async fn list(&self) -> Result<(), PluginError> {
        Ok(())
    }

    #[method("p.list")]
    async fn list_again(&self) -> Result<(), PluginError> {
        Ok(())
    }

    /// Find.
    #[tool]
    async fn find(&self, _a: Args) -> Result<(), PluginError> {
        Ok(())
    }

    /// Find again.
    #[tool(name = "find")]
    async fn find_again(&self, _a: Args) -> Result<(), PluginError> {
        Ok(())
    }

    #[hook]
    async fn pre_compact(&self) -> Result<(), PluginError> {
        Ok(())
    }

    #[hook(pre_compact)]
    async fn compact_again(&self) -> Result<(), PluginError> {
        Ok(())
    }
}

fn main() {}

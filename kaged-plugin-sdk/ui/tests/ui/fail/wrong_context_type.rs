use kaged_plugin_sdk::{kaged_plugin, Call, Host, PluginError};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Config {}

struct P;

#[kaged_plugin(name = "p")]
impl P {
    #[method("p.list")]
    async fn list(&self, _p: serde_json::Value, _host: Host) -> Result<(), PluginError> {
        Ok(())
    }

    #[config]
    async fn configure(&self, _c: Config, _call: Call) -> Result<(), PluginError> {
        Ok(())
    }
}

fn main() {}

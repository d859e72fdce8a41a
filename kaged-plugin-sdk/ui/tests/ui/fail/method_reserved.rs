use kaged_plugin_sdk::{kaged_plugin, PluginError};

struct P;

#[kaged_plugin(name = "p")]
impl P {
    #[method("kaged.secret")]
    async fn kaged(&self) -> Result<(), PluginError> {
        Ok(())
    }

    #[method("system.reboot")]
    async fn system(&self) -> Result<(), PluginError> {
        Ok(())
    }
}

fn main() {}

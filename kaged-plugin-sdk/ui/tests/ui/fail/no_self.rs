use kaged_plugin_sdk::{kaged_plugin, PluginError};

struct P;

#[kaged_plugin(name = "p")]
impl P {
    #[method("p.list")]
    async fn list() -> Result<(), PluginError> {
        Ok(())
    }

    #[method("p.take")]
    async fn take(self) -> Result<(), PluginError> {
        Ok(())
    }

    #[method("p.mutate")]
    async fn mutate(&mut self) -> Result<(), PluginError> {
        Ok(())
    }
}

fn main() {}

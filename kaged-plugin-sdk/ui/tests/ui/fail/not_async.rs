use kaged_plugin_sdk::{kaged_plugin, PluginError};

struct P;

#[kaged_plugin(name = "p")]
impl P {
    #[method("p.list")]
    fn list(&self) -> Result<(), PluginError> {
        Ok(())
    }
}

fn main() {}

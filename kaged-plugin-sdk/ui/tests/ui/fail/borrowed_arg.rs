use kaged_plugin_sdk::{kaged_plugin, PluginError};

struct P;

#[kaged_plugin(name = "p")]
impl P {
    #[method("p.say")]
    async fn say(&self, _text: &str) -> Result<(), PluginError> {
        Ok(())
    }
}

fn main() {}

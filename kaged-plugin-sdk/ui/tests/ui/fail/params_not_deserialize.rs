use kaged_plugin_sdk::{kaged_plugin, PluginError};

struct P;

struct Params {
    text: String,
}

#[kaged_plugin(name = "p")]
impl P {
    #[method("p.say")]
    async fn say(&self, p: Params) -> Result<String, PluginError> {
        Ok(p.text)
    }
}

fn main() {}

use kaged_plugin_sdk::{kaged_plugin, PluginError};

struct P;

#[derive(serde::Deserialize)]
struct Args {
    text: String,
}

#[kaged_plugin(name = "p")]
impl P {
    /// Shout.
    #[tool]
    async fn shout(&self, a: Args) -> Result<String, PluginError> {
        Ok(a.text)
    }
}

fn main() {}

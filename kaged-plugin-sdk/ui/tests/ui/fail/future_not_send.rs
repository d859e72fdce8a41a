use std::rc::Rc;

use kaged_plugin_sdk::{kaged_plugin, PluginError};

struct P;

#[kaged_plugin(name = "p")]
impl P {
    #[method("p.count")]
    async fn count(&self) -> Result<usize, PluginError> {
        let shared = Rc::new(1);
        tokio::task::yield_now().await;
        Ok(*shared)
    }
}

fn main() {}

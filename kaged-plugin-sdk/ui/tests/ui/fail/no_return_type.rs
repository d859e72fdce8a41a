use kaged_plugin_sdk::kaged_plugin;

struct P;

#[kaged_plugin(name = "p")]
impl P {
    #[method("p.list")]
    async fn list(&self) {}
}

fn main() {}
